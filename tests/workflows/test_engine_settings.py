"""The engine settings every Pulumi command runs with: the same for CI, `make` and the bench."""

from __future__ import annotations

import pytest

from tools.ci.engine_settings import GO_COLLECTOR, PARALLEL, command_env, main


@pytest.mark.parametrize("command", ["preview", "drift"])
def test_previews_skip_checkpoints_and_pace_the_go_collector(command: str) -> None:
    assert command_env(command, {}) == {**GO_COLLECTOR, **PARALLEL, "PULUMI_SKIP_CHECKPOINTS": "true"}


@pytest.mark.parametrize("command", ["up", "destroy", "refresh"])
def test_updates_keep_their_checkpoints(command: str) -> None:
    # An interrupted `up` is recoverable only from its per-step checkpoints.
    assert command_env(command, {}) == {**GO_COLLECTOR, **PARALLEL}


def test_a_variable_the_caller_set_keeps_its_value() -> None:
    settings = command_env("preview", {"GOGC": "100", "PULUMI_SKIP_CHECKPOINTS": "false"})
    assert "GOGC" not in settings and "PULUMI_SKIP_CHECKPOINTS" not in settings
    assert settings == {"GOMEMLIMIT": GO_COLLECTOR["GOMEMLIMIT"], **PARALLEL}


def test_main_prints_one_setting_per_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOGC", "GOMEMLIMIT", "PULUMI_PARALLEL", "PULUMI_SKIP_CHECKPOINTS"):
        monkeypatch.delenv(name, raising=False)
    assert main(["preview"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{name}={value}" for name, value in command_env("preview", {}).items()]
    assert main([]) == 2
