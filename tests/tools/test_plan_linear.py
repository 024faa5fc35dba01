"""The plan command stays linear: work per resource is constant as tenants double.

Counted, not timed, so a busy machine cannot make it flake: every pass over the run's resources
and every step of tenant attribution is counted, and the count per resource written must not grow
with the number of tenants (the old `tenant_of` rebuilt an index of all resources per call).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.support import write_tenants
from tools.plan.harness import ProgramRun, RecordedResource, run_stack
from tools.plan.run import group_by_tenant, summary, write_plan
from tools.scale.bench_tenants import typical_tenant


class CountingList(list[RecordedResource]):
    """A list of resources that counts every element handed out by a full pass over it."""

    visited = 0

    def __iter__(self) -> Iterator[RecordedResource]:
        CountingList.visited += len(self)
        return super().__iter__()


def _resource(urn: str, type_: str, name: str, parent: str | None, **inputs: Any) -> RecordedResource:
    return RecordedResource(
        urn=urn,
        type=type_,
        name=name,
        parent=parent,
        custom=bool(inputs),
        inputs=dict(inputs),
        protect=False,
        retain_on_delete=False,
        deleted_with=None,
        provider=None,
        dependencies=[],
        aliases=[],
        ignore_changes=[],
    )


def _synthetic_run(tenants: int) -> ProgramRun:
    """Tenants shaped like the program's: Tenant -> component -> objects, plus cluster-wide parts."""
    resources = [
        _resource(
            "urn:cluster-role", "kubernetes:rbac/v1:ClusterRole", "role", None, apiVersion="v1", kind="ClusterRole"
        )
    ]
    for index in range(tenants):
        tenant, part = f"urn:t{index}", f"urn:t{index}/guardrails"
        resources.append(_resource(tenant, "tenancy:index:Tenant", f"t{index}", None))
        resources.append(_resource(part, "tenancy:index:Guardrails", f"t{index}-guardrails", tenant))
        for kind in ("Namespace", "ResourceQuota", "LimitRange", "NetworkPolicy"):
            metadata = {"name": f"{kind.lower()}-{index}"}
            resources.append(
                _resource(
                    f"{part}/{kind}",
                    f"kubernetes:core/v1:{kind}",
                    kind,
                    part,
                    apiVersion="v1",
                    kind=kind,
                    metadata=metadata,
                )
            )
    return ProgramRun(stack="dev", resources=CountingList(sorted(resources, key=lambda r: r.urn)))


def _work_per_resource(run: ProgramRun, out: Path) -> float:
    CountingList.visited = 0
    write_plan(run, out)
    summary(run)
    return (CountingList.visited + run.visits) / len(run.resources)


def test_plan_work_per_resource_is_constant_as_tenants_double(tmp_path: Path) -> None:
    work = [_work_per_resource(_synthetic_run(size), tmp_path / str(size)) for size in (100, 200, 400)]
    # Exactly the same passes at every size (the per-tenant resources are identical in shape).
    assert max(work) - min(work) < 0.05, work
    assert work[0] < 10, work


def test_tenant_attribution_visits_each_resource_at_most_twice() -> None:
    run = _synthetic_run(300)
    groups = group_by_tenant(run)
    assert run.visits <= 2 * len(run.resources)
    assert len(groups["t7"]) == 6 and groups["_cluster"][0].name == "role"
    group_by_tenant(run)
    assert run.visits <= 2 * len(run.resources), "the index is built once, not per call"


def _real_work_per_resource(tmp_path: Path, tenants: int) -> float:
    directory = write_tenants(tmp_path / f"tenants-{tenants}", *(typical_tenant(i) for i in range(tenants)))
    run = run_stack("dev", {"tenancy:tenantsDir": str(directory)})
    run.resources = CountingList(run.resources)
    return _work_per_resource(run, tmp_path / f"plan-{tenants}")


def test_the_real_program_plan_does_constant_work_per_resource(tmp_path: Path) -> None:
    small, large = _real_work_per_resource(tmp_path, 2), _real_work_per_resource(tmp_path, 4)
    # Cluster-wide resources dilute the per-resource figure at small sizes; it must never grow.
    assert large <= small + 0.05, (small, large)


def test_manifests_read_back_as_the_registered_objects(tmp_path: Path) -> None:
    run = _synthetic_run(3)
    write_plan(run, tmp_path)
    written = yaml.safe_load((tmp_path / "manifests" / "t1" / "namespace-namespace-1.yaml").read_text())
    assert written == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "namespace-1"}}
