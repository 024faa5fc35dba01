"""The least-privilege identity of previews and drift checks, per cloud, as data.

    tenancy preview-identity --write     # regenerate deploy/identities/
    tenancy preview-identity --check     # exit 1 when the committed files are stale

`pulumi preview --refresh` (the drift check) reads every resource the stack manages through its
provider; `roles/viewer` (GCP) or a read-only policy is not enough, because reading a secret
version's payload is not a "view" permission (`secretmanager.versions.access`,
`secretsmanager:GetSecretValue`), and the Kubernetes provider previews with server-side apply,
a dry-run PATCH, which RBAC authorizes as `patch` (dry-run requests are authorized like real ones:
https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run-authorization).

`READS` maps every cloud resource type the program registers to the permissions its provider's
read calls need; `tests/tools/test_preview_identity.py` plans every committed stack and fails on a
type missing here, so a new resource type cannot silently cause false drift. The files written
from it:

- deploy/identities/gcp-preview-role.yaml: a custom role (`gcloud iam roles create --file`), and
  gcp-preview-secrets-role.yaml, the one permission to read secret payloads, bound with a condition
  to the program's secrets only (names `tenancy_...`);
- deploy/identities/aws-preview-policy.json: an IAM policy; `GetSecretValue` only on `tenancy/*`;
- deploy/identities/kubernetes-preview-clusterrole.yaml: get/list/watch/patch on each kind the
  program manages, bound to the group `tenancy-preview` (the default of
  `tenancy:policy.previewIdentities.groups`). RBAC cannot tell the dry run from a real patch; the
  admission policy `tenancy-preview-dry-run` (components/admission/rules/preview_dry_run.py) refuses
  these identities every write that is not a dry run. Admission policies never see requests on the
  admission policy objects themselves, so on admissionregistration.k8s.io the role grants no `patch`:
  the preview's dry run of those gets 403 and the provider diffs them client-side.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from components.model.settings.admission import PREVIEW_GROUP as PREVIEW_GROUP

if TYPE_CHECKING:
    from tools.plan.harness import RecordedResource

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
OUT_DIR = PROJECT_ROOT / "deploy" / "identities"
GCP_ROLE_ID = "tenancyPreview"
GCP_SECRETS_ROLE_ID = "tenancyPreviewSecrets"
CLUSTER_ROLE = "tenancy-preview"
# Secret names the program gives its secrets (components/clouds/gcp, components/clouds/aws).
GCP_SECRET_PREFIX = "tenancy_"
AWS_SECRET_PREFIX = "tenancy/"

# Per resource type, what its provider's Read needs. Sources: the read function of the resource in
# the bridged Terraform providers (hashicorp/terraform-provider-google `resource_*` Read, which
# calls the REST `get` of the resource and `getIamPolicy` for IAM members;
# hashicorp/terraform-provider-aws `resource*Read`), and the IAM permission reference of each
# service (https://cloud.google.com/iam/docs/permissions-reference,
# https://docs.aws.amazon.com/service-authorization/latest/reference/).
READS: dict[str, tuple[str, ...]] = {
    # GCP
    "gcp:container/nodePool:NodePool": ("container.clusters.get", "container.operations.list"),
    "gcp:kms/keyRing:KeyRing": ("cloudkms.keyRings.get",),
    "gcp:kms/keyRingIAMMember:KeyRingIAMMember": ("cloudkms.keyRings.getIamPolicy",),
    "gcp:kms/cryptoKey:CryptoKey": ("cloudkms.cryptoKeys.get",),
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": ("cloudkms.cryptoKeys.getIamPolicy",),
    # Read fetches the project's whole policy (resource_google_project_iam.go, projects.getIamPolicy).
    "gcp:projects/iAMMember:IAMMember": ("resourcemanager.projects.getIamPolicy",),
    # Its Read makes no API call: the service agent's e-mail is derived (resource_project_service_identity.go).
    "gcp:projects/serviceIdentity:ServiceIdentity": (),
    "gcp:secretmanager/secret:Secret": ("secretmanager.secrets.get",),
    "gcp:secretmanager/secretIamMember:SecretIamMember": ("secretmanager.secrets.getIamPolicy",),
    "gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember": ("dns.managedZones.getIamPolicy",),
    # Prerequisites read before use (ADR 0037): the zone (managedZones.get) and the edge's custom role.
    "gcp:dns/managedZone:ManagedZone": ("dns.managedZones.get",),
    # The stack's Certificate Manager authorization record (components/clouds/gcp/certificate_map.py).
    "gcp:dns/recordSet:RecordSet": ("dns.resourceRecordSets.list",),
    "gcp:certificatemanager/certificate:Certificate": ("certificatemanager.certs.get",),
    "gcp:certificatemanager/certificateMap:CertificateMap": ("certificatemanager.certmaps.get",),
    "gcp:certificatemanager/certificateMapEntry:CertificateMapEntry": ("certificatemanager.certmapentries.get",),
    "gcp:certificatemanager/dnsAuthorization:DnsAuthorization": ("certificatemanager.dnsauthorizations.get",),
    "gcp:projects/iAMCustomRole:IAMCustomRole": ("iam.roles.get",),
    # Read fetches the payload (`versions/<n>:access`) to compare `secretData`.
    "gcp:secretmanager/secretVersion:SecretVersion": ("secretmanager.versions.get", "secretmanager.versions.access"),
    "gcp:serviceaccount/account:Account": ("iam.serviceAccounts.get",),
    "gcp:serviceaccount/iAMBinding:IAMBinding": ("iam.serviceAccounts.getIamPolicy",),
    "gcp:serviceaccount/iAMMember:IAMMember": ("iam.serviceAccounts.getIamPolicy",),
    "gcp:sql/databaseInstance:DatabaseInstance": ("cloudsql.instances.get",),
    "gcp:sql/database:Database": ("cloudsql.databases.get",),
    "gcp:sql/user:User": ("cloudsql.users.list",),
    # AWS
    "aws:ec2/launchTemplate:LaunchTemplate": ("ec2:DescribeLaunchTemplates", "ec2:DescribeLaunchTemplateVersions"),
    "aws:ec2/securityGroup:SecurityGroup": ("ec2:DescribeSecurityGroups", "ec2:DescribeSecurityGroupRules"),
    "aws:eks/nodeGroup:NodeGroup": ("eks:DescribeNodegroup",),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ("eks:DescribePodIdentityAssociation",),
    "aws:iam/role:Role": ("iam:GetRole", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies"),
    "aws:iam/rolePolicy:RolePolicy": ("iam:GetRolePolicy",),
    "aws:kms/alias:Alias": ("kms:ListAliases",),
    "aws:kms/key:Key": ("kms:DescribeKey", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus", "kms:ListResourceTags"),
    "aws:rds/instance:Instance": ("rds:DescribeDBInstances", "rds:ListTagsForResource"),
    # A prerequisite read before use (ADR 0037): resourceSubnetGroupRead, DescribeDBSubnetGroups and tags.
    "aws:rds/subnetGroup:SubnetGroup": ("rds:DescribeDBSubnetGroups", "rds:ListTagsForResource"),
    # terraform-provider-aws internal/service/rds/parameter_group.go, resourceParameterGroupRead:
    # findDBParameterGroupByName, then DescribeDBParameters; tags through ListTagsForResource.
    "aws:rds/parameterGroup:ParameterGroup": (
        "rds:DescribeDBParameterGroups",
        "rds:DescribeDBParameters",
        "rds:ListTagsForResource",
    ),
    "aws:secretsmanager/secret:Secret": ("secretsmanager:DescribeSecret", "secretsmanager:GetResourcePolicy"),
    # Read fetches the value (GetSecretValue) to compare `secretString`.
    "aws:secretsmanager/secretVersion:SecretVersion": (
        "secretsmanager:DescribeSecret",
        "secretsmanager:GetSecretValue",
        "secretsmanager:ListSecretVersionIds",
    ),
}
# Permissions that read secret payloads: granted only on the program's own secrets.
SECRET_READS = frozenset({"secretmanager.versions.access", "secretsmanager:GetSecretValue"})
# What every preview needs besides the resources' reads: GKE credentials, EKS cluster lookup.
CLUSTER_ACCESS = {"gcp": ("container.clusters.get",), "aws": ("eks:DescribeCluster",)}
# Groups whose writes no admission policy sees (k8s.io/apiserver v0.34.0
# pkg/admission/plugin/policy/generic/plugin.go `admissionResources`, excluded from every policy):
# `tenancy-preview-dry-run` could not keep a real patch of them out, so the role only reads them.
UNGUARDED_GROUPS = frozenset({"admissionregistration.k8s.io"})
READ = ["get", "list", "watch"]
# Kinds whose plural is not the lowercase kind plus "s".
_PLURALS = {"NetworkPolicy": "networkpolicies"}
# Kinds ending in these take "es" (StorageClass -> storageclasses, GatewayClass -> gatewayclasses).
_ES_ENDINGS = ("s", "x", "ch", "sh")


def cloud_of(type_token: str) -> str:
    """The package of a resource type token (`gcp`, `aws`, `kubernetes`, ...)."""
    return type_token.split(":", 1)[0]


def permissions(cloud: str) -> list[str]:
    """Every permission of `cloud`'s preview identity, sorted."""
    reads = {perm for token, perms in READS.items() if cloud_of(token) == cloud for perm in perms}
    return sorted(reads | set(CLUSTER_ACCESS[cloud]))


