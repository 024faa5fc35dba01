"""The AWS deploy role may do what the prod-aws plan asks of it (issue 44, 2): every resource type
and read has a rule, and the policy the bootstrap attaches allows each rule's actions, `iam:PassRole`
on every role an association or node group hands to EKS, and the key actions RDS and Secrets
Manager take on the caller's behalf on every key the program made (components/clouds/aws/deploy_rules.py).

Before: the permissions were prose in docs/runbooks/eks.md; a hand-written policy missed
`iam:PassRole`, `kms:CreateGrant`/`kms:DescribeKey` and `kms:GenerateDataKey`/`kms:Decrypt`.
"""

from __future__ import annotations

import json
from typing import Any

from components.clouds.aws import deploy_rules
from components.model.catalog.stack_config import parse_settings
from tests.clouds.iam_policy import Request, allowed
from tools.plan.harness import PROJECT_ROOT, ProgramRun, RecordedResource, stack_config

RUNBOOK = PROJECT_ROOT / "docs" / "runbooks" / "eks.md"
ACCOUNT_ROLE = "arn:aws:iam::111122223333:role/"


def _policy() -> dict[str, Any]:
    return deploy_rules.deploy_policy(parse_settings(stack_config("prod-aws")[0], "Pulumi.prod-aws.yaml"))


def _real_role_arn(run: ProgramRun, arn: str) -> str:
    """The ARN a role of the program gets (its `namePrefix` and AWS's suffix), else `arn` itself:
    the mocks name a created role after its resource."""
    roles = {r.name: r for r in run.of_type("aws:iam/role:Role") if not r.read}
    role = roles.get(arn.removeprefix(ACCOUNT_ROLE))
    if role is None:
        return arn
    if role.inputs.get("namePrefix"):
        return ACCOUNT_ROLE + str(role.inputs["namePrefix"]) + "2026112900"  # AWS's unique suffix
    # Named, or Pulumi's auto-name: the resource name, `-` and 7 random hex characters.
    return ACCOUNT_ROLE + str(role.inputs.get("name") or f"{role.name}-a1b2c3d")


def _program_tags(run: ProgramRun) -> dict[str, str]:
    (provider,) = [r for r in run.resources if r.type == "pulumi:providers:aws"]
    return dict(json.loads(provider.inputs["defaultTags"])["tags"])


REGION_ACCOUNT = "eu-west-1:111122223333"


def _tags(run: ProgramRun, prefix: str) -> dict[str, str]:
    return {f"aws:{prefix}/{k}": v for k, v in _program_tags(run).items()}


def _targets(run: ProgramRun, record: RecordedResource, action: str) -> list[Request]:
    """The request(s) `action` makes for `record`, on the ARN AWS authorizes it against."""
    inputs = record.inputs
    if record.type == "aws:iam/role:Role":
        return [Request(action, _real_role_arn(run, ACCOUNT_ROLE + record.name))]
    if record.type == "aws:iam/rolePolicy:RolePolicy":
        return [Request(action, _real_role_arn(run, ACCOUNT_ROLE + str(inputs["role"])))]
    if record.type == "aws:kms/key:Key":
        if action == "kms:CreateKey":  # authorized on `*` with the tags it is created with
            return [Request(action, "*", context=_tags(run, "RequestTag"))]
        return [Request(action, f"arn:aws:kms:{REGION_ACCOUNT}:key/{record.name}", context=_tags(run, "ResourceTag"))]
    if record.type == "aws:kms/alias:Alias":
        if action == "kms:ListAliases":
            return [Request(action, "*")]
        # CreateAlias and its kin are authorized on the alias and on the key it points at.
        key = str(inputs["targetKeyId"]).removesuffix("-key-id")
        return [
            Request(action, f"arn:aws:kms:{REGION_ACCOUNT}:{inputs['name']}"),
            Request(action, f"arn:aws:kms:{REGION_ACCOUNT}:key/{key}", context=_tags(run, "ResourceTag")),
        ]
    if record.type == "aws:secretsmanager/secret:Secret":
        return [Request(action, f"arn:aws:secretsmanager:{REGION_ACCOUNT}:secret:{inputs['name']}-AbCdEf")]
    if record.type == "aws:secretsmanager/secretVersion:SecretVersion":
        secrets = {r.name: r for r in run.of_type("aws:secretsmanager/secret:Secret")}
        secret = secrets[str(inputs["secretId"]).removesuffix("-id")]
        return [Request(action, f"arn:aws:secretsmanager:{REGION_ACCOUNT}:secret:{secret.inputs['name']}-AbCdEf")]
    return [Request(action, "arn:aws:placeholder")]


