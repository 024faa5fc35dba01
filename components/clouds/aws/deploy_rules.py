"""What the AWS deploy identity (the role that runs `pulumi up`) must be allowed, per resource type
the program registers or reads, as data with sources; and the policy document made from it.

The bootstrap attaches exactly `deploy_policy` to the deploy role (tools/operations/bootstrap.py),
docs/runbooks/eks.md lists it (generated from this module), and tests/clouds/test_aws_deploy_rules.py
plays every AWS resource of the prod-aws plan through the policy with the IAM evaluator of the
tests, including the actions its inputs call for on other resources:

- Actions per API call: the Service Authorization Reference of each service
  (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonrds.html,
  list_awskeymanagementservice.html, list_awssecretsmanager.html, list_identityandaccessmanagement.html,
  list_amazonelastickubernetesservice.html, list_amazonec2.html); the provider reads a resource back
  after every create and update and on refresh (Describe/Get/List), tags it (default tags), and
  deletes it on replacement.
- `iam:PassRole` on the role an association or node group hands to EKS: "The IAM principal that is
  creating the association must have iam:PassRole"
  (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-association.html); a managed node
  group's node role likewise (https://docs.aws.amazon.com/eks/latest/userguide/create-node-role.html).
- RDS on a customer managed key: the caller needs `kms:CreateGrant` and `kms:DescribeKey` on the key
  (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Overview.Encryption.Keys.html, "Authorizing
  use of a customer managed key").
- Secrets Manager under a customer managed key acts "on behalf of the user who is creating or
  changing the secret value": `kms:GenerateDataKey` and `kms:Decrypt` on the key
  (https://docs.aws.amazon.com/secretsmanager/latest/userguide/security-encryption.html, "Permissions
  for the KMS key").

Keys are used only where they carry the provider's default tag `managed-by: tenancy` (every key the
program creates does: components/clouds/aws/cloud.py), so the deploy role cannot use any other key
in the account (the state key has its own grant, tools/operations/bootstrap.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.model.core.labels import MANAGED_BY_VALUE
from components.model.settings.pools import EksPool
from components.model.settings.stack import StackSettings

# Input property -> (actions on the resource that input names, what that resource is).
Uses = Mapping[str, tuple[tuple[str, ...], str]]

PASS_ROLE = ("iam:PassRole",)
RDS_KEY = ("kms:CreateGrant", "kms:DescribeKey")
SECRETS_KEY = ("kms:GenerateDataKey", "kms:Decrypt")
_TAGS = ("List", "Tag", "Untag")


@dataclass(frozen=True)
class DeployRule:
    """The actions one resource type calls on itself, and those its inputs call on other resources."""

    actions: tuple[str, ...]
    source: str
    uses: Uses = field(default_factory=dict)


_REF = "https://docs.aws.amazon.com/service-authorization/latest/reference/"
RULES: dict[str, DeployRule] = {
    "aws:kms/key:Key": DeployRule(
        (
            "kms:CreateKey",
            "kms:DescribeKey",
            "kms:GetKeyPolicy",
            "kms:PutKeyPolicy",
            "kms:GetKeyRotationStatus",
            "kms:EnableKeyRotation",
            "kms:UpdateKeyDescription",
            "kms:ListResourceTags",
            "kms:TagResource",
            "kms:UntagResource",
            "kms:ScheduleKeyDeletion",
        ),
        _REF + "list_awskeymanagementservice.html",
    ),
    "aws:kms/alias:Alias": DeployRule(
        ("kms:CreateAlias", "kms:UpdateAlias", "kms:DeleteAlias", "kms:ListAliases"),
        # CreateAlias is authorized on the alias and on the key it points at.
        "https://docs.aws.amazon.com/kms/latest/developerguide/alias-access.html",
    ),
    "aws:iam/role:Role": DeployRule(
        (
            "iam:CreateRole",
            "iam:GetRole",
            "iam:UpdateRole",
            "iam:UpdateRoleDescription",
            "iam:UpdateAssumeRolePolicy",
            "iam:TagRole",
            "iam:UntagRole",
            "iam:ListRolePolicies",
            "iam:ListAttachedRolePolicies",
            "iam:ListInstanceProfilesForRole",
            "iam:DeleteRole",
        ),
        _REF + "list_identityandaccessmanagement.html",
    ),
    "aws:iam/rolePolicy:RolePolicy": DeployRule(
        ("iam:PutRolePolicy", "iam:GetRolePolicy", "iam:DeleteRolePolicy"),
        _REF + "list_identityandaccessmanagement.html",
    ),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": DeployRule(
        (
            "eks:CreatePodIdentityAssociation",
            "eks:DescribePodIdentityAssociation",
            "eks:UpdatePodIdentityAssociation",
            "eks:DeletePodIdentityAssociation",
            "eks:TagResource",
            "eks:UntagResource",
            "iam:GetRole",
        ),
        "https://docs.aws.amazon.com/eks/latest/userguide/pod-id-association.html",
        {"roleArn": (PASS_ROLE, "role")},
    ),
    "aws:eks/nodeGroup:NodeGroup": DeployRule(
        (
            "eks:CreateNodegroup",
            "eks:DescribeNodegroup",
            "eks:UpdateNodegroupConfig",
            "eks:UpdateNodegroupVersion",
            "eks:DeleteNodegroup",
            "eks:TagResource",
            "eks:UntagResource",
            "ec2:DescribeSubnets",
            "ec2:DescribeLaunchTemplateVersions",
            "ec2:RunInstances",
            "ec2:CreateTags",
            "iam:GetRole",
        ),
        "https://docs.aws.amazon.com/eks/latest/userguide/create-managed-node-group.html",
        {"nodeRoleArn": (PASS_ROLE, "role")},
    ),
    "aws:ec2/launchTemplate:LaunchTemplate": DeployRule(
        (
            "ec2:CreateLaunchTemplate",
            "ec2:CreateLaunchTemplateVersion",
            "ec2:ModifyLaunchTemplate",
            "ec2:DescribeLaunchTemplates",
            "ec2:DescribeLaunchTemplateVersions",
            "ec2:DeleteLaunchTemplate",
            "ec2:CreateTags",
            "ec2:DeleteTags",
        ),
        _REF + "list_amazonec2.html",
    ),
    "aws:ec2/securityGroup:SecurityGroup": DeployRule(
        (
            "ec2:CreateSecurityGroup",
            "ec2:DescribeSecurityGroups",
            "ec2:DescribeSecurityGroupRules",
            "ec2:AuthorizeSecurityGroupIngress",
            "ec2:RevokeSecurityGroupIngress",
            # The provider removes the default allow-all egress rule (`egress=[]`).
            "ec2:RevokeSecurityGroupEgress",
            "ec2:AuthorizeSecurityGroupEgress",
            "ec2:DeleteSecurityGroup",
            "ec2:CreateTags",
            "ec2:DeleteTags",
            "ec2:DescribeNetworkInterfaces",
        ),
        _REF + "list_amazonec2.html",
    ),
    "aws:rds/instance:Instance": DeployRule(
        (
            "rds:CreateDBInstance",
            "rds:DescribeDBInstances",
            "rds:ModifyDBInstance",
            "rds:DeleteDBInstance",
            "rds:AddTagsToResource",
            "rds:RemoveTagsFromResource",
            "rds:ListTagsForResource",
            "rds:DescribeDBSubnetGroups",
        ),
        _REF + "list_amazonrds.html",
        {"kmsKeyId": (RDS_KEY, "key")},
    ),
    "aws:rds/parameterGroup:ParameterGroup": DeployRule(
        (
            "rds:CreateDBParameterGroup",
            "rds:DescribeDBParameterGroups",
            "rds:DescribeDBParameters",
            "rds:ModifyDBParameterGroup",
            "rds:ResetDBParameterGroup",
            "rds:DeleteDBParameterGroup",
            "rds:AddTagsToResource",
            "rds:RemoveTagsFromResource",
            "rds:ListTagsForResource",
        ),
        _REF + "list_amazonrds.html",
    ),
    "aws:secretsmanager/secret:Secret": DeployRule(
        (
            "secretsmanager:CreateSecret",
            "secretsmanager:DescribeSecret",
            "secretsmanager:GetResourcePolicy",
            "secretsmanager:UpdateSecret",
            "secretsmanager:DeleteSecret",
            "secretsmanager:TagResource",
            "secretsmanager:UntagResource",
        ),
        _REF + "list_awssecretsmanager.html",
        {"kmsKeyId": (SECRETS_KEY, "key")},
    ),
    "aws:secretsmanager/secretVersion:SecretVersion": DeployRule(
        (
            "secretsmanager:PutSecretValue",
            "secretsmanager:GetSecretValue",
            "secretsmanager:DescribeSecret",
            "secretsmanager:UpdateSecretVersionStage",
        ),
        "https://docs.aws.amazon.com/secretsmanager/latest/userguide/security-encryption.html",
    ),
}

# Reads (`.get`): one Describe/Get each (issue 44: prerequisites are read before anything is made).
READS: dict[str, tuple[str, ...]] = {
    "aws:rds/subnetGroup:SubnetGroup": ("rds:DescribeDBSubnetGroups",),
    "aws:iam/role:Role": ("iam:GetRole",),
    "aws:secretsmanager/secretVersion:SecretVersion": ("secretsmanager:GetSecretValue",),
}


def rule_for(type_token: str) -> DeployRule | None:
    """The rule of an `aws:` resource type (None: no rule, a gap the tests report)."""
    return RULES.get(type_token)


def resource_actions() -> tuple[str, ...]:
    """Every action the deploy role calls on the resources it manages or reads, sorted."""
    actions = {a for rule in RULES.values() for a in rule.actions} | {a for reads in READS.values() for a in reads}
    return tuple(sorted(actions))


def passed_roles(settings: StackSettings) -> list[str]:
    """The role ARNs the stack hands to EKS: its managed node groups' node roles, the edge
    controllers' roles, and the tenant roles it creates (`t-<tenant>-<env>-...`, data.py)."""
    roles = {pool.node_role_arn for pool in settings.node_pools.values() if isinstance(pool, EksPool)}
    edge = settings.edge
    roles |= {arn for arn in (edge.gateway.controller_role_arn, edge.tls.role_arn, edge.external_dns.role_arn) if arn}
    return [*sorted(str(arn) for arn in roles), "arn:aws:iam::*:role/t-*"]


