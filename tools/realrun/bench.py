"""`tenancy realrun --bench 10,100,300`: the real engine's wall time and every process's CPU at a
tenant count, beside the mock plan's, measured as users run it (docs/scale.md#the-real-engine).

For each count: a fresh control plane seeded as the real run seeds it, that many typical tenants
(tools/scale/bench_tenants.py, the benchmark's own), then, timed, the offline plan under mocks, the
first `pulumi preview` (an empty state), `pulumi up`, a second `pulumi preview` (the no-change path
every pull request takes once a stack exists), and an `up` after one tenant's quota tier changed
(what a merge deploys once the stack exists).

As users run it: each engine command is the CLI in a process of its own with the command line CI
uses (tools/ci/pulumi_run.py `command_argv` and `command_env`, without the policy pack, whose
analyzer needs the language host), and the program in a process of its own
(tools/realrun/program_server.py: the SDK's language server for `__main__.py`, one per command, as
the language host starts one). `up` is the update alone (`--skip-preview`, as the Automation API
runs it). The operators' stand-in (conditions.py) runs only during the updates, which wait for it;
during previews nothing but the engine, its provider, the program and the control plane runs. Each
step records its wall time (from starting the program's process to the CLI's exit), the CPU
seconds and peak memory of the program, the CLI and the provider, and the CPU of the API server,
etcd and the rest of the control plane. The machine's load average is printed before and after,
and everything goes to `--json FILE`. Numbers, not assertions: the figures go to docs/scale.md by
hand, with the load they were measured under.
"""

from __future__ import annotations

import json
import os
import re
import resource
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.model.catalog.stack_config import parse_settings
from tools.ci.engine_settings import command_env
from tools.ci.pulumi_run import command_argv
from tools.realrun import cluster, toolchain, usage
from tools.realrun.checks import edit_tenant_file
from tools.realrun.conditions import ConditionStandIn
from tools.realrun.engine import EngineSetup, open_stack, stack_config
from tools.realrun.report import Report
from tools.realrun.setup import run_overrides, seed_cluster
from tools.scale.bench_tenants import typical_tenant
from tools.scale.shard_budget import engine_figures_from_rows
from tools.scale.tenant_mix import write_tenants

STACK = "dev"
# The processes whose CPU each step records; the control plane's are read before and after.
PROGRAM, CLI, PROVIDER = "program", "cli", "provider"
CONTROL_PLANE = ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok")
PORT_WAIT_SECONDS = 120


@dataclass(frozen=True)
class Timed:
    """The mock plan: wall seconds and the CPU seconds of its process."""

    wall: float
    cpu: float


@dataclass(frozen=True)
class Step:
    """One engine command: wall seconds, CPU seconds and peak MB per process, and the changes the
    CLI's summary counted (create, update, same, delete, replace)."""

    wall: float
    cpu: dict[str, float]
    peak_mb: dict[str, float]
    changes: dict[str, int] = field(default_factory=dict)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def mock_plan(tenants: Path) -> Timed:
    """`tenancy plan` of these tenants (the program under mocks), in a process of its own."""
    overrides = [f"--set=tenancy:tenantsDir={tenants}", '--set=tenancy:installs={"managedElsewhere": true}']
    command = [sys.executable, "-m", "tools.cli.main", "plan", "--stack", STACK, *overrides]
    started, before = time.monotonic(), _children_cpu()
    subprocess.run(command, cwd=toolchain.ROOT, capture_output=True, check=True)
    return Timed(time.monotonic() - started, _children_cpu() - before)


def cli_argv(pulumi: Path, command: str, port: int, extra: Sequence[str] = ()) -> list[str]:
    """CI's command line for `command` (tools/ci/pulumi_run.py), run against the program's server:
    without `--policy-pack` (its analyzer is launched through the language host, which the run
    lacks), and `up` without its preview, as the Automation API runs it."""
    argv = command_argv(command, STACK)
    at = argv.index("--policy-pack")
    del argv[at : at + 2]
    argv[0] = str(pulumi)
    if command == "up":
        argv.append("--skip-preview")
    return [*argv, f"--client=127.0.0.1:{port}", "--exec-kind", "auto.inline", *extra]


