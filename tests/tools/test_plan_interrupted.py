"""An interrupted plan leaves the earlier plan exactly as it was, so the refusal of a removed
tenant's data holds on the next run; Ctrl-C prints one line. A tenant that was only ever planned
can be forgotten from the baseline, except where the stack's real outputs say it was deployed
(issue 45)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import EXAMPLE_TENANTS
from tools.plan import run as plan_run
from tools.plan.diff import CLUSTER_SCOPE, EXIT_REFUSED
from tools.plan.dirs import commit_plan
from tools.plan.refusals import Refusal
from tools.plan.run import EXIT_INTERRUPTED
from tools.plan.run import main as plan_main


def _plan(tenants: Path, out: Path, *extra: str) -> int:
    return plan_main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out), *extra])


@pytest.fixture
def planned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, str]:
    """Tenants whose last plan is in `out`, then acme's file (it has databases) removed."""
    tenants = tmp_path / "tenants"
    shutil.copytree(EXAMPLE_TENANTS, tenants)
    out = tmp_path / "plan"
    assert _plan(tenants, out) == 0
    (tenants / "acme.yaml").unlink()
    capsys.readouterr()
    return tenants, out, (out / "resources.json").read_text(encoding="utf-8")


def _interrupt_after(calls: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """`real`, but Ctrl-C on its `calls`-th call."""
    seen = [0]

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        seen[0] += 1
        if seen[0] == calls:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    return interrupted


def test_ctrl_c_while_writing_leaves_the_earlier_plan_and_the_refusal(
    planned: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tenants, out, before = planned
    monkeypatch.setattr(plan_run, "_write", _interrupt_after(5, plan_run._write))
    assert _plan(tenants, out) == EXIT_INTERRUPTED
    captured = capsys.readouterr()
    assert captured.err == f"tenancy plan: interrupted; {out} keeps the last complete plan\n"
    assert (out / "resources.json").read_text(encoding="utf-8") == before
    monkeypatch.undo()
    # The next plan still has its baseline: removing acme's data is refused, never exit 0.
    assert _plan(tenants, out) == EXIT_REFUSED
    assert capsys.readouterr().err.startswith("refused: tenant acme would delete")
    assert not out.with_name("plan.partial").exists()


def test_ctrl_c_between_the_two_renames_is_undone_by_the_next_plan(
    planned: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tenants, out, before = planned
    (tenants / "acme.yaml").write_text((EXAMPLE_TENANTS / "acme.yaml").read_text(encoding="utf-8"), encoding="utf-8")

    def half_committed(staging: Path, target: Path) -> Path | None:
        target.rename(target.with_name(target.name + ".previous"))
        raise KeyboardInterrupt  # the earlier plan moved aside, the new one not yet in place

    monkeypatch.setattr(plan_run, "commit_plan", half_committed)
    monkeypatch.setattr(plan_run, "recover_interrupted", lambda out: None)  # as if the process were killed
    assert _plan(tenants, out) == EXIT_INTERRUPTED
    assert not out.exists()
    monkeypatch.undo()
    (tenants / "acme.yaml").unlink()
    assert _plan(tenants, out) == EXIT_REFUSED
    captured = capsys.readouterr()
    assert f"{out}: an earlier plan was interrupted; its baseline is back from {out}.previous" in captured.err
    assert (out / "resources.json").read_text(encoding="utf-8") == before


def test_a_plan_is_put_in_place_whole(tmp_path: Path) -> None:
    out, staging = tmp_path / "plan", tmp_path / "plan.partial"
    for directory, content in ((out, "[1]\n"), (staging, "[2]\n")):
        directory.mkdir()
        (directory / "resources.json").write_text(content, encoding="utf-8")
    assert commit_plan(staging, out) == tmp_path / "plan.previous"
    assert (out / "resources.json").read_text(encoding="utf-8") == "[2]\n"
    assert (tmp_path / "plan.previous" / "resources.json").read_text(encoding="utf-8") == "[1]\n"
    assert not staging.exists()


def test_a_tenant_only_ever_planned_is_forgotten_on_request(
    planned: tuple[Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tenants, out, _ = planned
    assert _plan(tenants, out) == EXIT_REFUSED
    refusal = capsys.readouterr().err
    assert "put its file back and set lifecycle: decommissioned first" in refusal
    assert (
        "if tenant acme was only ever planned, never deployed, drop it from the baseline with "
        "`tenancy plan ... --forget acme` (`make plan FORGET=acme`)"
    ) in refusal
    # Where the stack's real outputs list it, it was deployed: forgetting it is refused.
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"tenants": {"acme": {}}}), encoding="utf-8")
    assert _plan(tenants, out, "--forget", "acme", "--stack-outputs", str(outputs)) == 2
    assert (
        f"  --forget: acme: the stack's last outputs ({outputs}) list tenant acme: it was deployed"
        in capsys.readouterr().err
    )
    # A name the earlier plan does not have is a typo, not a tenant to forget.
    assert _plan(tenants, out, "--forget", "acme-typo") == 2
    assert f"the earlier plan in {out} has no tenant acme-typo: nothing to forget" in capsys.readouterr().err
    # Forgotten: the removal is no refusal, the diff says why, and the new plan is the baseline.
    assert _plan(tenants, out, "--forget", "acme") == 0
    captured = capsys.readouterr()
    assert "refused" not in captured.err
    assert "forgotten (--forget): only ever planned, nothing to delete" in captured.out
    assert _plan(tenants, out) == 0
    assert "No changes." in capsys.readouterr().out


def test_the_advice_fits_the_case_a_renamed_database_or_a_deployed_tenant() -> None:
    database = {"name": "acme-dev-db-orders-cluster", "type": "kubernetes:postgresql.cnpg.io/v1:Cluster"}
    refusal = Refusal("acme", deleted=[database])
    # The tenant stays and a database went: its name is its identity; no offboarding advice.
    renamed = refusal.line(CLUSTER_SCOPE, removed=False)
    assert "(a renamed database is a new, empty one); put the entry back under its old name" in renamed
    assert "docs/data-and-secrets.md#renaming-or-removing-a-database" in renamed
    assert "lifecycle: decommissioned" not in renamed
    # The stack's real outputs say what was deployed: forgetting is no way out, so it is not offered.
    deployed = refusal.line(CLUSTER_SCOPE, removed=True, deployed_known=True)
    assert "put its file back and set lifecycle: decommissioned first" in deployed
    assert "--forget" not in deployed


def test_a_real_ctrl_c_prints_one_line_and_exits_130_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The SIGINT handler, not a KeyboardInterrupt: raised inside the SDK's event loop that becomes a
    traceback of another error. It stops the process at once (os._exit), here caught to look."""
    out, before = tmp_path / "plan", "[]\n"
    out.mkdir()
    (out / "resources.json").write_text(before, encoding="utf-8")

    class ExitedError(Exception):
        pass

    def exit_now(code: int) -> None:
        raise ExitedError(code)

    monkeypatch.setattr(os, "_exit", exit_now)
    out.with_name("plan.partial").mkdir()  # a plan half-written when Ctrl-C came
    # What the suite started with: Python's own handler, or SIG_IGN where the suite runs as a
    # background job of a non-interactive shell (as CI may run it).
    previous = signal.getsignal(signal.SIGINT)
    with pytest.raises(ExitedError) as exited, plan_run._exit_on_interrupt(out):
        os.kill(os.getpid(), signal.SIGINT)
    assert exited.value.args == (EXIT_INTERRUPTED,)
    assert capsys.readouterr().err == f"tenancy plan: interrupted; {out} keeps the last complete plan\n"
    assert (out / "resources.json").read_text(encoding="utf-8") == before
    assert not out.with_name("plan.partial").exists()
    assert signal.getsignal(signal.SIGINT) is previous  # put back
