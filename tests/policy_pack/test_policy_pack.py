"""The CrossGuard policy pack: each validator called directly with compliant and violating inputs,
the example stacks' real plans checked against all of them, and the pack served over gRPC the way
`pulumi preview --policy-pack policy_pack` talks to it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]  # grpcio ships no type information
import pytest
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    Secret,
    StackValidationArgs,
)
from pulumi_policy.deserialize import deserialize_properties, serialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from components.model.core import labels
from policy_pack import offline
from policy_pack.tenancy_policies import (
    POLICIES,
    SECRET,
    TENANT_KEY,
    remediate_secret_values,
    validate_data_protection,
    validate_namespace_guardrails,
    validate_rbac_boundaries,
    validate_secret_values,
)
from tests.pins import pins
from tests.support import plan
from tools.plan.harness import PROJECT_ROOT

POLICY_DIR = PROJECT_ROOT / "policy_pack"
RBAC = "kubernetes:rbac.authorization.k8s.io/v1"
STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in PROJECT_ROOT.glob("Pulumi.*.yaml"))
_SECRET_SIG = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}


METADATA = "kubernetes.io/metadata.name"


def _options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)


def resource(type_token: str, name: str, props: Mapping[str, Any], stack: str = "dev", protect: bool = False) -> Any:
    urn = f"urn:pulumi:{stack}::tenancy::{type_token}::{name}"
    return PolicyResource(type_token, props, urn, name, _options(protect), None, None, [], {})


def tenant_namespace(tenant: str, env: str = "dev", psa: str = "restricted") -> list[Any]:
    """A compliant tenant namespace with its guard rails, as the program registers them."""
    ns = f"tenant-{tenant}-{env}"
    meta = {"name": ns, "labels": {TENANT_KEY: tenant, "pod-security.kubernetes.io/enforce": psa}}
    inside = {"namespace": ns, "labels": {TENANT_KEY: tenant}}
    return [
        resource("kubernetes:core/v1:Namespace", f"{tenant}-{env}-namespace", {"metadata": meta}),
        resource("kubernetes:core/v1:ResourceQuota", f"{tenant}-{env}-quota", {"metadata": {**inside, "name": "q"}}),
        resource("kubernetes:core/v1:LimitRange", f"{tenant}-{env}-limits", {"metadata": {**inside, "name": "l"}}),
        resource(
            "kubernetes:networking.k8s.io/v1:NetworkPolicy",
            f"{tenant}-{env}-isolation",
            {
                "metadata": {**inside, "name": "tenancy-isolation"},
                "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": [{"from": [{}]}]},
            },
        ),
        binding(f"{tenant}-{env}-admin", ns, "tenancy-tenant-admin", [{"kind": "Group", "name": f"{tenant}-admins"}]),
    ]


def binding(name: str, namespace: str | None, role: str, subjects: list[dict[str, str]], **labels_: str) -> Any:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    metadata: dict[str, Any] = {"name": name, "labels": labels_}
    if namespace:
        metadata["namespace"] = namespace
    props = {"metadata": metadata, "roleRef": {"kind": "ClusterRole", "name": role}, "subjects": subjects}
    return resource(f"{RBAC}:{kind}", name, props)


def run_stack_check(validate: Callable[..., None], resources: list[Any]) -> list[str]:
    messages: list[str] = []
    validate(StackValidationArgs(resources), lambda message, urn=None: messages.append(message))
    return messages


def run_resource_check(validate: Callable[..., None], res: Any, config: Mapping[str, Any] | None = None) -> list[str]:
    messages: list[str] = []
    args = ResourceValidationArgs(res.resource_type, res.props, res.urn, res.name, res.opts, None, config)
    validate(args, lambda message, urn=None: messages.append(message))
    return messages


# --- namespace guard rails -------------------------------------------------------------------


def test_compliant_tenant_namespaces_pass() -> None:
    assert run_stack_check(validate_namespace_guardrails, tenant_namespace("acme") + tenant_namespace("beta")) == []


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("-quota", "tenant namespace tenant-acme-dev (tenant acme) has no ResourceQuota"),
        ("-limits", "tenant namespace tenant-acme-dev (tenant acme) has no LimitRange"),
        (
            "-isolation",
            "tenant namespace tenant-acme-dev (tenant acme) has no default-deny NetworkPolicy "
            "(podSelector {} with policyTypes Ingress and Egress) nor Admin-tier ClusterNetworkPolicy "
            "denying other namespaces",
        ),
    ],
)
def test_each_missing_guard_rail_is_reported(missing: str, message: str) -> None:
    resources = [r for r in tenant_namespace("acme") if not r.name.endswith(missing)] + tenant_namespace("beta")
    assert run_stack_check(validate_namespace_guardrails, resources) == [message]


@pytest.mark.parametrize(
    "spec",
    [
        {"podSelector": {}, "policyTypes": ["Ingress"]},
        {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress", "Egress"]},
    ],
)
def test_network_policy_that_leaves_traffic_open_is_not_default_deny(spec: dict[str, Any]) -> None:
    resources = tenant_namespace("acme")
    resources[3] = resource(resources[3].resource_type, resources[3].name, {**resources[3].props, "spec": spec})
    assert run_stack_check(validate_namespace_guardrails, resources) == [
        "tenant namespace tenant-acme-dev (tenant acme) has no default-deny NetworkPolicy "
        "(podSelector {} with policyTypes Ingress and Egress) nor Admin-tier ClusterNetworkPolicy "
        "denying other namespaces"
    ]


def _cluster_isolation(namespace: str, action: str = "Deny") -> Any:
    others = [{"namespaces": {"matchExpressions": [{"key": METADATA, "operator": "NotIn", "values": [namespace]}]}}]
    spec = {
        "tier": "Admin",
        "priority": 200,
        "subject": {"namespaces": {"matchLabels": {METADATA: namespace}}},
        "ingress": [{"action": action, "from": others}],
        "egress": [{"action": action, "to": others}],
    }
    type_token = "kubernetes:policy.networking.k8s.io/v1alpha2:ClusterNetworkPolicy"
    return resource(type_token, f"isolation-{namespace}", {"metadata": {"name": f"i-{namespace}"}, "spec": spec})


@pytest.mark.parametrize(
    ("isolated", "action", "passes"),
    [("tenant-acme-dev", "Deny", True), ("tenant-beta-dev", "Deny", False), ("tenant-acme-dev", "Accept", False)],
)
def test_cluster_network_policy_isolation_counts_for_its_namespace_only(
    isolated: str, action: str, passes: bool
) -> None:
    acme = [r for r in tenant_namespace("acme") if not r.name.endswith("-isolation")]
    messages = run_stack_check(validate_namespace_guardrails, [*acme, _cluster_isolation(isolated, action)])
    assert (messages == []) == passes, messages


def test_a_guard_rail_in_another_namespace_does_not_count() -> None:
    acme = tenant_namespace("acme")
    moved = {**acme[1].props, "metadata": {**acme[1].props["metadata"], "namespace": "tenant-beta-dev"}}
    acme[1] = resource(acme[1].resource_type, acme[1].name, moved)
    assert run_stack_check(validate_namespace_guardrails, acme) == [
        "tenant namespace tenant-acme-dev (tenant acme) has no ResourceQuota"
    ]


def test_pod_security_must_be_restricted() -> None:
    messages = run_stack_check(validate_namespace_guardrails, tenant_namespace("acme", psa="baseline"))
    assert messages == [
        "tenant namespace tenant-acme-dev (tenant acme) must enforce Pod Security 'restricted' "
        "(pod-security.kubernetes.io/enforce is 'baseline')"
    ]


def test_namespaces_without_tenant_label_are_not_tenant_namespaces() -> None:
    platform = resource("kubernetes:core/v1:Namespace", "monitoring", {"metadata": {"name": "monitoring"}})
    assert run_stack_check(validate_namespace_guardrails, [platform]) == []


# --- RBAC boundaries -------------------------------------------------------------------------


def _two_tenants() -> list[Any]:
    return tenant_namespace("acme") + tenant_namespace("acme", "prod") + tenant_namespace("beta")


def test_compliant_bindings_pass() -> None:
    own_account = binding(
        "acme-deployer", "tenant-acme-prod", "tenancy-tenant-deployer",
        [{"kind": "ServiceAccount", "name": "deployer", "namespace": "tenant-acme-dev"}],
    )  # fmt: skip
    platform = binding(
        "flux", None, "cluster-admin", [{"kind": "ServiceAccount", "name": "flux", "namespace": "flux-system"}]
    )
    assert run_stack_check(validate_rbac_boundaries, [*_two_tenants(), own_account, platform]) == []


def test_cluster_admin_in_a_tenant_namespace_is_reported() -> None:
    bad = binding("acme-root", "tenant-acme-dev", "cluster-admin", [{"kind": "Group", "name": "acme-admins"}])
    assert run_stack_check(validate_rbac_boundaries, [*_two_tenants(), bad]) == [
        "RoleBinding tenant-acme-dev/acme-root gives tenant acme cluster-admin (ClusterRole cluster-admin)"
    ]


def test_a_wildcard_cluster_role_counts_as_cluster_admin() -> None:
    root = resource(
        f"{RBAC}:ClusterRole",
        "everything",
        {"metadata": {"name": "everything"}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]},
    )
    bad = binding("acme-all", "tenant-acme-dev", "everything", [{"kind": "Group", "name": "acme-admins"}])
    assert run_stack_check(validate_rbac_boundaries, [*_two_tenants(), root, bad]) == [
        "RoleBinding tenant-acme-dev/acme-all gives tenant acme cluster-admin (ClusterRole everything)"
    ]


def test_another_tenants_service_account_in_a_tenant_namespace_is_reported() -> None:
    bad = binding(
        "beta-reach", "tenant-acme-dev", "tenancy-tenant-viewer",
        [{"kind": "ServiceAccount", "name": "deployer", "namespace": "tenant-beta-dev"}],
    )  # fmt: skip
    assert run_stack_check(validate_rbac_boundaries, [*_two_tenants(), bad]) == [
        "RoleBinding tenant-acme-dev/beta-reach binds ServiceAccount tenant-beta-dev/deployer of tenant beta "
        "into tenant acme's namespace"
    ]


def test_binding_labelled_for_another_tenant_is_reported() -> None:
    bad = binding("odd", "tenant-acme-dev", "tenancy-tenant-viewer", [], **{TENANT_KEY: "beta"})
    assert run_stack_check(validate_rbac_boundaries, [*_two_tenants(), bad]) == [
        "RoleBinding tenant-acme-dev/odd is labelled for tenant beta but sits in tenant acme's namespace"
    ]


def test_cluster_admin_for_a_tenant_group_is_reported() -> None:
    bad = binding("acme-root", None, "cluster-admin", [{"kind": "Group", "name": "acme-admins"}])
    assert run_stack_check(validate_rbac_boundaries, [*_two_tenants(), bad]) == [
        "ClusterRoleBinding acme-root gives Group acme-admins of tenant acme cluster-admin (ClusterRole cluster-admin)"
    ]


def test_cluster_wide_grant_to_a_tenant_service_account_is_reported() -> None:
    bad = binding(
        "acme-read-all", None, "view", [{"kind": "ServiceAccount", "name": "deployer", "namespace": "tenant-acme-dev"}]
    )
    assert run_stack_check(validate_rbac_boundaries, [*_two_tenants(), bad]) == [
        "ClusterRoleBinding acme-read-all grants ServiceAccount tenant-acme-dev/deployer of tenant acme "
        "ClusterRole view in every namespace, including other tenants'"
    ]


# --- data protection -------------------------------------------------------------------------

DATA_TYPES = [
    "gcp:sql/databaseInstance:DatabaseInstance",
    "gcp:sql/database:Database",
    "gcp:kms/cryptoKey:CryptoKey",
    "gcp:secretmanager/secret:Secret",
    "aws:kms/key:Key",
    "aws:secretsmanager/secret:Secret",
    "kubernetes:postgresql.cnpg.io/v1:Cluster",
    "kubernetes:k8s.mariadb.com/v1alpha1:MariaDB",
    "kubernetes:k8s.mariadb.com/v1alpha1:Database",
    "postgresql:index/database:Database",
    "mysql:index/database:Database",
]


@pytest.mark.parametrize("type_token", DATA_TYPES)
def test_unprotected_data_in_prod_is_reported(type_token: str) -> None:
    res = resource(type_token, "acme-orders", {}, stack="prod")
    assert run_resource_check(validate_data_protection, res) == [
        f"{type_token} acme-orders holds tenant data in stack prod but is not protected: "
        "keep tenancy:protection.protectData true"
    ]
    assert run_resource_check(validate_data_protection, resource(type_token, "acme-orders", {}, "prod", True)) == []


@pytest.mark.parametrize("stack", ["prod-aws", "prod-eu"])
def test_every_prod_stack_is_protected_by_default(stack: str) -> None:
    assert run_resource_check(validate_data_protection, resource("aws:kms/key:Key", "k", {}, stack=stack))


def test_dev_stacks_and_other_types_are_not_checked() -> None:
    assert run_resource_check(validate_data_protection, resource("aws:kms/key:Key", "k", {}, stack="dev")) == []
    assert run_resource_check(validate_data_protection, resource("kubernetes:core/v1:ConfigMap", "c", {}, "prod")) == []


def test_protected_stacks_come_from_policy_config() -> None:
    config = {"protectedStacks": ["live-*"]}
    key = "aws:kms/key:Key"
    assert run_resource_check(validate_data_protection, resource(key, "k", {}, stack="prod"), config) == []
    assert run_resource_check(validate_data_protection, resource(key, "k", {}, stack="live-eu"), config)


def test_cloud_deletion_protection_is_required_in_prod() -> None:
    sql = resource("gcp:sql/databaseInstance:DatabaseInstance", "db", {"deletionProtection": False}, "prod", True)
    assert run_resource_check(validate_data_protection, sql) == [
        "gcp:sql/databaseInstance:DatabaseInstance db holds tenant data in stack prod but turns off Cloud SQL "
        "deletion protection (deletionProtection: false)"
    ]
    rds = resource("aws:rds/instance:Instance", "db", {"skipFinalSnapshot": True}, "prod", True)
    assert run_resource_check(validate_data_protection, rds) == [
        "aws:rds/instance:Instance db holds tenant data in stack prod but has no RDS deletion protection "
        "(deletionProtection must be true)",
        "aws:rds/instance:Instance db holds tenant data in stack prod but skips the final snapshot "
        "(skipFinalSnapshot: true)",
    ]
    safe = resource("aws:rds/instance:Instance", "db", {"deletionProtection": True}, "prod", True)
    assert run_resource_check(validate_data_protection, safe) == []


# --- Kubernetes Secrets ----------------------------------------------------------------------


def _secret(**fields: Any) -> Any:
    return resource(SECRET, "acme-dev-db", {"metadata": {"name": "db", "namespace": "tenant-acme-dev"}, **fields})


@pytest.mark.parametrize(
    "fields",
    [
        {"stringData": {"password": Secret("hunter2")}},
        {"stringData": Secret({"password": "hunter2"})},
        {"data": {"password": "[secret]"}, "stringData": "[secret]"},
        {"type": "Opaque"},
    ],
)
def test_secret_values_that_are_pulumi_secrets_pass(fields: dict[str, Any]) -> None:
    assert run_resource_check(validate_secret_values, _secret(**fields)) == []


def test_plain_text_secret_values_are_reported_without_the_values() -> None:
    res = _secret(stringData={"password": "hunter2", "user": "app", "token": Secret("t")}, data="aGk=")
    messages = run_resource_check(validate_secret_values, res)
    assert messages == [
        "Secret tenant-acme-dev/db has plain-text values in data (*): pass them as Pulumi secrets "
        "(pulumi.Output.secret, pulumi_random results)",
        "Secret tenant-acme-dev/db has plain-text values in stringData (password, user): pass them as Pulumi "
        "secrets (pulumi.Output.secret, pulumi_random results)",
    ]
    assert not any("hunter2" in message or "aGk=" in message for message in messages)


def _remediation_args(wire: dict[str, Any]) -> ResourceValidationArgs:
    """Arguments exactly as the pack's Remediate handler builds them from the engine's request."""
    struct = struct_pb2.Struct()
    struct.update(wire)
    props = unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(struct), True))
    return ResourceValidationArgs(SECRET, props, "urn:pulumi:dev::tenancy::x::db", "db", _options(), None)


def test_remediation_marks_plain_values_secret_and_keeps_secret_ones() -> None:
    wire = {"metadata": {"name": "db"}, "stringData": {"user": "app", "password": {**_SECRET_SIG, "value": "pw"}}}
    remediated = remediate_secret_values(_remediation_args(wire))
    assert remediated is not None
    serialized = serialize_properties(remediated)
    assert serialized["stringData"] == {
        "user": {**_SECRET_SIG, "value": "app"},
        "password": {**_SECRET_SIG, "value": "pw"},
    }
    assert serialized["metadata"] == {"name": "db"}


def test_remediation_leaves_fully_secret_secrets_alone() -> None:
    wire = {"stringData": {**_SECRET_SIG, "value": {"password": "pw"}}}
    assert remediate_secret_values(_remediation_args(wire)) is None


# --- the pack itself -------------------------------------------------------------------------


def test_pack_policies_are_named_once_and_block_on_violation() -> None:
    names = [policy.name for policy in POLICIES]
    assert len(names) == len(set(names)) == 4
    levels = {policy.name: policy.enforcement_level for policy in POLICIES}
    assert levels["kubernetes-secrets-not-plaintext"] == EnforcementLevel.REMEDIATE
    assert {levels[name] for name in names if name != "kubernetes-secrets-not-plaintext"} == {
        EnforcementLevel.MANDATORY
    }


def test_pack_agrees_with_the_program_on_label_keys() -> None:
    assert labels.TENANT_KEY == TENANT_KEY


def test_pack_files_and_pins() -> None:
    manifest = yaml.safe_load((POLICY_DIR / "PulumiPolicy.yaml").read_text(encoding="utf-8"))
    assert manifest["runtime"]["name"] == "python"
    assert (POLICY_DIR / manifest["runtime"]["options"]["virtualenv"]).resolve() == PROJECT_ROOT / ".venv"
    root_pins = pins(PROJECT_ROOT / "requirements.txt")
    pack_pins = pins(POLICY_DIR / "requirements.txt")
    assert pack_pins and pack_pins.items() <= root_pins.items()


# --- the real plans --------------------------------------------------------------------------


def _records(stack: str) -> list[dict[str, Any]]:
    return [{**r.as_json(), "read": getattr(r, "read", False)} for r in plan(stack).resources]


@pytest.mark.parametrize("stack", STACKS)
def test_example_stacks_comply(stack: str) -> None:
    records = _records(stack)
    assert any(r["type"] == "kubernetes:core/v1:Namespace" for r in records)
    assert offline.check_records(records) == []


def test_offline_check_catches_a_broken_real_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [r for r in _records("prod") if r["type"] != "kubernetes:networking.k8s.io/v1:NetworkPolicy"]
    for record in records:
        if record["type"] in DATA_TYPES:
            record["protect"] = False
    violations = offline.check_records(records)
    namespaces = [
        r
        for r in records
        if r["type"] == "kubernetes:core/v1:Namespace"
        and "tenancy.io/tenant" in r["inputs"]["metadata"].get("labels", {})
    ]
    guardrail = [v for v in violations if v.policy == "tenant-namespace-guardrails"]
    assert len(guardrail) == len(namespaces)
    data = [r for r in records if r["type"] in DATA_TYPES and not r.get("read")]
    assert len([v for v in violations if v.policy == "tenant-data-protected-in-prod"]) == len(data)

    (tmp_path / "plan").mkdir()
    (tmp_path / "plan" / "resources.json").write_text(json.dumps(records), encoding="utf-8")
    assert offline.main([str(tmp_path / "plan")]) == 1
    assert "[tenant-namespace-guardrails] tenant namespace tenant-acme-prod" in capsys.readouterr().out


# --- over gRPC, as the Pulumi CLI runs it ------------------------------------------------------


@pytest.fixture(scope="module")
def analyzer() -> Iterator[Any]:
    """Start `policy_pack/__main__.py` the way the CLI does (from inside policy_pack/) and connect to it."""
    process = subprocess.Popen(
        [sys.executable, "-u", "__main__.py"], cwd=POLICY_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().decode().strip()
        assert port.isdigit(), process.stderr.read().decode() if process.stderr else port
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.kill()
        process.wait()


def _wire(res: Any) -> dict[str, Any]:
    struct = struct_pb2.Struct()
    struct.update(dict(res.props))
    return {
        "type": res.resource_type,
        "urn": res.urn,
        "name": res.name,
        "properties": struct,
        "options": analyzer_pb2.AnalyzerResourceOptions(protect=res.opts.protect),
    }


def test_served_pack_names_its_policies(analyzer: Any) -> None:
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "tenancy"
    assert {policy.name for policy in info.policies} == {policy.name for policy in POLICIES}


def test_served_pack_rejects_a_namespace_without_guard_rails(analyzer: Any) -> None:
    resources = [r for r in tenant_namespace("acme") if not r.name.endswith("-quota")]
    request = analyzer_pb2.AnalyzeStackRequest(resources=[analyzer_pb2.AnalyzerResource(**_wire(r)) for r in resources])
    diagnostics = analyzer.AnalyzeStack(request).diagnostics
    assert [(d.policyName, d.message.splitlines()[-1]) for d in diagnostics] == [
        ("tenant-namespace-guardrails", "tenant namespace tenant-acme-dev (tenant acme) has no ResourceQuota")
    ]
    assert diagnostics[0].enforcementLevel == analyzer_pb2.MANDATORY


def test_served_pack_rejects_unprotected_prod_data(analyzer: Any) -> None:
    request = analyzer_pb2.AnalyzeRequest(**_wire(resource("gcp:kms/cryptoKey:CryptoKey", "acme-key", {}, "prod")))
    diagnostics = analyzer.Analyze(request).diagnostics
    assert [d.policyName for d in diagnostics] == ["tenant-data-protected-in-prod"]


def test_served_pack_remediates_plain_text_secret_values(analyzer: Any) -> None:
    wire = _wire(_secret(stringData={"password": "hunter2"}))
    response = analyzer.Remediate(analyzer_pb2.AnalyzeRequest(**wire))
    assert [r.policyName for r in response.remediations] == ["kubernetes-secrets-not-plaintext"]
    remediated = json_format.MessageToDict(response.remediations[0].properties)
    assert remediated["stringData"]["password"] == {**_SECRET_SIG, "value": "hunter2"}
