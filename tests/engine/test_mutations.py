"""Each engine rule fails when the plan loses what it checks: a recorded plan that keeps every rule
(test_invariants.py) is mutated in memory (an explicit provider, a dependency, a retain dropped)
and the rule must name the resource that lost it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.engine.conftest import Mixes
from tests.engine.mixes import disabled_providers, records
from tools.plan.engine_rules import (
    PlanGraph,
    check_plan,
    crds_after_installs,
    deleted_with_namespaces,
    explicit_invoke_providers,
    explicit_providers,
    grants_before_use,
    kept_dependencies,
    namespaces_before_objects,
    protected_namespaces,
    unique_urns,
)
from tools.plan.harness import ProgramRun, run_program

Records = list[dict[str, Any]]


def _urn(plan: Records, name: str) -> str:
    (urn,) = [str(r["urn"]) for r in plan if r["name"] == name]
    return urn


def _mutated(plan: Records, name: str, **changes: Any) -> Records:
    """The plan with the resource `name` changed (top-level fields; the rest shared, unchanged)."""
    urn = _urn(plan, name)
    return [{**r, **changes} if r["urn"] == urn else r for r in plan]


def _without_dependencies(plan: Records, name: str, *dropped: str) -> Records:
    record = next(r for r in plan if r["name"] == name)
    gone = {_urn(plan, d) for d in dropped}
    assert gone <= set(record["dependencies"]), (name, dropped)
    return _mutated(plan, name, dependencies=[d for d in record["dependencies"] if d not in gone])


def _named(violations: list[Any]) -> set[str]:
    return {v.urn.rpartition("::")[2] for v in violations}


def test_recorded_plans_start_clean(mix_plans: Mixes, dev_plan: ProgramRun, prod_plan: ProgramRun) -> None:
    # The mutations below start from these; a finding here would make them prove nothing.
    assert check_plan(records(dev_plan), disabled_providers("dev")) == []
    assert check_plan(records(prod_plan), disabled_providers("prod")) == []
    for stack in ("prod", "prod-aws"):
        for lifecycle in ("active", "decommissioned"):
            assert check_plan(records(mix_plans[(stack, lifecycle)]), disabled_providers(stack)) == []


def test_dropping_an_explicit_provider_from_a_read_is_named(mix_plans: Mixes) -> None:
    for stack in ("prod", "prod-aws"):
        plan = _mutated(records(mix_plans[(stack, "active")]), "shared-pg16-admin-read", provider=None)
        violations = explicit_providers(PlanGraph(plan), disabled_providers(stack))
        assert _named(violations) == {"shared-pg16-admin-read"}
        assert "read names no provider" in violations[0].message


def test_dropping_an_explicit_provider_from_a_resource_is_named(dev_plan: ProgramRun) -> None:
    plan = _mutated(records(dev_plan), "acme-dev-namespace", provider=None)
    violations = explicit_providers(PlanGraph(plan), disabled_providers("dev"))
    assert _named(violations) == {"acme-dev-namespace"}
    assert "default kubernetes provider" in violations[0].message
    # A package the stack does not disable (random) may use its default provider.
    assert explicit_providers(PlanGraph(plan), []) == []


def test_dropping_the_wait_for_the_key_grants_is_named(prod_plan: ProgramRun) -> None:
    # The tenant key waits for the ring's grants; without that, its instances and secrets race them.
    plan = _without_dependencies(
        records(prod_plan), "acme-prod-key", "tenancy-sql-agent-keys", "tenancy-secrets-agent-keys"
    )
    violations = grants_before_use(PlanGraph(plan))
    named = _named(violations)
    assert {"acme-prod-db-orders-instance", "acme-prod-db-legacy-billing-instance"} <= named
    assert "acme-prod-secret-session-key-secret" in named
    assert all(name.startswith("acme-prod-") for name in named)
    assert any("tenancy-sql-agent-keys" in v.message for v in violations)


def test_dropping_one_grant_names_only_what_that_service_encrypts(prod_plan: ProgramRun) -> None:
    plan = _without_dependencies(records(prod_plan), "northwind-prod-key", "tenancy-sql-agent-keys")
    assert _named(grants_before_use(PlanGraph(plan))) == {"northwind-prod-db-ledger-instance"}


def test_dropping_the_wait_for_the_operator_install_is_named(dev_plan: ProgramRun) -> None:
    # Every tenant waits for the installs through its Tenant component's dependsOn.
    plan = _mutated(records(dev_plan), "acme", dependencies=[])
    named = _named(crds_after_installs(PlanGraph(plan)))
    assert {"acme-dev-db-orders-cluster", "acme-prod-db-orders-cluster", "acme-prod-db-legacy-billing-mariadb"} <= named
    assert all(name.startswith("acme-") for name in named)


def test_dropping_the_wait_for_flux_is_named(dev_plan: ProgramRun) -> None:
    plan = _without_dependencies(records(dev_plan), "acme-dev-app-web", "flux-release")
    violations = crds_after_installs(PlanGraph(plan))
    assert _named(violations) == {"acme-dev-app-web"}
    assert "flux-release" in violations[0].message


def test_a_custom_resource_nobody_installs_is_named(prod_plan: ProgramRun) -> None:
    plan = _mutated(records(prod_plan), "acme-dev-app-web", type="kubernetes:widgets.example.com/v1:Widget")
    violations = crds_after_installs(PlanGraph(plan))
    assert _named(violations) == {"acme-dev-app-web"}
    assert "not on the documented prerequisites" in violations[0].message


def test_dropping_the_wait_for_the_namespace_is_named(dev_plan: ProgramRun) -> None:
    plan = _without_dependencies(records(dev_plan), "acme-dev-quota", "acme-dev-namespace")
    assert _named(namespaces_before_objects(PlanGraph(plan))) == {"acme-dev-quota"}


def test_a_component_deleted_with_a_namespace_passes_it_to_cluster_scoped_children(dev_plan: ProgramRun) -> None:
    # The engine copies deletedWith from the parent (source_eval.go inheritFromParent): with it on
    # the tenant's component, its prod Namespace would be "deleted with" the dev one and left behind.
    plan = records(dev_plan)
    assert deleted_with_namespaces(PlanGraph(plan)) == []
    plan = _mutated(plan, "acme", deletedWith=_urn(plan, "acme-dev-namespace"))
    violations = deleted_with_namespaces(PlanGraph(plan))
    assert "acme-prod-namespace" in _named(violations)
    assert all("inherited from its parent" in v.message for v in violations if v.urn.endswith("acme-prod-namespace"))
    # Objects inside the dev namespace that inherit it are what the option is for.
    assert "acme-dev-quota" not in _named(violations)


def test_a_cluster_scoped_object_deleted_with_a_namespace_is_named(dev_plan: ProgramRun) -> None:
    plan = records(dev_plan)
    plan = _mutated(plan, "acme-prod-namespace", deletedWith=_urn(plan, "acme-dev-namespace"))
    assert _named(deleted_with_namespaces(PlanGraph(plan))) == {"acme-prod-namespace"}


def test_an_object_deleted_with_a_namespace_holding_data_is_named(dev_plan: ProgramRun) -> None:
    # What the real run found: a RoleBinding deleted "with" acme's protected dev namespace is
    # dropped from the state, live, when the namespace's deletion is refused.
    plan = records(dev_plan)
    assert protected_namespaces(PlanGraph(plan)) == []
    plan = _mutated(plan, "acme-dev-admin", deletedWith=_urn(plan, "acme-dev-namespace"))
    violations = protected_namespaces(PlanGraph(plan))
    assert _named(violations) == {"acme-dev-admin"}
    assert "protected" in violations[0].message


def test_a_component_deleted_with_a_namespace_holding_data_passes_it_on_and_is_named(dev_plan: ProgramRun) -> None:
    plan = records(dev_plan)
    plan = _mutated(plan, "acme", deletedWith=_urn(plan, "acme-dev-namespace"))
    assert {"acme-dev-admin", "acme-dev-db-orders-pooler"} <= _named(protected_namespaces(PlanGraph(plan)))


def test_an_object_that_does_not_wait_for_the_isolation_of_a_namespace_holding_data_is_named(
    dev_plan: ProgramRun,
) -> None:
    # The pooler holds no data and may be deleted; waiting for the isolation keeps the policy
    # until the protected Cluster's deletion is refused, so the data stays isolated.
    plan = _without_dependencies(records(dev_plan), "acme-dev-db-orders-pooler", "acme-dev-isolation")
    violations = protected_namespaces(PlanGraph(plan))
    assert _named(violations) == {"acme-dev-db-orders-pooler"}
    assert "acme-dev-isolation" in violations[0].message


def test_dropping_a_retain_from_what_a_retained_instance_uses_is_named(mix_plans: Mixes) -> None:
    plan = _mutated(records(mix_plans[("prod-aws", "decommissioned")]), "acme-prod-databases", retainOnDelete=False)
    violations = kept_dependencies(PlanGraph(plan))
    assert _named(violations) == {"acme-prod-db-orders-instance", "acme-prod-db-legacy-billing-instance"}
    assert all("acme-prod-databases" in v.message for v in violations)


def test_dropping_a_retain_from_a_released_key_is_named(mix_plans: Mixes) -> None:
    # The released secrets are encrypted with the released key: the key must stay with them.
    plan = _mutated(records(mix_plans[("prod", "decommissioned")]), "acme-prod-key", retainOnDelete=False)
    named = _named(kept_dependencies(PlanGraph(plan)))
    assert "acme-prod-db-orders-instance" in named and "acme-prod-secret-session-key-secret" in named


def test_a_retained_parent_retains_children_that_leave_it_unset(mix_plans: Mixes) -> None:
    # The engine inherits retainOnDelete from the parent where a child leaves it unset.
    plan = records(mix_plans[("prod-aws", "decommissioned")])
    group = next(r for r in plan if r["name"] == "acme-prod-databases")
    plan = _mutated(plan, "acme-prod-databases", retainOnDelete=False)
    plan = [{**r, "retainOnDelete": True} if r["urn"] == group["parent"] else r for r in plan]
    assert kept_dependencies(PlanGraph(plan)) == []


def test_an_invoke_without_a_provider_is_recorded_and_named(tmp_path: Path) -> None:
    # A program of two invokes of a disabled package: one with the stack's provider, one without.
    program = tmp_path / "__main__.py"
    program.write_text(
        "import pulumi\n"
        "import pulumi_aws as aws\n"
        "provider = aws.Provider('aws', region='eu-west-1')\n"
        "aws.get_caller_identity()\n"
        "aws.get_region(opts=pulumi.InvokeOptions(provider=provider))\n",
        encoding="utf-8",
    )
    run = run_program("prod-aws", {}, program=program)
    violations = explicit_invoke_providers(run.invokes, disabled_providers("prod-aws"))
    assert [v.urn for v in violations] == ["aws:index/getCallerIdentity:getCallerIdentity"]
    assert "InvokeOptions(provider=...)" in violations[0].message
    # The engine's own functions never take a provider.
    assert explicit_invoke_providers([("pulumi:pulumi:readStackOutputs", None)], ["*"]) == []


def test_dropping_the_grants_themselves_is_named(prod_plan: ProgramRun) -> None:
    plan = [r for r in records(prod_plan) if r["type"] != "gcp:kms/keyRingIAMMember:KeyRingIAMMember"]
    violations = grants_before_use(PlanGraph(plan))
    encrypted = {
        r.name
        for r in prod_plan.resources
        if r.type in ("gcp:sql/databaseInstance:DatabaseInstance", "gcp:secretmanager/secret:Secret")
        and prod_plan.tenant_of(r)
    }
    assert _named(violations) == encrypted
    assert all("nothing in this plan lets" in v.message for v in violations)


def test_a_urn_registered_twice_is_named(dev_plan: ProgramRun) -> None:
    plan = records(dev_plan)
    (quota,) = [r for r in plan if r["name"] == "acme-dev-quota"]
    violations = unique_urns(PlanGraph([*plan, dict(quota)]))
    assert [(v.rule, v.urn) for v in violations] == [("unique-urn", quota["urn"])]
    assert unique_urns(PlanGraph(plan)) == []
