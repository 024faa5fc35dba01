"""`tenancy realrun --bench 10,100,300`: the real engine's wall time at a tenant count, beside the
mock plan's (docs/scale.md#the-real-engine).

For each count: a fresh control plane seeded as the real run seeds it, that many typical tenants
(tools/scale/bench_tenants.py, the benchmark's own), then, timed, the offline plan under mocks, the
first `pulumi preview` (an empty state), `pulumi up`, a second `pulumi preview` (the no-change path
every pull request takes once a stack exists), and an `up` after one tenant's quota tier changed
(what a merge deploys once the stack exists). Previews run as CI runs them (without per-step
checkpoints, tools/ci/pulumi_run.py `command_env`); updates keep theirs, except the first `up` under
`--first-up-without-checkpoints`, which separates the engine's own cost from the state backend's
(docs/scale.md#the-real-engine). Each step's wall time and the CPU time of the engine and its
plugins (the CLI and the provider, children of this process) are recorded. Numbers, not assertions:
the figures go to docs/scale.md by hand, with the machine they were measured on.
"""

from __future__ import annotations

import resource
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.model.catalog.stack_config import parse_settings
from tools.realrun import cluster, toolchain
from tools.realrun.checks import edit_tenant_file
from tools.realrun.conditions import ConditionStandIn
from tools.realrun.engine import CI_DISPLAY, EngineSetup, as_ci_runs, open_stack, stack_config
from tools.realrun.report import Report
from tools.realrun.setup import run_overrides, seed_cluster
from tools.scale.bench_tenants import typical_tenant
from tools.scale.tenant_mix import write_tenants


@dataclass(frozen=True)
class Timed:
    """One step: wall seconds, and CPU seconds of the engine processes that ended during it."""

    wall: float
    engine_cpu: float


def _timed(step: Callable[[], Any]) -> tuple[Timed, Any]:
    started, before = time.monotonic(), _children_cpu()
    result = step()
    return Timed(time.monotonic() - started, _children_cpu() - before), result


def _children_cpu() -> float:
    # The CLI is a child of this process (the Automation API runs it) and waits for its plugins, so
    # their CPU is counted here once the command has returned.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _change_tier(tenants: Path, name: str, tier: str) -> None:
    edit_tenant_file(tenants, name, lambda document: document.update({"quota": {"tier": tier}}))


def mock_plan(tenants: Path) -> Timed:
    """`tenancy plan` of these tenants (the program under mocks), in a process of its own."""
    overrides = [f"--set=tenancy:tenantsDir={tenants}", '--set=tenancy:installs={"managedElsewhere": true}']
    command = [sys.executable, "-m", "tools.cli.main", "plan", "--stack", "dev", *overrides]
    timed, _ = _timed(lambda: subprocess.run(command, cwd=toolchain.ROOT, capture_output=True, check=True))
    return timed


def measure(
    count: int, folder: Path, binaries: dict[str, Path], engine_bin: Path, first_up_checkpoints: bool = True
) -> dict[str, Any]:
    """The figures for one tenant count (seconds, and the resources `up` created)."""
    tenants = write_tenants([typical_tenant(i) for i in range(count)], folder / "tenants")
    document = stack_config("dev", run_overrides(tenants))
    settings = parse_settings(document["config"], "Pulumi.dev.yaml")
    mock = mock_plan(tenants)
    with cluster.control_plane(folder / "cluster", binaries, toolchain.kwok_stages()) as plane:
        api = seed_cluster(Report(), plane, settings)
        setup = EngineSetup(folder / "engine", plane.kubeconfig, engine_bin, secrets.token_hex(16))
        stack = open_stack(setup, "dev", document, engine_bin.parent)
        # The operators' conditions the program awaits, as in the real run (conditions.py): without
        # them `up` would wait for each awaited object until its timeout.
        with ConditionStandIn(api):
            with as_ci_runs(stack, "preview"):
                first_preview, _ = _timed(lambda: stack.preview(**CI_DISPLAY))
            with as_ci_runs(stack, "up" if first_up_checkpoints else "preview"):
                up_time, up = _timed(lambda: stack.up(**CI_DISPLAY))
            with as_ci_runs(stack, "preview"):
                no_change, _ = _timed(lambda: stack.preview(**CI_DISPLAY, expect_no_changes=True))
            _change_tier(tenants, typical_tenant(0)["name"], "medium")
            edit, edited = _timed(lambda: stack.up(**CI_DISPLAY))
    return {
        "tenants": count,
        "resources": _count(up, "create"),
        "mock_plan": mock,
        "preview": first_preview,
        "up": up_time,
        "up_checkpoints": first_up_checkpoints,
        "no_change_preview": no_change,
        "edit_up": edit,
        "edit_updates": _count(edited, "update"),
    }


def _count(result: Any, operation: str) -> int:
    changes = result.summary.resource_changes or {}
    return sum(n for op, n in changes.items() if str(op) in (operation, f"OpType.{operation.upper()}"))


def _cell(step: Timed) -> str:
    return f"{step.wall:.1f} ({step.engine_cpu:.0f})"


def main(sizes: list[int], first_up_checkpoints: bool = True) -> int:
    binaries = toolchain.build()
    root = toolchain.ROOT / ".realrun" / "bench"
    shutil.rmtree(root, ignore_errors=True)
    engine_bin = root / "engine" / "bin"
    engine_bin.mkdir(parents=True)
    for name in ("pulumi", "pulumi-resource-kubernetes"):
        (engine_bin / name).symlink_to(binaries[name])
    print("wall seconds (CPU seconds of the CLI and the provider)")
    print(
        "| tenants | resources | mock plan | first preview | up | up checkpoints | no-change preview "
        "| one tenant's tier changed: up | its updates |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for count in sizes:
        row = measure(count, root / str(count), binaries, engine_bin, first_up_checkpoints)
        print(
            f"| {row['tenants']} | {row['resources']} | {row['mock_plan'].wall:.1f} | {_cell(row['preview'])} | "
            f"{_cell(row['up'])} | {'yes' if row['up_checkpoints'] else 'no'} | {_cell(row['no_change_preview'])} | "
            f"{_cell(row['edit_up'])} | {row['edit_updates']} |",
            flush=True,
        )
    return 0
