"""The real Pulumi engine driving the dev stack (docs/real-run.md).

The CLI is the one toolchain.py builds (or finds on PATH); the state is a file backend under
.realrun/state, secrets are under a passphrase, and the Kubernetes provider is the binary of
toolchain.py, found by the engine on PATH. The program is the repository's own `__main__.py`, run
in this process through the Automation API's language server: the Python language host
(`pulumi-language-python`) is not served by the Go module proxy at any version, so the CLI connects
to the language server that the Python SDK itself ships (the same one every inline Automation API
program uses). The engine, the providers, the state and the diffs are the real ones; what this does
not exercise is the language host's own part: finding the virtualenv and launching the program.
"""

from __future__ import annotations

import os
import runpy
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pulumi import automation as auto

from tools.ci.engine_settings import command_env
from tools.realrun.toolchain import ROOT

PROJECT = "tenancy"

# How every real-run and bench update drives the engine: as CI does (tools/ci/pulumi_run.py
# `command_argv`: `--diff --non-interactive --color never`). Without `--diff` the Automation API's
# engine renders the non-interactive progress display, whose cost grows with the square of the
# resources (measured: docs/scale.md#the-real-engine); the checks read events, not the display.
CI_DISPLAY: dict[str, Any] = {"color": "never", "diff": True}


@contextmanager
def as_ci_runs(stack: auto.Stack, command: str) -> Iterator[None]:
    """The engine's environment for `command` as CI sets it (tools/ci/engine_settings.py `command_env`:
    previews skip the per-step checkpoint they discard anyway), for the calls inside the block."""
    before = stack.workspace.env_vars
    stack.workspace.env_vars = {**before, **command_env(command)}
    try:
        yield
    finally:
        stack.workspace.env_vars = before


@dataclass(frozen=True)
class EngineSetup:
    """Where the engine keeps its files for one run."""

    folder: Path  # .realrun/<run>/
    kubeconfig: Path
    bin_dir: Path  # holds `bin/pulumi` and the provider binaries
    passphrase: str

    @property
    def project(self) -> Path:
        return self.folder / "project"

    @property
    def state(self) -> Path:
        return self.folder / "state"

    def env(self) -> dict[str, str]:
        return {
            "PULUMI_BACKEND_URL": f"file://{self.state}",
            "PULUMI_CONFIG_PASSPHRASE": self.passphrase,
            "PULUMI_HOME": str(self.folder / "pulumi-home"),
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            # Nothing is downloaded: every plugin is one toolchain.py built.
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "KUBECONFIG": str(self.kubeconfig),
            "PATH": os.pathsep.join([str(self.bin_dir), os.environ.get("PATH", "")]),
        }


def run_program() -> None:
    """The repository's program, exactly as `pulumi up` would run `__main__.py`."""
    runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")


def stack_config(base_stack: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The committed stack file with `overrides` (keys `tenancy:...`) replacing its values."""
    committed = yaml.safe_load((ROOT / f"Pulumi.{base_stack}.yaml").read_text())
    document = dict(committed)
    document["config"] = {**committed.get("config", {}), **overrides}
    return document


def open_stack(setup: EngineSetup, stack: str, config: Mapping[str, Any], pulumi_root: Path) -> auto.Stack:
    """The stack `stack` in a scratch project beside the run: the committed Pulumi.yaml, and the stack
    file written from `config` (the engine also writes the passphrase's salt there, never into the
    repository's own stack files)."""
    setup.project.mkdir(parents=True, exist_ok=True)
    setup.state.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "Pulumi.yaml", setup.project / "Pulumi.yaml")
    stack_file = setup.project / f"Pulumi.{stack}.yaml"
    existing = yaml.safe_load(stack_file.read_text()) if stack_file.exists() else {}
    document = dict(config)
    if existing and "encryptionsalt" in existing:
        document["encryptionsalt"] = existing["encryptionsalt"]
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    options = auto.LocalWorkspaceOptions(
        work_dir=str(setup.project),
        env_vars=setup.env(),
        secrets_provider="passphrase",
        pulumi_command=auto.PulumiCommand(root=str(pulumi_root)),
    )
    return auto.create_or_select_stack(stack, project_name=PROJECT, program=run_program, opts=options)
