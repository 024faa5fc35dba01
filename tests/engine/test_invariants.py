"""Engine invariants (tools/plan/engine_rules.py) on the plans of every example stack and of tenant
mixes in every placement and lifecycle state: what the real engine would refuse, or order wrongly,
on a first `up`, found offline. The mutation tests (test_mutations.py) show each rule can fail."""

from __future__ import annotations

import json

import pytest

from components.model.tenant_file.spec import Lifecycle
from tests.engine.conftest import Mixes
from tests.engine.mixes import LIFECYCLES, STACKS, disabled_providers, records
from tests.support import plan
from tools.plan.engine_rules import (
    PlanGraph,
    Violation,
    api_group,
    crds_after_installs,
    deleted_with_namespaces,
    explicit_invoke_providers,
    explicit_providers,
    grants_before_use,
    isolation_of,
    kept_dependencies,
    namespaces_before_objects,
    protected_namespaces,
    unique_urns,
)
from tools.plan.harness import ProgramRun

MIXES = [(stack, lifecycle) for stack in STACKS for lifecycle in LIFECYCLES]


def _shown(violations: list[Violation]) -> str:
    return "\n".join(str(violation) for violation in violations)


def _graph(run: ProgramRun) -> PlanGraph:
    return PlanGraph(records(run))


def test_every_example_stack_disables_default_providers() -> None:
    # Without it the first rule would pass vacuously: nothing could fall back to ambient credentials.
    for stack in STACKS:
        assert {"kubernetes", "gcp", "aws"} <= set(disabled_providers(stack)), stack


def test_example_stacks_keep_every_engine_rule(any_stack_plan: ProgramRun) -> None:
    graph = _graph(any_stack_plan)
    violations = [
        *explicit_providers(graph, disabled_providers(any_stack_plan.stack)),
        *grants_before_use(graph),
        *crds_after_installs(graph),
        *namespaces_before_objects(graph),
        *deleted_with_namespaces(graph),
        *protected_namespaces(graph),
        *kept_dependencies(graph),
    ]
    assert violations == [], _shown(violations)


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_every_resource_and_read_names_its_provider(mix_plans: Mixes, stack: str, lifecycle: Lifecycle) -> None:
    graph = _graph(mix_plans[(stack, lifecycle)])
    violations = explicit_providers(graph, disabled_providers(stack))
    assert violations == [], _shown(violations)


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_customer_keys_are_used_only_after_their_grants(mix_plans: Mixes, stack: str, lifecycle: Lifecycle) -> None:
    violations = grants_before_use(_graph(mix_plans[(stack, lifecycle)]))
    assert violations == [], _shown(violations)


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_custom_resources_come_after_their_crds(mix_plans: Mixes, stack: str, lifecycle: Lifecycle) -> None:
    violations = crds_after_installs(_graph(mix_plans[(stack, lifecycle)]))
    assert violations == [], _shown(violations)


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_objects_come_after_their_namespaces(mix_plans: Mixes, stack: str, lifecycle: Lifecycle) -> None:
    violations = namespaces_before_objects(_graph(mix_plans[(stack, lifecycle)]))
    assert violations == [], _shown(violations)


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_only_objects_inside_a_namespace_are_deleted_with_it(
    mix_plans: Mixes, stack: str, lifecycle: Lifecycle
) -> None:
    violations = deleted_with_namespaces(_graph(mix_plans[(stack, lifecycle)]))
    assert violations == [], _shown(violations)


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_nothing_is_deleted_with_a_namespace_holding_data_and_its_isolation_goes_last(
    mix_plans: Mixes, stack: str, lifecycle: Lifecycle
) -> None:
    # The real run found objects deleted_with a protected namespace dropped from the state, live,
    # when an update without preview was refused at the protected data (docs/real-run.md).
    violations = protected_namespaces(_graph(mix_plans[(stack, lifecycle)]))
    assert violations == [], _shown(violations)


