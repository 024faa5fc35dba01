"""`tenancy realrun --bench 10,100,300`: the real engine's wall time at a tenant count, beside the
mock plan's (docs/scale.md#the-real-engine).

For each count: a fresh control plane seeded as the real run seeds it, that many typical tenants
(tools/scale/bench_tenants.py, the benchmark's own), then, timed, the offline plan under mocks, the
first `pulumi preview` (an empty state), `pulumi up`, and a second `pulumi preview` (the no-change
path every pull request takes once a stack exists). Numbers, not assertions: the figures go to
docs/scale.md by hand, with the machine they were measured on.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from components.model.catalog.stack_config import parse_settings
from tools.realrun import cluster, toolchain
from tools.realrun.conditions import ConditionStandIn
from tools.realrun.engine import CI_DISPLAY, EngineSetup, as_ci_runs, open_stack, stack_config
from tools.realrun.report import Report
from tools.realrun.setup import run_overrides, seed_cluster
from tools.scale.bench_tenants import typical_tenant
from tools.scale.tenant_mix import write_tenants


def _timed(step: Any) -> tuple[float, Any]:
    started = time.monotonic()
    result = step()
    return time.monotonic() - started, result


def measure(count: int, folder: Path, binaries: dict[str, Path], engine_bin: Path) -> dict[str, Any]:
    """The figures for one tenant count (seconds, and the resources `up` created)."""
    tenants = write_tenants([typical_tenant(i) for i in range(count)], folder / "tenants")
    document = stack_config("dev", run_overrides(tenants))
    settings = parse_settings(document["config"], "Pulumi.dev.yaml")
    overrides = [f"--set=tenancy:tenantsDir={tenants}", '--set=tenancy:installs={"managedElsewhere": true}']
    command = [sys.executable, "-m", "tools.cli.main", "plan", "--stack", "dev", *overrides]
    mock, _ = _timed(lambda: subprocess.run(command, cwd=toolchain.ROOT, capture_output=True, check=True))
    with cluster.control_plane(folder / "cluster", binaries, toolchain.kwok_stages()) as plane:
        api = seed_cluster(Report(), plane, settings)
        setup = EngineSetup(folder / "engine", plane.kubeconfig, engine_bin, secrets.token_hex(16))
        stack = open_stack(setup, "dev", document, engine_bin.parent)
        # The operators' conditions the program awaits, as in the real run (conditions.py): without
        # them `up` would wait for each awaited object until its timeout.
        with ConditionStandIn(api):
            with as_ci_runs(stack, "preview"):
                first_preview, _ = _timed(lambda: stack.preview(**CI_DISPLAY))
            up_time, up = _timed(lambda: stack.up(**CI_DISPLAY))
            with as_ci_runs(stack, "preview"):
                no_change, _ = _timed(lambda: stack.preview(**CI_DISPLAY, expect_no_changes=True))
    created = sum(
        count for op, count in (up.summary.resource_changes or {}).items() if str(op) in ("create", "OpType.CREATE")
    )
    return {
        "tenants": count,
        "resources": created,
        "mock_plan": mock,
        "preview": first_preview,
        "up": up_time,
        "no_change_preview": no_change,
    }


def main(sizes: list[int]) -> int:
    binaries = toolchain.build()
    root = toolchain.ROOT / ".realrun" / "bench"
    shutil.rmtree(root, ignore_errors=True)
    engine_bin = root / "engine" / "bin"
    engine_bin.mkdir(parents=True)
    for name in ("pulumi", "pulumi-resource-kubernetes"):
        (engine_bin / name).symlink_to(binaries[name])
    print("| tenants | resources | mock plan s | first preview s | up s | no-change preview s |")
    print("|---|---|---|---|---|---|")
    for count in sizes:
        row = measure(count, root / str(count), binaries, engine_bin)
        print(
            f"| {row['tenants']} | {row['resources']} | {row['mock_plan']:.1f} | {row['preview']:.1f} | "
            f"{row['up']:.1f} | {row['no_change_preview']:.1f} |",
            flush=True,
        )
    return 0
