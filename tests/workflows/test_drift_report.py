"""tools.ci.drift_report: drift only from a drift result; anything else, a missing result included, is
a failed check with its own issue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.ci import drift_report

STACKS = json.dumps([{"stack": s, "environment": "prod"} for s in ("prod-platform", "prod-shard-0", "prod-shard-1")])


def _result(directory: Path, stack: str, outcome: str) -> None:
    folder = directory / f"drift-{stack}"
    folder.mkdir(parents=True)
    record = {"stack": stack, "command": "drift", "outcome": outcome, "step": "drift"}
    (folder / "result.json").write_text(json.dumps(record), encoding="utf-8")


def _report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, str], dict[str, str]]:
    out = tmp_path / "report"
    code = drift_report.main(
        ["--stacks", STACKS, "--results", str(tmp_path / "results"), "--run-url", "https://run/1", "--out", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    outputs = dict(line.split("=", 1) for line in printed.splitlines())
    return outputs, {path.name: path.read_text() for path in out.glob("*.md")}


def test_drift_and_failures_go_to_different_issues(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    _result(results, "prod-platform", "succeeded")
    _result(results, "prod-shard-0", "drift")
    # prod-shard-1 left no result: its job stopped before the check (a cloud sign-in failed).
    outputs, bodies = _report(tmp_path, capsys)
    assert outputs == {"drift": "true", "failed": "true"}
    assert "`prod-shard-0`" in bodies["drift.md"] and "prod-shard-1" not in bodies["drift.md"]
    assert "`prod-shard-1`: no result" in bodies["failed.md"] and "this is not drift" in bodies["failed.md"]
    assert "prod-shard-0" not in bodies["failed.md"]


def test_only_failures_open_no_drift_issue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    for stack in ("prod-platform", "prod-shard-0", "prod-shard-1"):
        _result(results, stack, "failed")
    outputs, bodies = _report(tmp_path, capsys)
    assert outputs == {"drift": "false", "failed": "true"}
    assert set(bodies) == {"failed.md"}


def test_no_results_at_all_is_a_failed_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs, bodies = _report(tmp_path, capsys)
    assert outputs == {"drift": "false", "failed": "true"} and set(bodies) == {"failed.md"}


def test_a_bad_stack_list_is_refused(tmp_path: Path) -> None:
    assert drift_report.main(["--stacks", "prod", "--results", "x", "--run-url", "u", "--out", str(tmp_path)]) == 2
