"""The soft/hard tenant mix for the benchmark, and the per-tenant object cost docs/virtual-clusters.md states."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vcluster.helpers import run_tenants
from tools.plan.harness import ProgramRun
from tools.scale.bench_tenants import typical_tenant
from tools.scale.tenant_mix import hard_tenant, tenant_mix


def test_the_mix_spreads_the_hard_share_evenly() -> None:
    mix = tenant_mix(10, 0.3)
    hard = [index for index, tenant in enumerate(mix) if tenant.get("isolation") == "virtual-cluster"]
    assert hard == [0, 3, 7]
    assert [t["name"] for t in mix] == [typical_tenant(i)["name"] for i in range(10)]
    assert not any("isolation" in t for t in tenant_mix(5, 0))
    assert all(t["isolation"] == "virtual-cluster" for t in tenant_mix(5, 1))
    with pytest.raises(ValueError):
        tenant_mix(5, 1.5)


def test_a_hard_tenant_costs_fifteen_more_resources_than_a_soft_one(tmp_path: Path) -> None:
    """Two environments: 9 objects in dev and 8 in read-only prod (issue 43's workload ServiceAccount,
    installer ServiceAccount and installer RoleBinding among them), less 2 RoleBindings in dev
    (admin, operator and viewer groups become one viewer binding on the host)."""
    soft = run_tenants(tmp_path / "soft", typical_tenant(1))
    hard = run_tenants(tmp_path / "hard", hard_tenant(1))

    def count(run_: ProgramRun, env: str) -> int:
        return sum(1 for r in run_.resources if r.name.startswith(f"t00001-{env}-"))

    assert count(hard, "dev") - count(soft, "dev") == 9 - 2
    assert count(hard, "prod") - count(soft, "prod") == 8
    assert len(hard.resources) - len(soft.resources) == 15 + 4  # and, once per cluster, the three roles
