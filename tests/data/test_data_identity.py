"""AWS workload identity, rule by rule: one role per tenant environment, EKS Pod Identity or IRSA
(`tenancy:aws.identityMode`), trust policies naming exactly that environment's `workload`
ServiceAccount, and refusals naming the stack key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, RecordedResource, new_monitor, run_program, stack_config

REGION = "eu-west-1"
ACCOUNT = "111122223333"
CONTROLLER = f"arn:aws:iam::{ACCOUNT}:role/tenancy-prod-external-secrets"
ISSUER = "oidc.eks.eu-west-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF"
PROVIDER_ARN = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{ISSUER}"
IDENTITY_KEYS = ("identityMode", "secretsControllerRoleArn", "oidcProviderArn", "oidcIssuer")
# The stack's own AWS settings (DB subnets, VPC, ...) without its identity settings, which each test sets:
# the rest must stay consistent with the stack's data settings (e.g. sharedInstances.<name>.subnets).
BASE_AWS: dict[str, Any] = {
    key: value
    for key, value in json.loads(stack_config("prod-aws")[0]["tenancy:aws"]).items()
    if key not in IDENTITY_KEYS
}
POD_IDENTITY = {**BASE_AWS, "identityMode": "podIdentity", "secretsControllerRoleArn": CONTROLLER}
IRSA = {**BASE_AWS, "identityMode": "irsa", "oidcProviderArn": PROVIDER_ARN, "oidcIssuer": ISSUER}
ROLES = {env: f"arn:aws:iam::{ACCOUNT}:role/shop-{env}-identity" for env in ("dev", "prod")}


def _shop(**fields: Any) -> dict[str, Any]:
    return tenant_document("shop", secrets=[{"name": "api-key", "source": "generated"}], **fields)


def _run(tmp_path: Path, aws: dict[str, Any], *tenants: dict[str, Any]) -> ProgramRun:
    return plan("prod-aws", write_tenants(tmp_path, *(tenants or (_shop(),))), aws=json.dumps(aws))


def _one(run: ProgramRun, type_token: str, name: str) -> RecordedResource:
    matches = [r for r in run.of_type(type_token) if r.name == name]
    assert len(matches) == 1, [r.name for r in run.of_type(type_token)]
    return matches[0]


def _trust(run: ProgramRun, role: str = "shop-prod-identity") -> list[dict[str, Any]]:
    statements: list[dict[str, Any]] = json.loads(_one(run, "aws:iam/role:Role", role).inputs["assumeRolePolicy"])[
        "Statement"
    ]
    return statements


def _refused(tmp_path: Path, aws: dict[str, Any], data: dict[str, Any] | None = None) -> str:
    overrides = {"tenancy:tenantsDir": str(write_tenants(tmp_path, _shop())), "tenancy:aws": json.dumps(aws)}
    if data is not None:
        overrides["tenancy:data"] = json.dumps(data)
    config, secret_keys = stack_config("prod-aws", overrides)
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program("prod-aws", config, secret_keys, monitor=monitor)
    assert monitor.recorded == []
    return str(raised.value)


# --- Pod Identity ------------------------------------------------------------------------------


def test_pod_identity_trust_names_the_cluster_the_namespace_and_the_workload_account(tmp_path: Path) -> None:
    run = _run(tmp_path, POD_IDENTITY)
    assert _trust(run, "shop-dev-identity")[0]["Condition"]["StringEquals"]["aws:RequestTag/kubernetes-namespace"] == [
        "tenant-shop-dev"
    ]
    pods, controller = _trust(run)
    assert pods == {
        "Effect": "Allow",
        "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
        "Condition": {
            "StringEquals": {
                "aws:RequestTag/eks-cluster-name": "tenancy-prod",
                "aws:RequestTag/kubernetes-namespace": ["tenant-shop-prod"],
                "aws:RequestTag/kubernetes-service-account": "workload",
            }
        },
    }
    # External Secrets' controller assumes the tenant role for the tenant's SecretStores, carrying
    # its Pod Identity session's transitive tags (components/clouds/aws/trust_rules.py).
    assert controller == {
        "Effect": "Allow",
        "Principal": {"AWS": CONTROLLER},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
    }


def _tenant_associations(run: ProgramRun) -> list[RecordedResource]:
    """Pod Identity associations of tenants; the edge's controllers have their own (tests/edge/)."""
    return [
        a
        for a in run.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
        if "tenancy:index:PlatformEdge" not in a.urn
    ]


