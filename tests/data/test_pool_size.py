"""`poolSize` is honoured or refused on every cloud, never silently ignored.

Local: a CloudNativePG Pooler (PgBouncer) in front of the dedicated cluster. GCP: Cloud SQL managed
connection pooling, which exists only on the Enterprise Plus edition, so the instance asks for that
edition and one of its machine types. AWS (no RDS Proxy yet) and shared instances: refused with the
file and field, before anything is registered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from tests.support import objects_of_kind, plan, tenant_document, write_tenants

POOLED = {"name": "orders", "engine": "postgres", "version": "16", "size": "medium", "poolSize": 40}


def _plan(stack: str, tmp_path: Path, **database: Any) -> Any:
    return plan(stack, write_tenants(tmp_path, tenant_document("acme", databases=[{**POOLED, **database}])))


def test_local_puts_a_pgbouncer_pooler_in_front(tmp_path: Path) -> None:
    poolers = objects_of_kind(_plan("dev", tmp_path), "Pooler")
    assert {p["spec"]["pgbouncer"]["parameters"]["default_pool_size"] for p in poolers} == {"40"}


def test_gcp_asks_for_the_edition_that_has_managed_pooling(tmp_path: Path) -> None:
    run = _plan("prod", tmp_path)
    instances = [r for r in run.resources if r.type.endswith(":DatabaseInstance") and r.name.startswith("acme-")]
    assert instances  # one per environment
    for instance in instances:
        settings = instance.inputs["settings"]
        assert settings["edition"] == "ENTERPRISE_PLUS"
        assert settings["tier"] == "db-perf-optimized-N-4"
        assert settings["connectionPoolConfigs"] == [
            {"connectionPoolingEnabled": True, "flags": [{"name": "max_pool_size", "value": "40"}]}
        ]
    unpooled = _plan("prod", tmp_path / "plain", poolSize=None)
    plain = [r for r in unpooled.resources if r.type.endswith(":DatabaseInstance") and r.name.startswith("acme-")]
    # Unpooled: Enterprise, named explicitly (left out, PostgreSQL 16 would get Enterprise Plus).
    assert plain and {r.inputs["settings"]["edition"] for r in plain} == {"ENTERPRISE"}
    assert {r.inputs["settings"]["tier"] for r in plain} == {"db-custom-2-7680"}


@pytest.mark.parametrize(("stack", "placement"), [("prod-aws", None), ("prod", "shared"), ("prod-aws", "shared")])
def test_where_no_pool_runs_pool_size_is_refused(tmp_path: Path, stack: str, placement: str | None) -> None:
    with pytest.raises(ConfigurationError) as raised:
        _plan(stack, tmp_path, **({"placement": placement} if placement else {}))
    found = [str(p) for p in raised.value.problems if p.field == "databases.0.poolSize"]
    assert len(found) == 1, raised.value.problems
    assert "a connection pool is not available for placement" in found[0] and "remove poolSize" in found[0]
