"""The real run and the bench drive the engine's display as CI does (the display's cost is measured
there, docs/scale.md#the-real-engine)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tools.ci.engine_settings import command_env
from tools.ci.pulumi_run import command_argv
from tools.realrun.engine import CI_DISPLAY, as_ci_runs


def test_the_real_run_shows_the_diff_and_no_colour_like_ci() -> None:
    for command in ("preview", "up", "drift"):
        argv = command_argv(command, "dev")
        assert ("--diff" in argv) == CI_DISPLAY["diff"], command
        assert argv[argv.index("--color") + 1] == CI_DISPLAY["color"], command


def test_previews_run_without_per_step_checkpoints_and_the_environment_comes_back() -> None:
    workspace = SimpleNamespace(env_vars={"PULUMI_CONFIG_PASSPHRASE": "x"})
    stack: Any = SimpleNamespace(workspace=workspace)
    with as_ci_runs(stack, "preview"):
        # CI's engine settings for a preview (tools/ci/engine_settings.py), checkpoints skipped among them.
        assert workspace.env_vars == {"PULUMI_CONFIG_PASSPHRASE": "x", **command_env("preview")}
        assert workspace.env_vars["PULUMI_SKIP_CHECKPOINTS"] == "true"
    assert workspace.env_vars == {"PULUMI_CONFIG_PASSPHRASE": "x"}
    with as_ci_runs(stack, "up"):
        assert "PULUMI_SKIP_CHECKPOINTS" not in workspace.env_vars
