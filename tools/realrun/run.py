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

from components.model.catalog.stack_config import parse_settings
from tools.realrun import checks, cluster, seed, toolchain
from tools.realrun.engine import EngineSetup, open_stack, stack_config
from tools.realrun.kube import api_client
from tools.realrun.report import Report

STACK = "dev"


def run_overrides(tenants: Path) -> dict[str, object]:
    """What the run changes in the dev stack's config, and why each."""
    return {
        # The control plane's kubeconfig context instead of kind's.
        "tenancy:cluster": {"name": "tenancy", "context": cluster.KUBECONFIG_CONTEXT},
        # Charts cannot be pulled here: their CRDs are seeded instead (seed.py).
        "tenancy:installs": {"sharedSecretPlaceholders": True, "managedElsewhere": True},
        # A copy of tenants/, which the lifecycle checks edit.
        "tenancy:tenantsDir": str(tenants),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy realrun", description=__doc__)
    parser.parse_args(argv)
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
    with cluster.control_plane(folder / "cluster", binaries) as plane:
        report.check(
            "control plane", True, f"{plane.server} (etcd, kube-apiserver, controller-manager, scheduler, kwok)"
        )
        api = api_client(plane.kubeconfig)
        seed.create_nodes(api, seed.node_manifests(settings))
        crds = seed.install_crds(api, seed.crd_documents(seed.chart_names(settings), seed.shared_crds()))
        report.check("seed", True, f"{len(settings.node_pools) + 1} kwok nodes, {len(crds)} CRDs")
        setup = EngineSetup(folder / "engine", plane.kubeconfig, engine_bin, secrets.token_hex(16))
        stack = open_stack(setup, STACK, document, engine_bin.parent)
        checks.run_all(checks.Run(report, stack, setup, api, document["config"], tenants, binaries["kubectl"].parent))
        plane.check_alive()
    return report.close()


if __name__ == "__main__":
    sys.exit(main())