def kubernetes_resource(type_token: str) -> tuple[str, str]:
    """(API group, plural resource) of a `kubernetes:<group>/<version>:<Kind>` type token."""
    _, api, kind = type_token.split(":")
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    group = "" if group == "core" else group
    lower = kind.lower()
    if kind in _PLURALS:
        plural = _PLURALS[kind]
    elif lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        plural = lower[:-1] + "ies"
    elif lower.endswith(_ES_ENDINGS):
        plural = lower + "es"
    else:
        plural = lower + "s"
    return group, plural


def gcp_roles() -> dict[str, dict[str, Any]]:
    """The two custom roles: everything but secret payloads, and secret payloads (bound with a condition)."""
    perms = permissions("gcp")
    return {
        GCP_ROLE_ID: {
            "title": "tenancy preview",
            "description": "Refresh and preview of the tenancy stacks: reads only (tools/ci/preview_identity.py)",
            "stage": "GA",
            "includedPermissions": [p for p in perms if p not in SECRET_READS],
        },
        GCP_SECRETS_ROLE_ID: {
            "title": "tenancy preview secrets",
            "description": f"Read the payloads of the program's secrets; bind with a condition on {GCP_SECRET_PREFIX}*",
            "stage": "GA",
            "includedPermissions": [p for p in perms if p in SECRET_READS],
        },
    }


