"""A mix of soft (namespace) and hard (virtual-cluster) tenants, for the benchmark and for sizing.

    tenancy tenant-mix --tenants 200 --hard 0.25 [--stack dev] [--write DIR] [--measure]

`tenant_mix()` is what a benchmark calls to include hard tenants: the benchmark's typical tenant
(tools/scale/bench.py), every n-th one with `isolation: virtual-cluster` and the quota tier that holds
it, nothing else different, so a comparison isolates what the virtual cluster costs. `--measure`
plans the mix under mocks (the real program, tools/plan/harness.py) and prints resources and program
seconds per soft and per hard tenant, measured by planning all-soft and all-hard sets of the same
size in fresh runs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from tools.plan.harness import run_stack
from tools.scale.bench_tenants import typical_tenant


def hard_tenant(index: int) -> dict[str, Any]:
    """The benchmark's typical tenant with both environments as virtual clusters, on the medium tier:
    the control plane and CoreDNS (a CPU limit each, the chart's 8Gi ephemeral-storage limit on the
    control plane) do not fit beside a pooled database in the small tier's share per environment
    (components/model/checks/quota_budget.py refuses it). The tier changes no resource count."""
    return {**typical_tenant(index), "isolation": "virtual-cluster", "quota": {"tier": "medium"}}


def tenant_mix(count: int, hard_share: float) -> list[dict[str, Any]]:
    """`count` typical tenants of which `round(count * hard_share)`, spread evenly, are hard."""
    if not 0 <= hard_share <= 1:
        raise ValueError("hard_share is a fraction between 0 and 1")
    hard = round(count * hard_share)
    chosen = {round(i * count / hard) for i in range(hard)} if hard else set()
    return [hard_tenant(i) if i in chosen else typical_tenant(i) for i in range(count)]


def write_tenants(documents: list[dict[str, Any]], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for document in documents:
        (directory / f"{document['name']}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    return directory


def _plan(documents: list[dict[str, Any]], stack: str) -> tuple[int, float]:
    """Resources registered for the tenants (cluster-wide parts excluded) and program seconds."""
    with tempfile.TemporaryDirectory() as directory:
        tenants = write_tenants(documents, Path(directory) / "tenants")
        start = time.perf_counter()
        run = run_stack(stack, {"tenancy:tenantsDir": str(tenants)})
        seconds = time.perf_counter() - start
    return sum(1 for r in run.resources if run.tenant_of(r) is not None), seconds


def per_tenant(count: int, stack: str) -> dict[str, dict[str, float]]:
    """Resources and program milliseconds per tenant, all-soft against all-hard, same size."""
    figures: dict[str, dict[str, float]] = {}
    for kind, make in (("soft", typical_tenant), ("hard", hard_tenant)):
        resources, seconds = _plan([make(i) for i in range(count)], stack)
        figures[kind] = {"resources": resources / count, "ms": 1000 * seconds / count}
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy tenant-mix", description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=100, help="how many tenants the mix has (default 100)")
    parser.add_argument("--hard", type=float, default=0.1, help="share of virtual-cluster tenants (0..1)")
    parser.add_argument("--stack", default="dev", help="stack to plan with --measure (default dev)")
    parser.add_argument("--write", type=Path, help="write the mix's tenant files here")
    parser.add_argument("--measure", action="store_true", help="plan all-soft and all-hard sets and compare")
    args = parser.parse_args(argv)
    mix = tenant_mix(args.tenants, args.hard)
    if args.write is not None:
        write_tenants(mix, args.write)
        print(f"wrote {len(mix)} tenant files ({sum('isolation' in t for t in mix)} hard) to {args.write}")
    if args.measure:
        print(
            json.dumps({"stack": args.stack, "tenants": args.tenants, **per_tenant(args.tenants, args.stack)}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
