"""The real-engine bench's own bookkeeping (tools/realrun/bench.py): the edit it deploys, the command
lines it runs (CI's, against the program's own process), the counts it reads from the CLI's summary,
and the JSON it writes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from components.model.core.yaml_text import load_yaml
from tools.ci.engine_settings import command_env
from tools.ci.pulumi_run import command_argv
from tools.realrun import bench, cluster, toolchain
from tools.realrun.bench import Options, Step, Timed, _change_tier, cli_argv, cli_environment, row, summary_changes
from tools.scale.bench_tenants import typical_tenant
from tools.scale.tenant_mix import write_tenants


def test_the_edit_changes_one_tenants_tier_and_nothing_else(tmp_path: Path) -> None:
    tenants = write_tenants([typical_tenant(0), typical_tenant(1)], tmp_path / "tenants")
    before = {path.name: load_yaml(path.read_text()) for path in tenants.iterdir()}
    _change_tier(tenants, "t00000", "medium")
    after = {path.name: load_yaml(path.read_text()) for path in tenants.iterdir()}
    assert after["t00001.yaml"] == before["t00001.yaml"]
    assert after["t00000.yaml"] == {**before["t00000.yaml"], "quota": {"tier": "medium"}}


def test_the_cli_runs_cis_command_line_against_the_programs_process() -> None:
    preview = cli_argv(Path("/bin/pulumi"), "preview", 4242, ["--expect-no-changes"])
    ci = command_argv("preview", "dev")
    assert preview[0] == "/bin/pulumi"
    # CI's flags, without the policy pack (its analyzer needs the language host).
    assert [word for word in ci[1:] if word not in ("--policy-pack", "policy_pack")] == preview[1 : len(ci) - 2]
    assert preview[-4:] == ["--client=127.0.0.1:4242", "--exec-kind", "auto.inline", "--expect-no-changes"]
    up = cli_argv(Path("/bin/pulumi"), "up", 1)
    assert up[:3] == ["/bin/pulumi", "up", "--yes"] and "--skip-preview" in up


# The closing block of `pulumi preview` and `pulumi up` (v3.274.1, --diff, no colour).
PREVIEW_OUTPUT = """\
    + kubernetes:core/v1:Namespace: (create)
        [urn=urn:pulumi:dev::tenancy::kubernetes:core/v1:Namespace::Resources:]
Outputs:
    tenants: {}

Resources:
    + 1015 to create
    ~ 2 to update
    +-1 to replace
    3 unchanged

"""
UP_OUTPUT = """\
Resources:
    ~ 2 updated
    1013 unchanged