def test_pod_identity_association_per_namespace_binds_only_the_workload_account(tmp_path: Path) -> None:
    run = _run(tmp_path, POD_IDENTITY)
    associations = _tenant_associations(run)
    assert sorted((a.inputs["namespace"], a.inputs["serviceAccount"]) for a in associations) == [
        ("tenant-shop-dev", "workload"),
        ("tenant-shop-prod", "workload"),
    ]
    # Each namespace's account gets its own environment's role, never the other's.
    assert {(a.inputs["namespace"], a.inputs["roleArn"]) for a in associations} == {
        ("tenant-shop-dev", ROLES["dev"]),
        ("tenant-shop-prod", ROLES["prod"]),
    }
    assert {a.inputs["clusterName"] for a in associations} == {"tenancy-prod"}
    # No IRSA annotation; the SecretStore names the role the controller assumes.
    account = _one(run, "kubernetes:core/v1:ServiceAccount", "shop-prod-workload")
    assert account.inputs["metadata"].get("annotations", {}) == {}
    store = objects_of_kind(run, "SecretStore", "tenant-shop-prod")[0]
    assert store["spec"]["provider"] == {"aws": {"service": "SecretsManager", "region": REGION, "role": ROLES["prod"]}}


def test_identity_follows_the_environments_the_tenant_has(tmp_path: Path) -> None:
    run = _run(tmp_path, POD_IDENTITY, _shop(environments=["prod"]))
    assert [r.name for r in run.of_type("aws:iam/role:Role") if r.name.startswith("shop-")] == ["shop-prod-identity"]
    assert _trust(run)[0]["Condition"]["StringEquals"]["aws:RequestTag/kubernetes-namespace"] == ["tenant-shop-prod"]
    associations = _tenant_associations(run)
    assert [a.inputs["namespace"] for a in associations] == ["tenant-shop-prod"]


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_role_policy_reads_only_the_environment_secrets_and_key(tmp_path: Path, environment: str) -> None:
    run = _run(tmp_path, POD_IDENTITY)
    name = f"shop-{environment}-identity-policy"
    policy = json.loads(_one(run, "aws:iam/rolePolicy:RolePolicy", name).inputs["policy"])
    assert policy["Statement"] == [
        {
            "Effect": "Allow",
            "Action": ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
            # Each `/` ends a name: `shop` never matches `shop-eu`, `dev` never `dev-eu`.
            "Resource": f"arn:aws:secretsmanager:{REGION}:*:secret:tenancy/shop/{environment}/*",
        },
        {
            "Effect": "Allow",
            "Action": ["kms:Decrypt", "kms:DescribeKey"],
            "Resource": f"arn:aws:kms:{REGION}:{ACCOUNT}:key/shop-{environment}-key",
        },
    ]


# --- IRSA ------------------------------------------------------------------------------------


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_irsa_trust_names_exactly_the_environment_workload_subject(tmp_path: Path, environment: str) -> None:
    run = _run(tmp_path, IRSA)
    assert _trust(run, f"shop-{environment}-identity") == [
        {
            "Effect": "Allow",
            "Principal": {"Federated": PROVIDER_ARN},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{ISSUER}:aud": "sts.amazonaws.com",
                    f"{ISSUER}:sub": [f"system:serviceaccount:tenant-shop-{environment}:workload"],
                }
            },
        }
    ]