def cli_environment(
    setup: Mapping[str, str], command: str, settings: Mapping[str, str], checkpoints: bool | None
) -> dict[str, str]:
    """What the CLI's environment adds: the run's (state, passphrase, kubeconfig), CI's for the
    command (previews skip the per-step checkpoints, tools/ci/engine_settings.py `command_env`), the
    settings under test, and no checkpoints for a first `up` measured without them."""
    env = {**setup, **command_env(command), **settings}
    if checkpoints is False:
        env["PULUMI_SKIP_CHECKPOINTS"] = "true"
    return env


CHANGE_WORDS = {
    "to create": "create",
    "created": "create",
    "to update": "update",
    "updated": "update",
    "unchanged": "same",
    "to delete": "delete",
    "deleted": "delete",
    "to replace": "replace",
    "replaced": "replace",
}
_CHANGE_LINE = re.compile(r"^\s+[-+~]*\s*(\d+) (" + "|".join(CHANGE_WORDS) + r")\s*$")


def summary_changes(output: str) -> dict[str, int]:
    """The counts of the CLI's closing `Resources:` block (`+ 1015 to create`, `2 unchanged`)."""
    starts = [found.end() for found in re.finditer(r"(?m)^Resources:\n", output)]
    if not starts:
        return {}
    block = output[starts[-1] :]
    changes: dict[str, int] = {}
    for line in block.splitlines():
        found = _CHANGE_LINE.match(line)
        if found is None:
            if line.strip() and not line.startswith(" "):
                break
            continue
        operation = CHANGE_WORDS[found.group(2)]
        changes[operation] = changes.get(operation, 0) + int(found.group(1))
    return changes


@dataclass
class Engine:
    """The engine as users run it: one program process and one CLI process per command."""

    plane: cluster.ControlPlane
    setup: EngineSetup
    pulumi: Path
    logs: Path
    env: Mapping[str, str] = field(default_factory=dict)  # settings under test (e.g. PULUMI_PARALLEL_DIFF)
    profile: bool = False
    _count: int = 0

    def step(self, label: str, command: str, *extra: str, checkpoints: bool | None = None) -> Step:
        """Run `pulumi <command>` once; fails with the end of the CLI's output when it fails."""
        self._count += 1
        self.logs.mkdir(parents=True, exist_ok=True)
        stem = self.logs / f"{self._count:02d}-{label}"
        cli_env = {**os.environ, **cli_environment(self.setup.env(), command, self.env, checkpoints)}
        plane_before = self._plane_cpu()
        started = time.monotonic()
        program, port = self._start_program(stem, cli_env)
        argv = cli_argv(self.pulumi, command, port, extra)
        if self.profile:
            argv[1:1] = [f"--profiling={stem}-cli"]
        with stem.with_suffix(".log").open("wb") as log:
            cli = self.plane.owner.start(f"pulumi-{label}", argv, env=cli_env, cwd=self.setup.project, stdout=log)
            with usage.Sampler(cli.pid) as sampled:
                _, status, used = os.wait4(cli.pid, 0)
            cli.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        program_usage = usage.read(program.pid)
        self.plane.owner.stop([program])
        plane_after = self._plane_cpu()
        output = stem.with_suffix(".log").read_text(errors="replace")
        if cli.returncode != 0:
            raise RuntimeError(f"pulumi {command} ({label}) exited {cli.returncode}:\n{output[-3000:]}")
        provider = sampled.total("pulumi-resource")
        cli_total = used.ru_utime + used.ru_stime  # the CLI and the plugins it waited for
        cpu = {
            PROGRAM: program_usage.cpu if program_usage else 0.0,
            CLI: max(0.0, cli_total - provider.cpu),
            PROVIDER: provider.cpu,
            **{name: plane_after[name] - plane_before.get(name, 0.0) for name in plane_after},
        }
        cli_usage = sampled.last.get(cli.pid)
        peak = {
            PROGRAM: program_usage.peak_mb if program_usage else 0.0,
            CLI: cli_usage.peak_mb if cli_usage else 0.0,
            PROVIDER: provider.peak_mb,
        }
        return Step(wall, cpu, peak, summary_changes(output))

    def _start_program(self, stem: Path, env: Mapping[str, str]) -> tuple[subprocess.Popen[bytes], int]:
        port_file = stem.with_name(f"{stem.name}-program.port")
        command = [sys.executable, "-m", "tools.realrun.program_server", str(port_file)]
        if self.profile:
            command += ["--profile", f"{stem}-program.prof"]
        with stem.with_name(f"{stem.name}-program.log").open("wb") as log:
            program = self.plane.owner.start("program", command, env=env, cwd=toolchain.ROOT, stdout=log)
        deadline = time.monotonic() + PORT_WAIT_SECONDS
        while not port_file.exists():
            if program.poll() is not None or time.monotonic() > deadline:
                tail = stem.with_name(f"{stem.name}-program.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the program's language server did not start:\n{tail}")
            time.sleep(0.05)
        return program, int(port_file.read_text())

    def _plane_cpu(self) -> dict[str, float]:
        return {
            name: usage.cpu_seconds(process.pid)
            for name, process in self.plane.processes.items()
            if name in CONTROL_PLANE
        }


