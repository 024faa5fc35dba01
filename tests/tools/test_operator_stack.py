"""The Pulumi Kubernetes Operator path is runnable: every object of deploy/operator/<stack>.yaml
passes its schema (built-in kinds: the official OpenAPI schema; Stack: the operator's CRD), and the
Stacks carry what a run needs: the backend, the base stack's secrets provider, git credentials,
a memory request from the benchmark's measured peak, and a ServiceAccount that can apply the
program (RBAC, evaluated) and acts as the cloud identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.checks.stack import OPERATOR_IDENTITY, OPERATOR_NAMESPACE, OPERATOR_SERVICE_ACCOUNT
from components.model.settings.stack import ShardSettings
from tests.k8s_schema import CRDS_DIR, has_crd, require_crds, validate_builtin, validate_custom
from tests.rbac import Authorizer, Subject
from tools.plan.harness import PROJECT_ROOT
from tools.scale import operator_stack
from tools.scale.operator_stack import OperatorSource, memory_request_mib, operator_manifest, program_peak_mib
from tools.scale.shard_budget import load_figures

REPO = "https://git.example.org/platform/tenancy.git"
KEY = "sshPrivateKey"
STACKS = ["prod-platform", "prod-shard-0", "prod-shard-1"]
# Kubernetes' bootstrap ClusterRoles the bindings refer to (plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
BOOTSTRAP_ROLES = [
    {
        "kind": "ClusterRole",
        "metadata": {"name": "cluster-admin"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    },
    {
        "kind": "ClusterRole",
        "metadata": {"name": "system:auth-delegator"},
        "rules": [
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
        ],
    },
]


def base(stack: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
    return document


def objects(stack: str = "prod", **source: Any) -> list[dict[str, Any]]:
    text = operator_manifest(stack, base(stack), STACKS, OperatorSource("acme", source.pop("repo", REPO), **source))
    return list(yaml.safe_load_all(text))


def stacks_of(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in documents if d["kind"] == "Stack"]


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_every_object_passes_its_schema(stack: str) -> None:
    require_crds()  # skips, saying why, only where no upstream CRDs are beside the project
    if not has_crd({"apiVersion": "pulumi.com/v1", "kind": "Stack"}):
        pytest.fail(f"the operator's Stack CRD is missing from {CRDS_DIR} (../shared/crds/pulumi.com_stacks.yaml)")
    version = base(stack)["config"]["tenancy:kubernetesVersion"]
    documents = objects(stack, backend="gs://acme-tenancy-state", cloud_identity="ops@acme.iam.gserviceaccount.com")
    assert [d["kind"] for d in documents] == ["ServiceAccount", "ClusterRoleBinding", "ClusterRoleBinding"] + [
        "Stack"
    ] * len(STACKS)
    for document in documents:
        if document["kind"] == "Stack":
            validate_custom(document)
        else:
            validate_builtin(document, version)


def test_a_stack_the_crd_rejects_is_caught() -> None:
    import jsonschema

    (first, *_) = stacks_of(objects())
    first["spec"]["resyncFrequencySeconds"] = "often"
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(first)


def test_backend_and_secrets_provider_come_with_their_credentials() -> None:
    # prod: a bucket backend (workload identity reads it) and Cloud KMS: no token, no passphrase.
    for stack in stacks_of(objects("prod", backend="gs://acme-tenancy-state")):
        assert stack["spec"]["backend"] == "gs://acme-tenancy-state"
        assert stack["spec"]["secretsProvider"] == base("prod")["secretsprovider"]
        assert stack["spec"]["envRefs"] == {}
    # dev: Pulumi Cloud and a passphrase, both from the Secret the platform team creates.
    for stack in stacks_of(objects("dev")):
        assert stack["spec"]["backend"] == operator_stack.PULUMI_CLOUD
        assert "secretsProvider" not in stack["spec"]
        refs = stack["spec"]["envRefs"]
        assert refs["PULUMI_ACCESS_TOKEN"]["secret"] == {"name": operator_stack.PULUMI_SECRET, "key": "accessToken"}
        assert refs["PULUMI_CONFIG_PASSPHRASE"]["secret"] == {"name": operator_stack.PULUMI_SECRET, "key": "passphrase"}


def test_a_stack_without_a_secrets_provider_needs_a_passphrase_only_outside_pulumi_cloud() -> None:
    document: dict[str, Any] = {"config": {}}
    cloud = operator_manifest("x", document, STACKS, OperatorSource("acme", REPO))
    bucket = operator_manifest("x", document, STACKS, OperatorSource("acme", REPO, backend="s3://b?region=eu-west-1"))
    assert all(
        "PULUMI_CONFIG_PASSPHRASE" not in s["spec"]["envRefs"] for s in stacks_of(list(yaml.safe_load_all(cloud)))
    )
    assert all("PULUMI_CONFIG_PASSPHRASE" in s["spec"]["envRefs"] for s in stacks_of(list(yaml.safe_load_all(bucket))))


@pytest.mark.parametrize(
    ("repo", "expected"),
    [
        (REPO, {"accessToken": {"type": "Secret", "secret": {"name": "tenancy-git", "key": "accessToken"}}}),
        (
            "git@git.example.org:platform/tenancy.git",
            {
                "sshAuth": {
                    "sshPrivateKey": {"type": "Secret", "secret": {"name": "tenancy-git", "key": "sshPrivateKey"}}
                }
            },
        ),
    ],
)
def test_git_auth_follows_the_repository_url(repo: str, expected: dict[str, Any]) -> None:
    for stack in stacks_of(objects(repo=repo)):
        assert stack["spec"]["gitAuth"] == expected and stack["spec"]["projectRepo"] == repo


def test_memory_request_comes_from_the_measured_peak() -> None:
    # The benchmark's figures (tools/scale/scale_figures.json): base RSS plus KB per resource.
    figures = load_figures()
    assert program_peak_mib(10_000) == round(figures.base_rss_mb + figures.kb_per_resource * 10_000 / 1024)
    default = ShardSettings().resource_budget
    budget = base("prod")["config"].get("tenancy:shards", {}).get("resourceBudget", default)
    expected = memory_request_mib(budget)
    assert expected == program_peak_mib(budget) + operator_stack.ENGINE_AND_PLUGINS_MIB
    for stack in stacks_of(objects()):
        resources = stack["spec"]["workspaceTemplate"]["spec"]["resources"]
        assert resources["requests"]["memory"] == f"{expected}Mi"
        assert resources["limits"]["memory"] == f"{2 * expected}Mi"


@pytest.mark.parametrize(
    ("identity", "annotation"),
    [
        ("tenancy-ops@tenancy-prod.iam.gserviceaccount.com", "iam.gke.io/gcp-service-account"),
        ("arn:aws:iam::111122223333:role/tenancy-operator", "eks.amazonaws.com/role-arn"),
        (None, None),
    ],
)
def test_the_workspace_acts_as_the_cloud_identity(identity: str | None, annotation: str | None) -> None:
    documents = objects(cloud_identity=identity)
    account = documents[0]
    assert account["metadata"]["name"] == OPERATOR_SERVICE_ACCOUNT
    assert account["metadata"]["namespace"] == OPERATOR_NAMESPACE
    assert account["metadata"].get("annotations") == ({annotation: identity} if annotation else None)
    assert all(s["spec"]["serviceAccountName"] == OPERATOR_SERVICE_ACCOUNT for s in stacks_of(documents))


def test_the_service_account_may_apply_the_program_and_answer_the_operator() -> None:
    authz = Authorizer([*BOOTSTRAP_ROLES, *objects()])
    account = Subject("ServiceAccount", OPERATOR_SERVICE_ACCOUNT, OPERATOR_NAMESPACE)
    assert authz.allowed(account, "create", "tokenreviews", "", group="authentication.k8s.io")
    assert authz.allowed(account, "create", "clusterroles", "", group="rbac.authorization.k8s.io")
    assert authz.allowed(account, "patch", "resourcequotas", "acme-dev")
    stranger = Subject("ServiceAccount", "default", OPERATOR_NAMESPACE)
    assert not authz.allowed(stranger, "create", "tokenreviews", "", group="authentication.k8s.io")
    # Its Kubernetes identity is what the shard stack files add to platformIdentities (tools/scale/shards.py).
    assert f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_SERVICE_ACCOUNT}" == OPERATOR_IDENTITY


def test_shards_wait_for_the_platform_and_never_destroy() -> None:
    platform, *shards = stacks_of(objects())
    assert "prerequisites" not in platform["spec"]
    for stack in shards:
        assert stack["spec"]["prerequisites"][0]["name"] == platform["metadata"]["name"]
    for stack in [platform, *shards]:
        assert stack["spec"]["destroyOnFinalize"] is False and stack["spec"]["refresh"] is True


def test_manifest_path_is_what_shards_write(tmp_path: Path) -> None:
    from tools.scale.shards import generated_files

    document = base("prod")
    document["config"]["tenancy:shards"] = {"runner": "operator"}
    (tmp_path / "Pulumi.prod.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    files = generated_files("prod", 2, "acme", REPO, root=tmp_path, backend="gs://b", cloud_identity="x@y.iam")
    text = files[tmp_path / "deploy" / "operator" / "prod.yaml"]
    documents = list(yaml.safe_load_all(text))
    assert [d["metadata"]["name"] for d in stacks_of(documents)] == [f"tenancy-{name}" for name in STACKS]
    assert documents[0]["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": "x@y.iam"}