def _requests(run: ProgramRun, record: RecordedResource) -> list[Request]:
    rule = deploy_rules.rule_for(record.type)
    assert rule is not None, f"{record.type}: no deploy rule"
    requests = [request for action in rule.actions for request in _targets(run, record, action)]
    keys = {r.name for r in run.of_type("aws:kms/key:Key")}
    for name, (actions, kind) in rule.uses.items():
        value = record.inputs.get(name)
        if value is None:
            continue
        if kind == "role":
            requests += [Request(a, _real_role_arn(run, str(value))) for a in actions]
        else:
            assert str(value).rsplit("/", 1)[-1] in keys, (record.name, value)  # a key of the program
            requests += [Request(a, str(value), context=_tags(run, "ResourceTag")) for a in actions]
    return requests


def test_every_aws_resource_of_the_prod_aws_plan_is_allowed_by_the_deploy_policy(prod_aws_plan: ProgramRun) -> None:
    policy = _policy()
    managed = [r for r in prod_aws_plan.resources if r.type.startswith("aws:") and not r.read]
    assert managed
    for record in managed:
        for request in _requests(prod_aws_plan, record):
            assert allowed([policy], request), (record.type, record.name, request.action, request.resource)


def test_every_read_of_the_prod_aws_plan_is_allowed(prod_aws_plan: ProgramRun) -> None:
    policy = _policy()
    reads = [r for r in prod_aws_plan.resources if r.type.startswith("aws:") and r.read]
    for record in reads:
        actions = deploy_rules.READS.get(record.type)
        assert actions, f"{record.type}: no read rule"
        for action in actions:
            assert allowed([policy], Request(action, "arn:aws:placeholder")), (record.name, action)


def test_pass_role_and_key_use_are_what_the_clouds_require(prod_aws_plan: ProgramRun) -> None:
    # The three gaps a hand-written policy had, named: PassRole for associations and node groups,
    # CreateGrant/DescribeKey for RDS on a customer key, GenerateDataKey/Decrypt for Secrets Manager.
    association = deploy_rules.RULES["aws:eks/podIdentityAssociation:PodIdentityAssociation"]
    assert association.uses["roleArn"][0] == ("iam:PassRole",)
    assert deploy_rules.RULES["aws:eks/nodeGroup:NodeGroup"].uses["nodeRoleArn"][0] == ("iam:PassRole",)
    assert set(deploy_rules.RULES["aws:rds/instance:Instance"].uses["kmsKeyId"][0]) == {
        "kms:CreateGrant",
        "kms:DescribeKey",
    }
    assert set(deploy_rules.RULES["aws:secretsmanager/secret:Secret"].uses["kmsKeyId"][0]) == {
        "kms:GenerateDataKey",
        "kms:Decrypt",
    }
    policy = _policy()
    # Nothing beyond: no role outside the stack's is passed, no key without the program's tag used.
    assert not allowed([policy], Request("iam:PassRole", ACCOUNT_ROLE + "OrganizationAccountAccessRole"))
    other_key = "arn:aws:kms:eu-west-1:111122223333:key/someone-elses"
    assert not allowed([policy], Request("kms:Decrypt", other_key, context={"aws:ResourceTag/team": "x"}))


def test_the_deploy_role_cannot_write_itself_permissions_or_touch_other_keys_and_secrets() -> None:
    """Writes are scoped to what the program names or tags: IAM writes on `*` would let the deploy
    role put any policy on itself; KMS writes on `*` would let it schedule the state key's deletion."""
    policy = _policy()
    own = ACCOUNT_ROLE + "tenancy-prod-aws"
    for action in ("iam:PutRolePolicy", "iam:UpdateAssumeRolePolicy", "iam:DeleteRole", "iam:CreateRole"):
        assert not allowed([policy], Request(action, own)), action
        assert allowed([policy], Request(action, ACCOUNT_ROLE + "t-acme-prod-2026112900")), action
    state_key = "arn:aws:kms:eu-west-1:111122223333:key/state"
    for action in ("kms:ScheduleKeyDeletion", "kms:PutKeyPolicy", "kms:Decrypt"):
        assert not allowed([policy], Request(action, state_key)), action
    assert not allowed([policy], Request("kms:CreateKey", "*"))  # untagged
    other_secret = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:payroll/db-AbCdEf"
    for action in ("secretsmanager:GetSecretValue", "secretsmanager:DeleteSecret", "secretsmanager:PutSecretValue"):
        assert not allowed([policy], Request(action, other_secret)), action


def test_the_runbook_lists_the_policy_from_the_data() -> None:
    runbook = RUNBOOK.read_text(encoding="utf-8")
    for action in [*deploy_rules.resource_actions(), *deploy_rules.RDS_KEY, *deploy_rules.SECRETS_KEY, "iam:PassRole"]:
        assert f"`{action}`" in runbook, action