def _change_tier(tenants: Path, name: str, tier: str) -> None:
    edit_tenant_file(tenants, name, lambda document: document.update({"quota": {"tier": tier}}))


@dataclass(frozen=True)
class Options:
    """What a bench run varies: the first `up`'s checkpoints, settings under test, profiling."""

    first_up_checkpoints: bool = True
    env: Mapping[str, str] = field(default_factory=dict)
    profile: bool = False


def measure(
    count: int, folder: Path, binaries: Mapping[str, Path], engine_bin: Path, options: Options
) -> dict[str, Any]:
    """The figures for one tenant count."""
    load_before = usage.load()
    tenants = write_tenants([typical_tenant(i) for i in range(count)], folder / "tenants")
    document = stack_config(STACK, run_overrides(tenants))
    settings = parse_settings(document["config"], f"Pulumi.{STACK}.yaml")
    mock = mock_plan(tenants)
    with cluster.control_plane(folder / "cluster", binaries, toolchain.kwok_stages()) as plane:
        api = seed_cluster(Report(), plane, settings)
        setup = EngineSetup(folder / "engine", plane.kubeconfig, engine_bin, secrets.token_hex(16))
        open_stack(setup, STACK, document, engine_bin.parent)  # creates the stack and writes its config
        engine = Engine(plane, setup, engine_bin / "pulumi", setup.folder, options.env, options.profile)
        steps: dict[str, Step] = {}
        steps["first_preview"] = engine.step("first-preview", "preview")
        # The operators' conditions the updates wait for (conditions.py), only while they run.
        with ConditionStandIn(api):
            steps["up"] = engine.step("up", "up", checkpoints=options.first_up_checkpoints)
        steps["noop_preview"] = engine.step("noop-preview", "preview", "--expect-no-changes")
        _change_tier(tenants, typical_tenant(0)["name"], "medium")
        with ConditionStandIn(api):
            steps["edit_up"] = engine.step("edit-up", "up")
        state = setup.state / ".pulumi" / "stacks" / "tenancy" / f"{STACK}.json"
        state_mb = state.stat().st_size / 2**20 if state.exists() else 0.0
    return row(count, mock, steps, options, state_mb, load_before, usage.load())