Duration: 1m4s
"""


def test_counts_come_from_the_clis_closing_summary() -> None:
    assert summary_changes(PREVIEW_OUTPUT) == {"create": 1015, "update": 2, "replace": 1, "same": 3}
    assert summary_changes(UP_OUTPUT) == {"update": 2, "same": 1013}
    assert summary_changes("no summary at all") == {}


def test_the_json_has_the_fields_the_issue_lists() -> None:
    def step(wall: float, changes: dict[str, int]) -> Step:
        return Step(wall, {"program": 1.0, "cli": 2.0, "provider": 3.0, "kube-apiserver": 4.0}, {}, changes)

    steps = {
        "first_preview": step(10.0, {"create": 40}),
        "up": step(20.0, {"create": 40}),
        "noop_preview": step(5.0, {"same": 40}),
        "edit_up": step(6.0, {"update": 2, "same": 38}),
    }
    figures = row(1, Timed(2.5, 2.0), steps, Options(), 1.5, (1.0, 1.0, 1.0), (2.0, 1.0, 1.0))
    assert {
        key: figures[key]
        for key in (
            "tenants", "resources", "mock_plan_s", "first_preview_s", "up_s", "up_checkpoints",
            "noop_preview_s", "edit_up_s", "edit_updates", "noop_preview_over_mock_plan",
        )
    } == {
        "tenants": 1, "resources": 40, "mock_plan_s": 2.5, "first_preview_s": 10.0, "up_s": 20.0,
        "up_checkpoints": True, "noop_preview_s": 5.0, "edit_up_s": 6.0, "edit_updates": 2,
        "noop_preview_over_mock_plan": 2.0,
    }  # fmt: skip
    assert figures["cpu_s"]["noop_preview"] == {"program": 1.0, "cli": 2.0, "provider": 3.0, "kube-apiserver": 4.0}
    assert figures["load_before"] == [1.0, 1.0, 1.0] and figures["load_after"] == [2.0, 1.0, 1.0]


def test_the_stand_in_runs_only_during_the_updates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Previews run with nothing beside the engine, its provider, the program and the control plane;
    the updates wait for the operators' conditions, so the stand-in runs while they do."""
    active: list[bool] = []
    steps: list[tuple[str, str, tuple[str, ...], bool, bool | None]] = []

    class StandIn:
        def __init__(self, _api: object) -> None:
            pass

        def __enter__(self) -> None:
            active.append(True)

        def __exit__(self, *_: object) -> None:
            active.pop()

    class FakeEngine:
        def __init__(self, *_: object) -> None:
            pass

        def step(self, label: str, command: str, *extra: str, checkpoints: bool | None = None) -> Step:
            steps.append((label, command, extra, bool(active), checkpoints))
            return Step(1.0, {}, {"cli": 1.0}, {"create": 3} if label == "up" else {})

    @contextlib.contextmanager
    def plane(*_: object) -> Iterator[SimpleNamespace]:
        yield SimpleNamespace(kubeconfig=tmp_path / "kubeconfig")

    monkeypatch.setattr(bench, "ConditionStandIn", StandIn)
    monkeypatch.setattr(bench, "Engine", FakeEngine)
    monkeypatch.setattr(bench, "mock_plan", lambda _: Timed(1.0, 1.0))
    monkeypatch.setattr(bench, "seed_cluster", lambda *_: None)
    monkeypatch.setattr(bench, "open_stack", lambda *_: None)
    monkeypatch.setattr(cluster, "control_plane", plane)
    monkeypatch.setattr(toolchain, "kwok_stages", list)
    figures = bench.measure(1, tmp_path, {}, tmp_path / "bin", Options(first_up_checkpoints=False))
    assert steps == [
        ("first-preview", "preview", (), False, None),
        ("up", "up", (), True, False),
        ("noop-preview", "preview", ("--expect-no-changes",), False, None),
        ("edit-up", "up", (), True, None),
    ]
    assert figures["resources"] == 3 and figures["up_checkpoints"] is False


def test_the_cli_gets_cis_environment_and_the_settings_under_test(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOGC", "GOMEMLIMIT", "PULUMI_PARALLEL", "PULUMI_SKIP_CHECKPOINTS", "PULUMI_PARALLEL_DIFF"):
        monkeypatch.delenv(name, raising=False)
    run = {"PULUMI_BACKEND_URL": "file:///state"}
    engine = command_env("up", {})  # CI's engine settings, every command (tools/ci/engine_settings.py)
    assert engine and "PULUMI_SKIP_CHECKPOINTS" not in engine
    assert cli_environment(run, "preview", {}, None) == {**run, **engine, "PULUMI_SKIP_CHECKPOINTS": "true"}
    assert cli_environment(run, "up", {}, None) == {**run, **engine}
    assert cli_environment(run, "up", {}, False) == {**run, **engine, "PULUMI_SKIP_CHECKPOINTS": "true"}
    assert cli_environment(run, "up", {"PULUMI_PARALLEL_DIFF": "true", "GOGC": "100"}, True) == {
        **run,
        **engine,
        "PULUMI_PARALLEL_DIFF": "true",
        "GOGC": "100",
    }
    # Each row says what the CLI ran with: CI's settings and those under test.
    steps = {name: Step(1.0, {}, {}, {"create": 1}) for name in ("first_preview", "up", "noop_preview", "edit_up")}
    options = Options(env={"GOGC": "100"})
    assert row(1, Timed(1.0, 1.0), steps, options, 0.0, (0, 0, 0), (0, 0, 0))["env"] == {**engine, "GOGC": "100"}
