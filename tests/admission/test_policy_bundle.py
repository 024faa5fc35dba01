"""The PolicyBundle as planned: its objects, their schema, the version switch, the rollout switch,
the settings rules, and that adding a tenant changes data but never a policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.core.labels import AUTHORIZED_DOMAINS_KEY, GROUPS_KEY, TENANT_KEY
from tests.cel_admission import AdmissionChain, CelEngine, Request
from tests.k8s_schema import validate_builtin
from tests.support import EXAMPLE_TENANTS, kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tests.vcluster.helpers import stack_virtual_clusters
from tools.plan.harness import ProgramRun

BUNDLE_KINDS = {
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
}
VALIDATING = {
    "tenancy-hostnames-ingress",
    "tenancy-hostnames-routes",
    "tenancy-hostnames-certificates",
    "tenancy-hostnames-listenersets",
    "tenancy-gateway-parents-routes",
    "tenancy-gateway-parents-listenersets",
    "tenancy-ingress-annotations",
    "tenancy-route-annotations",
    "tenancy-services",
    "tenancy-node-pool",
    "tenancy-workloads",
    "tenancy-platform-owned",
    "tenancy-platform-owned-namespaces",
    "tenancy-rbac",
    "tenancy-scheduling-pods",
    "tenancy-scheduling-templates",
    "tenancy-scheduling-cronjobs",
    "tenancy-scheduling-disruption-budgets",
    "tenancy-scheduling-operator-labels",
    "tenancy-service-account-token-secrets",
    "tenancy-pod-status",
    "tenancy-volume-claims",
    "tenancy-network-policies",
    "tenancy-secret-stores",
    "tenancy-suspension",
    "tenancy-suspension-load-balancers",
    "tenancy-suspension-flux",
    "tenancy-flux",
    "tenancy-vcluster-kubeconfig",
    "tenancy-vcluster-control-plane",
    "tenancy-vcluster-release",
    "tenancy-syncer-account",
    "tenancy-vcluster-selector",
    "tenancy-pod-binding",
    "tenancy-preview-dry-run",
}
# Matched by who asks, in every namespace and cluster-scoped (components/admission/rules/preview_dry_run.py).
CLUSTER_WIDE = {"tenancy-preview-dry-run"}


def bundle_objects(run: ProgramRun) -> list[dict[str, Any]]:
    return [obj for obj in kubernetes_objects(run) if obj["kind"] in BUNDLE_KINDS]


def names(run: ProgramRun, kind: str) -> set[str]:
    return {obj["metadata"]["name"] for obj in objects_of_kind(run, kind)}


def test_both_stacks_plan_every_validating_policy_with_its_binding(example_plan: ProgramRun) -> None:
    assert names(example_plan, "ValidatingAdmissionPolicy") == VALIDATING
    bindings = objects_of_kind(example_plan, "ValidatingAdmissionPolicyBinding")
    assert {b["spec"]["policyName"] for b in bindings} == VALIDATING
    assert all(b["spec"]["validationActions"] == ["Deny"] for b in bindings)
    [bundle] = example_plan.of_type("tenancy:index:PolicyBundle")
    children = [r for r in example_plan.resources if r.parent == bundle.urn]
    assert children and all(r.type.startswith("kubernetes:admissionregistration.k8s.io/v1:") for r in children)
    # Cluster-wide: nothing of the bundle belongs to a tenant.
    assert all(example_plan.tenant_of(r) is None for r in children)


def test_mutating_policy_only_where_the_cluster_has_it(dev_plan: ProgramRun, prod_plan: ProgramRun) -> None:
    # dev runs 1.36 (MutatingAdmissionPolicy v1), prod 1.34 (validating rule only).
    assert names(dev_plan, "MutatingAdmissionPolicy") == {"tenancy-node-pool-injection"}
    assert names(dev_plan, "MutatingAdmissionPolicyBinding") == {"tenancy-node-pool-injection"}
    assert names(prod_plan, "MutatingAdmissionPolicy") == set()
    assert names(prod_plan, "MutatingAdmissionPolicyBinding") == set()


def test_every_bundle_object_matches_the_official_schema(dev_plan: ProgramRun, prod_plan: ProgramRun) -> None:
    for run, version in ((dev_plan, "1.36"), (prod_plan, "1.34")):
        objects = bundle_objects(run)
        assert len(objects) >= 2 * len(VALIDATING)
        for obj in objects:
            validate_builtin(obj, version)


def test_policies_select_tenant_namespaces_and_fail_closed(example_plan: ProgramRun) -> None:
    for kind in ("ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"):
        for policy in objects_of_kind(example_plan, kind):
            spec = policy["spec"]
            assert spec["failurePolicy"] == "Fail"
            if policy["metadata"]["name"] in CLUSTER_WIDE:
                assert set(spec["matchConstraints"]) == {"resourceRules"}
                continue
            # The Namespace lock selects the Namespace object itself (old or new, see
            # rules/platform_owned.py); every other policy selects objects in tenant namespaces.
            selector = "objectSelector" if policy["metadata"]["name"].endswith("-namespaces") else "namespaceSelector"
            assert set(spec["matchConstraints"]) == {"resourceRules", selector}
            expressions = spec["matchConstraints"][selector]["matchExpressions"]
            assert {"key": TENANT_KEY, "operator": "Exists"} in expressions


def test_every_expression_compiles_in_cel_cpp(dev_plan: ProgramRun) -> None:
    engine = CelEngine()
    count = 0
    for obj in bundle_objects(dev_plan):
        spec = obj["spec"]
        mutation = obj["kind"] == "MutatingAdmissionPolicy"
        texts = [v["expression"] for v in spec.get("variables", [])]
        texts += [c["expression"] for c in spec.get("matchConditions", [])]
        for validation in spec.get("validations", []):
            texts += [
                validation["expression"],
                *([validation["messageExpression"]] if "messageExpression" in validation else []),
            ]
        texts += [m["jsonPatch"]["expression"] for m in spec.get("mutations", [])]
        for text in texts:
            engine.compile(text, mutation=mutation)
            count += 1
    assert count > 40


def test_namespaces_carry_the_policy_data(dev_plan: ProgramRun) -> None:
    namespaces = {
        n["metadata"]["name"]: n["metadata"].get("annotations", {}) for n in objects_of_kind(dev_plan, "Namespace")
    }
    # Each environment its own names: dev never holds prod's (components/model/tenant_file/hostnames.py).
    assert namespaces["tenant-acme-prod"][AUTHORIZED_DOMAINS_KEY].split(",") == [
        "acme.tenants.dev.example.com",
        "acme-prod.tenants.dev.example.com",
        "shop.acme-corp.example",
        "*.api.acme-corp.example",
    ]
    annotations = namespaces["tenant-acme-dev"]
    assert annotations[AUTHORIZED_DOMAINS_KEY] == "acme-dev.tenants.dev.example.com"
    assert annotations[GROUPS_KEY] == "acme-admins,acme-oncall,acme-support"
    assert annotations["tenancy.io/allow-load-balancer"] == "false"


def test_adding_a_tenant_changes_data_never_a_policy(tmp_path: Path, dev_plan: ProgramRun) -> None:
    tenants = tmp_path / "tenants"
    tenants.mkdir()
    for path in EXAMPLE_TENANTS.glob("*.yaml"):
        (tenants / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    write_tenants(
        tenants,
        tenant_document("zeta", nodePool="research", domains=["zeta.example.org"], access={"admin": ["zeta-admins"]}),
    )
    bigger = plan("dev", tenants_dir=tenants)
    assert "zeta" in bigger.outputs["tenants"]

    def dump(run: ProgramRun) -> list[str]:
        return sorted(yaml.safe_dump(obj, sort_keys=True) for obj in bundle_objects(run))

    assert dump(bigger) == dump(dev_plan)
    # The new tenant's data went to its namespaces instead.
    zeta = [n for n in objects_of_kind(bigger, "Namespace") if n["metadata"]["name"] == "tenant-zeta-prod"]
    assert "zeta.example.org" in zeta[0]["metadata"]["annotations"][AUTHORIZED_DOMAINS_KEY]


PROD_IDENTITY = {"platformIdentities": {"users": ["tenancy-ci@tenancy-prod.iam.gserviceaccount.com"]}}


def test_rollout_switch_turns_a_rule_into_warnings() -> None:
    # A config override replaces all of tenancy:policy, so it repeats the stack's platform identity.
    run = plan("prod", policy=json.dumps({"actions": {"hostnames": "Warn", "services": "Audit"}, **PROD_IDENTITY}))
    actions = {
        b["metadata"]["name"]: b["spec"]["validationActions"]
        for b in objects_of_kind(run, "ValidatingAdmissionPolicyBinding")
    }
    assert actions["tenancy-hostnames-ingress"] == ["Warn", "Audit"]
    assert actions["tenancy-services"] == ["Audit"]
    assert actions["tenancy-rbac"] == ["Deny"]
    chain = AdmissionChain(kubernetes_objects(run))
    [namespace] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == "tenant-acme-prod"]
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "tenant-acme-prod"},
        "spec": {"rules": [{"host": "evilacme.tenants.example.com"}]},
    }
    decision = chain.admit(
        Request("CREATE", "networking.k8s.io/v1/ingresses", "Ingress", object=ingress, namespace_object=namespace)
    )
    assert decision.allowed
    assert decision.warnings == decision.audit
    assert "evilacme.tenants.example.com is outside the domains of tenant acme" in decision.warnings[0]


def test_disabled_bundle_registers_no_policy() -> None:
    run = plan("dev", policy=json.dumps({"enabled": False}))
    assert bundle_objects(run) == []


def test_injection_can_be_switched_off_on_136() -> None:
    run = plan("dev", policy=json.dumps({"injectNodePool": False}))
    assert names(run, "MutatingAdmissionPolicy") == set()
    assert names(run, "ValidatingAdmissionPolicy") == VALIDATING


def test_registry_allow_list_reaches_the_workload_policy() -> None:
    # The example virtual clusters need their images from the allow-list too (docs/virtual-clusters.md).
    mirror = stack_virtual_clusters("dev", imageRegistry="ghcr.io/example/vcluster")
    allowed = json.dumps({"allowedRegistries": ["ghcr.io/example", "registry.acme-corp.example"]})
    run = plan("dev", policy=allowed, virtualClusters=mirror)
    [policy] = [
        p for p in objects_of_kind(run, "ValidatingAdmissionPolicy") if p["metadata"]["name"] == "tenancy-workloads"
    ]
    assert any("foreignImages" in v["expression"] for v in policy["spec"]["validations"])


@pytest.mark.parametrize(
    ("policy", "field", "message"),
    [
        ({"actions": {"hostnames": "Block"}}, "tenancy:policy.actions.hostnames", "'Deny', 'Warn' or 'Audit'"),
        (
            {"actions": {"dns": "Warn"}},
            "tenancy:policy.actions.dns",
            "unknown field 'dns'; allowed here: flux, hostnames",
        ),
        (
            {"allowedRegistries": ["https://ghcr.io/example"]},
            "tenancy:policy.allowedRegistries.0",
            "is not an image registry prefix",
        ),
        ({"allowedRegistries": ["ghcr.io/example/"]}, "tenancy:policy.allowedRegistries.0", "no scheme, tag"),
        (
            {"platformIdentities": {"users": ["ci bot"]}},
            "tenancy:policy.platformIdentities.users.0",
            "must be a user or group name without spaces, quotes or commas; got 'ci bot'",
        ),
        (
            {"allowedPriorityClasses": ["High_Priority"]},
            "tenancy:policy.allowedPriorityClasses.0",
            "must be a lowercase DNS name",
        ),
        (
            {"ingressAnnotations": {"controllers": {"nginx.ingress.kubernetes.io": ["server snippet"]}}},
            "tenancy:policy.ingressAnnotations.controllers.nginx.ingress.kubernetes.io.0",
            "must be a name of letters and digits, separated by",
        ),
        ({"ingressAnnotations": {"nginx": []}}, "tenancy:policy.ingressAnnotations.nginx", "unknown field 'nginx'"),
    ],
)
def test_policy_settings_reject_bad_values(policy: dict[str, Any], field: str, message: str) -> None:
    raw = {"tenancy:domainSuffix": "tenants.example.com", "tenancy:policy": json.dumps(policy)}
    with pytest.raises(ConfigurationError) as error:
        parse_settings(raw, "Pulumi.test.yaml")
    [problem] = error.value.problems
    assert problem.field == field
    assert message in problem.message


def test_group_names_must_survive_the_namespace_annotation(tmp_path: Path) -> None:
    # Groups reach tenancy-rbac as one comma-separated annotation; a comma would split a name.
    tenants = write_tenants(tmp_path / "tenants", tenant_document("acme", access={"admin": ["ops,admins"]}))
    with pytest.raises(ConfigurationError) as error:
        plan("dev", tenants_dir=tenants)
    [problem] = error.value.problems
    assert problem.field == "access.admin.0"
    assert (
        problem.message == "Value error, 'ops,admins' contains ',', which would split it into two groups in admission"
    )