def gcp_secret_condition(project_number: str) -> str:
    """The IAM condition limiting the secrets role to the program's secrets (names use the project number)."""
    return f'resource.name.startsWith("projects/{project_number}/secrets/{GCP_SECRET_PREFIX}")'


def aws_policy() -> dict[str, Any]:
    """The preview role's IAM policy: reads everywhere, secret values under `tenancy/` only."""
    perms = permissions("aws")
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "Reads", "Effect": "Allow", "Action": [p for p in perms if p not in SECRET_READS], "Resource": "*"},
            {
                "Sid": "ProgramSecretValues",
                "Effect": "Allow",
                "Action": [p for p in perms if p in SECRET_READS],
                "Resource": f"arn:aws:secretsmanager:*:*:secret:{AWS_SECRET_PREFIX}*",
            },
        ],
    }


def cluster_role(kubernetes_types: list[str]) -> dict[str, Any]:
    """get/list/watch to refresh, patch for the server-side-apply dry run, on each kind the program manages.

    No patch where admission cannot refuse a real one (UNGUARDED_GROUPS).
    """
    by_group: dict[str, set[str]] = {}
    for token in kubernetes_types:
        group, plural = kubernetes_resource(token)
        by_group.setdefault(group, set()).add(plural)
    rules = [
        {
            "apiGroups": [group],
            "resources": sorted(plurals),
            "verbs": READ if group in UNGUARDED_GROUPS else [*READ, "patch"],
        }
        for group, plurals in sorted(by_group.items())
    ]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": CLUSTER_ROLE, "labels": {"app.kubernetes.io/managed-by": "tenancy"}},
        "rules": rules,
    }