# The program's own roles (data.py: tenant roles `t-<tenant>-<env>-...`, the autonamed
# `shared-secrets-identity-...`): the only roles the deploy role may create, change or delete. On `*`,
# iam:PutRolePolicy would let it write itself any permission.
PROGRAM_ROLES = ("arn:aws:iam::*:role/t-*", "arn:aws:iam::*:role/shared-secrets-identity-*")
ALIAS_ACTIONS = ("kms:CreateAlias", "kms:UpdateAlias", "kms:DeleteAlias")
_TAGGED = {"StringEquals": {"aws:ResourceTag/managed-by": MANAGED_BY_VALUE}}


def deploy_policy(settings: StackSettings) -> dict[str, Any]:
    """The deploy role's identity policy for this stack (attached by the bootstrap).

    Scoped where the resources have names or tags the program controls: IAM writes to its own roles,
    KMS to keys tagged `managed-by: tenancy` (created with that tag, so never the state key or
    another team's) and aliases under `alias/tenancy/`, Secrets Manager to `tenancy/*`. RDS, EC2 and
    EKS actions and the reads stay on `*`: their names are autonamed or the stack's prerequisites."""
    assert settings.aws is not None  # an AWS stack
    region = settings.aws.region
    actions = resource_actions()
    iam_writes = [a for a in actions if a.startswith("iam:") and a != "iam:GetRole"]
    kms_keys = [a for a in actions if a.startswith("kms:") and a not in ("kms:CreateKey", "kms:ListAliases")]
    secrets = [a for a in actions if a.startswith("secretsmanager:")]
    scoped = {*iam_writes, *kms_keys, *secrets, "kms:CreateKey"}
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "Resources", "Effect": "Allow", "Action": [a for a in actions if a not in scoped], "Resource": "*"},
            {"Sid": "ProgramRoles", "Effect": "Allow", "Action": iam_writes, "Resource": list(PROGRAM_ROLES)},
            {
                "Sid": "CreateTaggedKeys",
                "Effect": "Allow",
                "Action": ["kms:CreateKey"],
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:RequestTag/managed-by": MANAGED_BY_VALUE}},
            },
            {
                "Sid": "ProgramKeys",
                "Effect": "Allow",
                "Action": sorted({*kms_keys, *RDS_KEY, *SECRETS_KEY}),
                "Resource": f"arn:aws:kms:{region}:*:key/*",
                "Condition": _TAGGED,
            },
            {
                "Sid": "ProgramAliases",
                "Effect": "Allow",
                "Action": list(ALIAS_ACTIONS),
                "Resource": f"arn:aws:kms:{region}:*:alias/tenancy/*",
            },
            {
                "Sid": "ProgramSecrets",
                "Effect": "Allow",
                "Action": secrets,
                "Resource": f"arn:aws:secretsmanager:{region}:*:secret:tenancy/*",
            },
            {"Sid": "PassRolesToEks", "Effect": "Allow", "Action": list(PASS_ROLE), "Resource": passed_roles(settings)},
        ],
    }