def test_the_dev_plan_has_namespaces_holding_data_with_isolation_and_contents(dev_plan: ProgramRun) -> None:
    # Else protected_namespaces would pass for want of cases.
    graph = _graph(dev_plan)
    for name in ("tenant-acme-dev", "tenant-acme-prod", "tenant-genomics-lab-dev"):
        (namespace,) = [
            r
            for r in graph.managed()
            if r["type"] == "kubernetes:core/v1:Namespace" and r["inputs"]["metadata"]["name"] == name
        ]
        assert graph.protected(namespace["urn"]), name
        isolation = isolation_of(graph, name)
        assert {graph.by_urn[u]["type"].rpartition(":")[2] for u in isolation} == {
            "ResourceQuota",
            "LimitRange",
            "NetworkPolicy",
        }, name
        inside = [r for r in graph.managed() if (r["inputs"].get("metadata") or {}).get("namespace") == name]
        assert len(inside) > len(isolation) + 3, name


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_nothing_a_retained_resource_uses_is_deleted(mix_plans: Mixes, stack: str, lifecycle: Lifecycle) -> None:
    violations = kept_dependencies(_graph(mix_plans[(stack, lifecycle)]))
    assert violations == [], _shown(violations)


# --- the mixes reach what the rules are about (else a rule passes for want of cases) ---------


@pytest.mark.parametrize("stack", STACKS)
def test_mixes_reach_every_placement_and_state(mix_plans: Mixes, stack: str) -> None:
    for lifecycle in LIFECYCLES:
        run = mix_plans[(stack, lifecycle)]
        tenants = {run.tenant_of(r) for r in run.resources} - {None}
        assert "sharedco" in tenants and "acme" in tenants, (stack, lifecycle)
    decommissioned = _graph(mix_plans[(stack, "decommissioned")])
    assert any(decommissioned.retained(r["urn"]) and r["tenant"] for r in decommissioned.managed()), stack


def test_mixes_hold_reads_custom_resources_and_customer_keys(mix_plans: Mixes) -> None:
    # Shared databases read their instance's admin secret on both clouds.
    for stack in ("prod", "prod-aws"):
        run = mix_plans[(stack, "active")]
        assert any(r.read and r.type.startswith(("gcp:", "aws:")) for r in run.resources), stack
    groups = {api_group(r.type) for run in mix_plans.values() for r in run.resources}
    assert {"postgresql.cnpg.io", "k8s.mariadb.com", "external-secrets.io", "helm.toolkit.fluxcd.io"} <= groups
    prod = mix_plans[("prod", "active")]
    assert any(r.inputs.get("encryptionKeyName") for r in prod.of_type("gcp:sql/databaseInstance:DatabaseInstance"))


def test_an_operator_the_stack_installs_is_waited_for_rather_than_assumed() -> None:
    # docs/runbooks/gke.md: ESO may come from `tenancy:installs`; then its objects wait for it.
    installs = {
        "charts": {
            "external-secrets": {
                "repository": "https://charts.external-secrets.io",
                "chart": "external-secrets",
                "version": "0.20.4",
                "namespace": "external-secrets",
            }
        }
    }
    run = plan("prod", installs=json.dumps(installs))
    graph = _graph(run)
    assert crds_after_installs(graph) == []
    # The edge installs charts of its own; this test is about the ESO release.
    (release,) = [
        r
        for r in run.resources
        if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs.get("chart") == "external-secrets"
    ]
    stores = [r for r in run.resources if api_group(r.type) == "external-secrets.io"]
    assert stores and all(release.urn in graph.waits_for(r.urn) for r in stores)


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_every_invoke_names_its_provider(mix_plans: Mixes, stack: str, lifecycle: Lifecycle) -> None:
    run = mix_plans[(stack, lifecycle)]
    assert explicit_invoke_providers(run.invokes, disabled_providers(stack)) == []


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_no_urn_is_registered_twice(mix_plans: Mixes, stack: str, lifecycle: Lifecycle) -> None:
    assert unique_urns(_graph(mix_plans[(stack, lifecycle)])) == []
