"""`python -m tools.plan.engine_rules PLAN_DIR --stack STACK`: the rules on a written plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.plan.engine_rules import main
from tools.plan.harness import ProgramRun
from tools.plan.run import write_plan


def test_a_written_plan_keeps_the_rules_and_a_broken_one_is_named(
    dev_plan: ProgramRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_plan(dev_plan, tmp_path / "plan")
    assert main([str(tmp_path / "plan"), "--stack", "dev"]) == 0
    assert "0 engine rule violations" in capsys.readouterr().out

    path = tmp_path / "plan" / "resources.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    for record in records:
        if record["name"] == "acme-dev-namespace":
            record["provider"] = None
    path.write_text(json.dumps(records), encoding="utf-8")
    assert main([str(tmp_path / "plan"), "--stack", "dev"]) == 1
    captured = capsys.readouterr()
    assert "[explicit-provider] acme-dev-namespace (kubernetes:core/v1:Namespace)" in captured.err
    assert "1 engine rule violations" in captured.out