def test_irsa_annotates_the_workload_account_and_needs_no_association(tmp_path: Path) -> None:
    run = _run(tmp_path, IRSA)
    assert _tenant_associations(run) == []
    for environment in ("dev", "prod"):
        account = _one(run, "kubernetes:core/v1:ServiceAccount", f"shop-{environment}-workload")
        assert account.inputs["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": ROLES[environment]}
        store = objects_of_kind(run, "SecretStore", f"tenant-shop-{environment}")[0]
        # ESO authenticates with the workload account's own token (and so its role).
        assert store["spec"]["provider"]["aws"]["auth"] == {"jwt": {"serviceAccountRef": {"name": "workload"}}}
        assert "role" not in store["spec"]["provider"]["aws"]


def test_irsa_shared_secrets_role_trusts_only_the_store_account(tmp_path: Path) -> None:
    run = _run(tmp_path, IRSA)
    condition = _trust(run, "shared-secrets-identity")[0]["Condition"]["StringEquals"]
    assert condition[f"{ISSUER}:sub"] == ["system:serviceaccount:external-secrets:tenancy-shared-secrets"]


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["oidcProviderArn", "oidcIssuer"])
def test_irsa_without_the_oidc_settings_names_the_key(key: str, tmp_path: Path) -> None:
    aws = {k: v for k, v in IRSA.items() if k != key}
    message = _refused(tmp_path, aws)
    assert f"Pulumi.prod-aws.yaml: tenancy:aws.{key}: required with identityMode irsa (roles of tenant shop" in message


def test_irsa_issuer_of_another_provider_is_refused(tmp_path: Path) -> None:
    message = _refused(tmp_path, {**IRSA, "oidcIssuer": "oidc.eks.eu-west-1.amazonaws.com/id/OTHER"})
    assert "Pulumi.prod-aws.yaml: tenancy:aws.oidcIssuer: 'oidc.eks.eu-west-1.amazonaws.com/id/OTHER' is not" in message


def test_irsa_issuer_with_a_scheme_is_refused_by_format(tmp_path: Path) -> None:
    message = _refused(tmp_path, {**IRSA, "oidcIssuer": f"https://{ISSUER}"})
    expected = "Pulumi.prod-aws.yaml: tenancy:aws.oidcIssuer: must be an OIDC issuer host and path, without https://"
    assert expected in message


def test_pod_identity_without_the_controller_role_names_the_key(tmp_path: Path) -> None:
    aws = {k: v for k, v in POD_IDENTITY.items() if k != "secretsControllerRoleArn"}
    message = _refused(tmp_path, aws)
    assert (
        "Pulumi.prod-aws.yaml: tenancy:aws.secretsControllerRoleArn: required with identityMode podIdentity: "
        "the External Secrets controller assumes the roles of tenant shop and the shared-secrets store" in message
    )


def test_identity_settings_are_only_required_where_something_uses_them(tmp_path: Path) -> None:
    aws = {k: v for k, v in IRSA.items() if k not in ("oidcProviderArn", "oidcIssuer")}
    tenants = write_tenants(tmp_path, tenant_document("plain"))
    run = plan("prod-aws", tenants, aws=json.dumps(aws), data="{}")
    assert run.of_type("aws:iam/role:Role") == []


def test_role_names_fit_iam_for_the_longest_tenant_names(tmp_path: Path) -> None:
    # tenant-<name>-<env> is at most 63 characters, so name and environment may take 55.
    name = "n" * 50
    run = _run(tmp_path, POD_IDENTITY, tenant_document(name, secrets=[{"name": "k", "source": "generated"}]))
    prefixes = [r.inputs["namePrefix"] for r in run.of_type("aws:iam/role:Role") if r.name.startswith(name)]
    assert len(prefixes) == 2
    # IAM: a prefix of at most 38 characters, to which AWS appends a unique 26.
    assert all(p.startswith("t-nnn") and len(p) <= 38 for p in prefixes)