def row(
    count: int,
    mock: Timed,
    steps: Mapping[str, Step],
    options: Options,
    state_mb: float,
    load_before: Sequence[float],
    load_after: Sequence[float],
) -> dict[str, Any]:
    """One tenant count's figures, as `--json` writes them."""
    return {
        "tenants": count,
        "resources": steps["up"].changes.get("create", 0),
        "mock_plan_s": round(mock.wall, 2),
        "mock_plan_cpu_s": round(mock.cpu, 2),
        "first_preview_s": round(steps["first_preview"].wall, 2),
        "up_s": round(steps["up"].wall, 2),
        "up_checkpoints": options.first_up_checkpoints,
        "noop_preview_s": round(steps["noop_preview"].wall, 2),
        "edit_up_s": round(steps["edit_up"].wall, 2),
        "edit_updates": steps["edit_up"].changes.get("update", 0),
        "noop_preview_over_mock_plan": round(steps["noop_preview"].wall / mock.wall, 2) if mock.wall else None,
        "cpu_s": {name: {k: round(v, 2) for k, v in step.cpu.items()} for name, step in steps.items()},
        "peak_mb": {name: {k: round(v, 1) for k, v in step.peak_mb.items()} for name, step in steps.items()},
        "changes": {name: step.changes for name, step in steps.items()},
        "state_mb": round(state_mb, 1),
        # What the CLI ran with besides the per-step checkpoints: CI's engine settings
        # (tools/ci/engine_settings.py) and those under test, so each row says what it measured.
        "env": {**command_env("up"), **options.env},
        "load_before": [round(value, 2) for value in load_before],
        "load_after": [round(value, 2) for value in load_after],
    }


def _say_load(when: str) -> None:
    one, five, fifteen = usage.load()
    print(f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)", flush=True)


def main(
    sizes: list[int], options: Options | None = None, json_file: Path | None = None, figures_file: Path | None = None
) -> int:
    options = options or Options()
    _say_load("before")
    binaries = toolchain.build()
    root = toolchain.ROOT / ".realrun" / "bench"
    shutil.rmtree(root, ignore_errors=True)
    engine_bin = root / "engine" / "bin"
    engine_bin.mkdir(parents=True)
    for name in ("pulumi", "pulumi-resource-kubernetes"):
        (engine_bin / name).symlink_to(binaries[name])
    print("wall seconds (CPU seconds: program/CLI/provider/API server)")
    print(
        "| tenants | resources | mock plan | first preview | up | up checkpoints | no-change preview "
        "| no-change / mock | one tenant's tier changed: up | its updates | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows: list[dict[str, Any]] = []
    for count in sizes:
        figures = measure(count, root / str(count), binaries, engine_bin, options)
        rows.append(figures)
        if json_file is not None:  # after each count, so an interrupted run keeps what it measured
            _write_json(json_file, rows)
        print(_markdown(figures), flush=True)
    _say_load("after")
    if figures_file is not None:
        figures_file.write_text(json.dumps(engine_figures_from_rows(rows, os.cpu_count() or 1), indent=2) + "\n")
        print(f"engine figures written to {figures_file}")
    return 0


def _markdown(figures: Mapping[str, Any]) -> str:
    def cell(step: str) -> str:
        cpu = figures["cpu_s"][step]
        parts = [cpu.get(name, 0.0) for name in (PROGRAM, CLI, PROVIDER, "kube-apiserver")]
        return f"{figures[step + '_s']:.1f} ({'/'.join(f'{value:.0f}' for value in parts)})"

    return (
        f"| {figures['tenants']} | {figures['resources']} | {figures['mock_plan_s']:.1f} | {cell('first_preview')} | "
        f"{cell('up')} | {'yes' if figures['up_checkpoints'] else 'no'} | {cell('noop_preview')} | "
        f"{figures['noop_preview_over_mock_plan']} | {cell('edit_up')} | {figures['edit_updates']} | "
        f"{figures['load_before'][0]:.1f} to {figures['load_after'][0]:.1f} |"
    )


def _write_json(target: Path, rows: list[dict[str, Any]]) -> None:
    document = {"cpus": os.cpu_count(), "rows": rows}
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document, indent=2) + "\n")