def cluster_role_binding() -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": CLUSTER_ROLE, "labels": {"app.kubernetes.io/managed-by": "tenancy"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CLUSTER_ROLE},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": PREVIEW_GROUP}],
    }


HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def planned_resources(stacks: list[str]) -> list[RecordedResource]:
    """Every resource the plans of `stacks` register."""
    from tools.plan.harness import run_stack

    return [r for stack in stacks for r in run_stack(stack).resources]


def planned_types(stacks: list[str]) -> set[str]:
    """Every custom resource type (managed or read) the plans of `stacks` register."""
    return {r.type for r in planned_resources(stacks) if r.custom}


def release_namespaces(resources: list[RecordedResource]) -> list[str]:
    """The namespaces of the Helm releases in a plan: Helm keeps each release's state in Secrets of
    its namespace (helm.sh/helm/v3 pkg/storage/driver/secrets.go), which a preview reads to diff it."""
    return sorted(
        {str(r.inputs.get("namespace")) for r in resources if r.type == HELM_RELEASE and r.inputs.get("namespace")}
    )


def release_state_reads(namespaces: list[str]) -> list[dict[str, Any]]:
    """Per release namespace, a Role reading Secrets there and its binding to the preview group: the
    release state without a cluster-wide read of every Secret (tenants' included)."""
    documents: list[dict[str, Any]] = []
    labels = {"app.kubernetes.io/managed-by": "tenancy"}
    for namespace in namespaces:
        metadata = {"name": f"{CLUSTER_ROLE}-helm-state", "namespace": namespace, "labels": labels}
        documents.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": metadata,
                "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}],
            }
        )
        documents.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": metadata,
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": metadata["name"]},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": PREVIEW_GROUP}],
            }
        )
    return documents


def committed_stacks() -> list[str]:
    return sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in PROJECT_ROOT.glob("Pulumi.*.yaml"))


def rendered(types: set[str], helm_namespaces: list[str] | None = None) -> dict[Path, str]:
    """Every file of deploy/identities/ by path, from READS, the Kubernetes kinds in `types` and the
    namespaces of the plans' Helm releases."""
    header = "# Generated by `tenancy preview-identity --write` from tools/preview_identity.py.\n"
    kinds = sorted(t for t in types if cloud_of(t) == "kubernetes" and not t.startswith("kubernetes:helm.sh/"))
    roles = gcp_roles()
    return {
        OUT_DIR / "gcp-preview-role.yaml": header + yaml.safe_dump(roles[GCP_ROLE_ID], sort_keys=False),
        OUT_DIR / "gcp-preview-secrets-role.yaml": header + yaml.safe_dump(roles[GCP_SECRETS_ROLE_ID], sort_keys=False),
        OUT_DIR / "aws-preview-policy.json": json.dumps(aws_policy(), indent=2) + "\n",
        OUT_DIR / "kubernetes-preview-clusterrole.yaml": header
        + yaml.safe_dump_all(
            [cluster_role(kinds), cluster_role_binding(), *release_state_reads(helm_namespaces or [])],
            sort_keys=False,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy preview-identity", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="write the generated files")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale")
    args = parser.parse_args(argv)
    resources = planned_resources([s for s in committed_stacks() if s != "dev"])
    files = rendered({r.type for r in resources if r.custom}, release_namespaces(resources))
    stale = [path for path, text in files.items() if not path.is_file() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(
                f"{path.relative_to(PROJECT_ROOT)} is stale: run tenancy preview-identity --write",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(PROJECT_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
