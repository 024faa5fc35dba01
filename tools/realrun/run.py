"""`tenancy realrun`: the dev stack's real `pulumi up` against a real control plane (docs/real-run.md).

The sequence: build or find the binaries (toolchain.py); start the control plane (cluster.py); seed
it with the pools' nodes and the charts' CRDs (seed.py); then drive the real engine (engine.py)
through `up`, a second `up --expect-no-changes`, a refreshed preview, and the checks of checks.py.
Each result is one line; the last line counts them, and the exit code is 0 only when all passed.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import sys
from pathlib import Path

from pulumi import automation as auto

from components.model.catalog.stack_config import parse_settings
from tools.realrun import checks, cluster, processes, toolchain
from tools.realrun.conditions import ConditionStandIn
from tools.realrun.controllers import platform as controllers
from tools.realrun.dataplane import live as dataplane
from tools.realrun.engine import CI_DISPLAY, EngineSetup, open_stack, stack_config
from tools.realrun.kube import dynamic
from tools.realrun.lifecycle import run_lifecycle
from tools.realrun.report import Report
from tools.realrun.setup import STACK, run_overrides, seed_cluster


def destroy_without_data(report: Report, folder: Path, binaries: dict[str, Path], engine_bin: Path) -> None:
    """`pulumi destroy` of a stack holding no data succeeds, on a control plane of its own (the
    dev stack's cluster-wide objects share names with any other stack's)."""
    tenants = folder / "tenants-nodata"
    tenants.mkdir()
    shutil.copy(toolchain.ROOT / "tenants" / "status-page.yaml", tenants)
    overrides = {
        **run_overrides(tenants),
        "tenancy:installs": {
            "managedElsewhere": True,
            "charts": stack_config(STACK, {})["config"]["tenancy:installs"]["charts"],
        },
        "tenancy:data": {"sharedSecrets": {}},
    }
    document = stack_config(STACK, overrides)
    settings = parse_settings(document["config"], f"Pulumi.{STACK}.yaml")
    with cluster.control_plane(folder / "cluster-nodata", binaries, toolchain.kwok_stages()) as plane:
        api = seed_cluster(report, plane, settings)
        served = controllers.start(report, plane, api, binaries, settings, stack=STACK).served
        setup = EngineSetup(folder / "engine-nodata", plane.kubeconfig, engine_bin, secrets.token_hex(16))
        stack = open_stack(setup, STACK, document, engine_bin.parent)
        try:
            with ConditionStandIn(api, served):
                up = stack.up(**CI_DISPLAY)
                destroyed = stack.destroy(color="never")
            left = [
                r["urn"]
                for r in (stack.export_stack().deployment or {}).get("resources", [])
                if "pulumi:pulumi:Stack" not in r["type"]
            ]
            namespaces = [
                n["metadata"]["name"]
                for n in dynamic(api).resources.get(api_version="v1", kind="Namespace").get().to_dict()["items"]
                if n["metadata"]["name"].startswith("tenant-")
            ]
            report.check(
                "destroy of a stack without data",
                destroyed.summary.result == "succeeded" and not left and not namespaces,
                f"up {up.summary.result}, destroy {destroyed.summary.result}; {len(left)} resources left in the "
                f"state; tenant namespaces left {namespaces}",
            )
        except auto.CommandError as error:
            report.check("destroy of a stack without data", False, str(error)[-1500:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tenancy realrun",
        description="Build (or find) the Pulumi CLI, the Kubernetes provider and a Kubernetes control plane, "
        "run the dev stack's real `pulumi up` against it on loopback, and print one line per check "
        "(docs/real-run.md). Exit 0 only when every check passed.",
    )
    parser.add_argument(
        "--bench", metavar="COUNTS", help="time the real engine at these tenant counts (e.g. 10,100,300)"
    )
    parser.add_argument(
        "--first-up-without-checkpoints",
        action="store_true",
        help="with --bench: run the first `up` without per-step checkpoints, to separate the engine's "
        "cost from the state backend's (never for a real stack: docs/scale.md#the-real-engine)",
    )
    parser.add_argument(
        "--json", metavar="FILE", type=Path, help="with --bench: also write the figures as JSON to FILE"
    )
    parser.add_argument(
        "--figures",
        metavar="FILE",
        type=Path,
        help="with --bench: write the real engine's per-resource figures the shard layout reads "
        "(`tenancy shards layout`, docs/scale.md; needs a count whose first `up` kept its checkpoints)",
    )
    parser.add_argument(
        "--env",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="with --bench: set this in the engine's environment, to measure a setting (repeatable)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="with --bench: profile the program (cProfile) and the CLI (`pulumi --profiling`) of each step",
    )
    args = parser.parse_args(argv)
    # One owner for every process either command starts, whatever ends it (processes.py).
    if args.bench:
        from tools.realrun.bench import Options
        from tools.realrun.bench import main as bench

        counts = [int(count) for count in args.bench.split(",")]
        unset = [pair for pair in args.env if "=" not in pair]
        if unset:
            parser.error(f"--env takes NAME=VALUE, got {unset[0]!r}")
        options = Options(
            first_up_checkpoints=not args.first_up_without_checkpoints,
            env=dict(pair.split("=", 1) for pair in args.env),
            profile=args.profile,
        )
        return processes.entry_point(lambda: bench(counts, options, args.json, args.figures))
    return processes.entry_point(run)


def run() -> int:
    """The real run's sequence (the module's docstring); 0 when every check passed."""
    report = Report()
    try:
        binaries = toolchain.build(log=report.note)
    except toolchain.ToolchainError as error:
        print(f"realrun: {error}", file=sys.stderr)
        return 1
    report.check("toolchain", True, ", ".join(f"{name}={path}" for name, path in binaries.items()))
    folder = toolchain.ROOT / ".realrun" / "run"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tenants = folder / "tenants"
    shutil.copytree(toolchain.ROOT / "tenants", tenants)
    document = stack_config(STACK, run_overrides(tenants))
    settings = parse_settings(document["config"], f"Pulumi.{STACK}.yaml")
    # The CLI and provider binaries in one folder: `bin/pulumi` for the Automation API, and the
    # provider on PATH for the engine.
    engine_bin = folder / "engine" / "bin"
    engine_bin.mkdir(parents=True)
    for name in ("pulumi", "pulumi-resource-kubernetes"):
        (engine_bin / name).symlink_to(binaries[name])
    with cluster.control_plane(folder / "cluster", binaries, toolchain.kwok_stages()) as plane:
        components = "etcd, kube-apiserver, controller-manager, scheduler, kwok"
        report.check("control plane", True, f"{plane.server} ({components})")
        api = seed_cluster(report, plane, settings)
        running = controllers.start(report, plane, api, binaries, settings, tenants, stack=STACK)
        data = dataplane.start(report, plane, api, settings, binaries)
        setup = EngineSetup(folder / "engine", plane.kubeconfig, engine_bin, secrets.token_hex(16))
        stack = open_stack(setup, STACK, document, engine_bin.parent)
        with ConditionStandIn(api, running.served) as stand_in:
            run = checks.Run(report, stack, setup, api, document["config"], tenants, binaries["kubectl"].parent)
            converged = checks.run_all(run)
            if converged:
                controllers.check(report, running, api, settings, STACK)
                dataplane.check_matrix(report, data, settings, tenants, "isolation by packets", "connectivity")
            # Kept also when `up` failed: then it is what shows why.
            deployment = stack.export_stack().deployment or {}
            controllers.keep_evidence(report, running, api, deployment, folder / "evidence")
            if converged:
                run_lifecycle(
                    run,
                    while_suspended=lambda: dataplane.check_matrix(
                        report,
                        data,
                        settings,
                        tenants,
                        "isolation by packets, acme suspended",
                        "connectivity-suspended",
                    ),
                )
        report.check(
            "awaited conditions stood in for",
            not stand_in.errors,
            f"{len(stand_in.set)} objects the program awaits got their condition: "
            f"{sorted(set(stand_in.set.values()))}" + (f"; errors {stand_in.errors}" if stand_in.errors else ""),
        )
        plane.check_alive()
    destroy_without_data(report, folder, binaries, engine_bin)
    if report.close():
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
