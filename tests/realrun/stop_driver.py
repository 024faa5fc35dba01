"""`tenancy realrun` and `tenancy realrun --bench` with stand-in processes at their seams, for
tests/realrun/test_stop.py: the entry points, the process owner (tools/realrun/processes.py), the
ControlPlane and the Automation API's own way of starting the CLI are the real ones; the binaries
(`go build`, etcd, the API server, the Pulumi CLI and its provider plugin) are
tests/realrun/standin_process.py, and the steps that would talk to a cluster wait instead.

    python -m tests.realrun.stop_driver WORK realrun|bench build|seed|up|preview

PHASE is where the run waits (for the test to signal it): in the build, after the control plane
started, or in the engine's `up` or preview (the stand-in CLI with its plugin running).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pulumi import automation as auto

from tools.realrun import bench, checks, cluster, processes, run, toolchain

STANDIN = Path(__file__).with_name("standin_process.py")


def main(work: Path, command: str, phase: str) -> int:
    log = work / "processes.log"
    processes.PID_DIR = work / "pids"
    toolchain.ROOT = work  # the run's folders go under WORK, never into the checkout's .realrun
    (work / "tenants").mkdir(exist_ok=True)
    cli_root = work / "cli"
    (cli_root / "bin").mkdir(parents=True, exist_ok=True)
    cli = cli_root / "bin" / "pulumi"
    # The CLI starts its provider in a process group of its own, as pulumi's plugin host does, and
    # waits in the phase's command; any other command succeeds at once.
    cli.write_text(
        "#!/bin/sh\n"
        f'for word; do [ "$word" = {phase} ] && exec {sys.executable} {STANDIN} {log} pulumi '
        "pulumi-resource-kubernetes+group; done\n"
        "exit 0\n"
    )
    cli.chmod(0o755)

    def wait_here(name: str) -> None:
        with log.open("a") as out:
            out.write(f"phase {name}\n")
        if phase == name:
            time.sleep(600)

    def build(*_: object, **__: object) -> dict[str, Path]:
        if phase == "build":
            # `go build` and the compiler it runs, in the entry point's own process group.
            import subprocess

            subprocess.run([sys.executable, str(STANDIN), str(log), "go", "compile"], check=True)
        return {"pulumi": cli, "pulumi-resource-kubernetes": cli, "kubectl": cli}

    @contextlib.contextmanager
    def control_plane(
        folder: Path, binaries: Mapping[str, Path], kwok_stages: list[Path]
    ) -> Iterator[cluster.ControlPlane]:
        (folder / "logs").mkdir(parents=True)
        plane = cluster.ControlPlane(folder=folder, server="https://127.0.0.1:1", kubeconfig=folder / "kc", token="")
        try:
            plane.start("etcd", [sys.executable, str(STANDIN), str(log), "etcd"])
            plane.start("kube-apiserver", [sys.executable, str(STANDIN), str(log), "kube-apiserver", "apiserver-child"])
            plane.on_stop("a host change", lambda: undo(work / "undone"))
            yield plane
        finally:
            plane.stop()

    def undo(marker: Path) -> None:
        marker.write_text("undone\n")

    def seed(*_: object) -> None:
        wait_here("seed")

    def engine(verb: str) -> None:
        # What the Automation API does for every command: its own Popen of the CLI.
        command_line = auto.PulumiCommand(root=str(cli_root), skip_version_check=True)
        command_line.run([verb], cwd=str(work), additional_env={})

    class Stack:
        workspace = SimpleNamespace(env_vars={})

        def preview(self, **_: object) -> None:
            engine("preview")

        def up(self, **_: object) -> None:
            engine("up")

        def export_stack(self) -> SimpleNamespace:
            return SimpleNamespace(deployment={})

    def open_stack(setup: Any, *_: object) -> Stack:
        setup.project.mkdir(parents=True, exist_ok=True)
        return Stack()

    class StandIn:
        set: dict[str, str] = {}
        errors: list[str] = []

        def __enter__(self) -> StandIn:
            return self

        def __exit__(self, *_: object) -> None:
            return None

    toolchain.build = build
    toolchain.kwok_stages = list
    cluster.control_plane = control_plane
    for module in (run, bench):
        module.seed_cluster = seed  # type: ignore[attr-defined]
        module.open_stack = open_stack  # type: ignore[attr-defined]
        module.ConditionStandIn = lambda *_: StandIn()  # type: ignore[attr-defined]
    # The controllers (tools/realrun/controllers/) would render charts and start real processes.
    run.controllers = SimpleNamespace(  # type: ignore[assignment,attr-defined]
        start=lambda *_, **__: SimpleNamespace(served=frozenset()),
        check=lambda *_, **__: None,
        keep_evidence=lambda *_, **__: None,
    )
    # The data plane (tools/realrun/dataplane/) would install packages and change the host.
    run.dataplane = SimpleNamespace(  # type: ignore[assignment,attr-defined]
        start=lambda *_: None, check_matrix=lambda *_: None
    )
    checks.Run = lambda *_: None  # type: ignore[assignment,misc]
    checks.run_all = lambda _: engine(phase) or False  # type: ignore[assignment,func-returns-value]
    run.destroy_without_data = lambda *_: None
    bench.mock_plan = lambda *_: bench.Timed(0.0, 0.0)
    if command == "bench":
        return run.main(["--bench", "1"])
    return run.main([])


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3]))
