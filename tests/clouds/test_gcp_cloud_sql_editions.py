"""Cloud SQL version x edition x machine type (components/clouds/gcp/cloud_sql.py): every instance
names its edition, and what the program asks for is checked against the data before anything is
registered (issue 24: PostgreSQL 16+ without `edition` gets Enterprise Plus from the API, which
refuses the `db-custom-*` tier the program sends)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.clouds.gcp import cloud_sql
from components.clouds.gcp.cloud_sql import api_default_edition, edition_problems, machine
from components.model.core.errors import ConfigurationError
from tests.support import EXAMPLE_TENANTS, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

_INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"
_VERSION = {"POSTGRES": "postgres", "MYSQL": "mysql"}


def _engine_version(database_version: str) -> tuple[str, str]:
    engine, _, version = database_version.partition("_")
    return _VERSION[engine], version.replace("_", ".")


def _instances(run: ProgramRun) -> list[Any]:
    instances = run.of_type(_INSTANCE)
    assert instances
    return instances


def test_the_matrix_matches_what_cloud_sql_documents() -> None:
    # PostgreSQL 16+ left to the API becomes Enterprise Plus (create-instance#machine-types).
    assert api_default_edition("postgres", "16") == "ENTERPRISE_PLUS" == api_default_edition("postgres", "17")
    assert api_default_edition("postgres", "15") == "ENTERPRISE"
    # Enterprise Plus refuses custom and shared-core machine types, Enterprise the performance-optimized.
    assert edition_problems("postgres", "16", "ENTERPRISE_PLUS", "db-custom-4-15360", False)
    assert edition_problems("postgres", "16", "ENTERPRISE", "db-perf-optimized-N-8", False)
    assert edition_problems("postgres", "16", "ENTERPRISE", "db-custom-4-15360", False) == []
    assert edition_problems("postgres", "16", "ENTERPRISE_PLUS", "db-perf-optimized-N-8", True) == []
    # MySQL 5.7 never runs on Enterprise Plus; pooling needs Enterprise Plus.
    assert [k for k, _ in edition_problems("mysql", "5.7", "ENTERPRISE_PLUS", "db-perf-optimized-N-2", False)] == [
        "version"
    ]
    assert [k for k, _ in edition_problems("postgres", "15", "ENTERPRISE", "db-custom-1-3840", True)] == ["pooling"]


@pytest.mark.parametrize("size", ["small", "medium", "large"])
@pytest.mark.parametrize("pooled", [False, True])
def test_what_the_program_asks_for_is_in_the_matrix(size: str, pooled: bool) -> None:
    edition, tier = machine(size, pooled)
    assert edition == ("ENTERPRISE_PLUS" if pooled else "ENTERPRISE")
    engines = (
        {"postgres": ["13", "14", "15", "16", "17"]}
        if pooled
        else {"postgres": ["13", "14", "15", "16", "17"], "mysql": ["5.7", "8.0", "8.4"]}
    )
    for engine, versions in engines.items():
        for version in versions:
            assert edition_problems(engine, version, edition, tier, pooled) == [], (engine, version)


def test_every_instance_of_the_prod_plan_names_an_edition_cloud_sql_accepts() -> None:
    # shared-pg16 (POSTGRES_16, db-custom-4-15360) and acme's dedicated instances.
    run = plan("prod", EXAMPLE_TENANTS)
    names = set()
    for instance in _instances(run):
        settings = instance.inputs["settings"]
        assert "edition" in settings, instance.name
        engine, version = _engine_version(instance.inputs["databaseVersion"])
        pooled = bool(settings.get("connectionPoolConfigs"))
        assert edition_problems(engine, version, settings["edition"], settings["tier"], pooled) == [], instance.name
        names.add(instance.name)
    assert "shared-pg16" in names


def test_a_tier_the_edition_refuses_fails_the_plan_naming_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were the program's Enterprise tiers Enterprise Plus machine types, the catalog refuses each
    # database and shared instance at its size, before anything is registered.
    monkeypatch.setitem(cloud_sql.TIERS, "ENTERPRISE", dict(cloud_sql.TIERS["ENTERPRISE_PLUS"]))
    tenants = write_tenants(
        tmp_path, tenant_document("shop", databases=[{"name": "main", "engine": "mysql", "version": "8.0"}])
    )
    with pytest.raises(ConfigurationError) as raised:
        plan("prod", tenants)
    fields = {(Path(p.file).name, p.field) for p in raised.value.problems}
    assert ("shop.yaml", "databases.0.size") in fields
    assert ("Pulumi.prod.yaml", "tenancy:data.sharedInstances.pg16.size") in fields


def _pooled(tmp_path: Path, environments: str) -> Any:
    database = {"name": "orders", "engine": "postgres", "version": "16", "poolSize": 20}
    tenants = write_tenants(tmp_path, tenant_document("shop", databases=[database]))
    gcp = (
        '{"project": "tenancy-prod", "region": "europe-west1", "keyRing": "tenancy-tenant-keys", '
        f'"network": "projects/tenancy-prod/global/networks/tenancy", "enterprisePlusEnvironments": {environments}}}'
    )
    return plan("prod", tenants, gcp=gcp)


def test_pool_size_outside_the_enterprise_plus_environments_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        _pooled(tmp_path, '["prod"]')
    (problem,) = raised.value.problems
    assert Path(problem.file).name == "shop.yaml" and problem.field == "databases.0.poolSize"
    assert "not in dev" in problem.message and "tenancy:gcp.enterprisePlusEnvironments" in problem.message
    # Listed: the stack accepts the cost, both instances are Enterprise Plus.
    run = _pooled(tmp_path / "both", '["dev", "prod"]')
    editions = {i.inputs["settings"]["edition"] for i in _instances(run) if i.name.startswith("shop-")}
    assert editions == {"ENTERPRISE_PLUS"}


def test_an_enterprise_plus_environment_the_stack_does_not_host_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        _pooled(tmp_path, '["dev", "prd"]')
    found = {(Path(p.file).name, p.field) for p in raised.value.problems}
    assert ("Pulumi.prod.yaml", "tenancy:gcp.enterprisePlusEnvironments") in found
