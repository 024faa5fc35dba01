"""`tools.plan.run` with directories it must not destroy, a missing diff base, the previous plan of a
stack, and `--set` overrides: one clear line each, and the problem charged to its cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import tenant_document, write_tenants
from tools.plan.run import main


def test_out_that_is_not_a_plan_is_refused_and_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    precious = tmp_path / "checkout"
    (precious / "src").mkdir(parents=True)
    (precious / "src" / "main.py").write_text("print('keep me')\n")
    assert main(["--stack", "dev", "--out", str(precious)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"--out {precious}: not an earlier plan") and err.count("\n") == 1
    assert (precious / "src" / "main.py").read_text() == "print('keep me')\n"


@pytest.mark.parametrize("out", [".", ".."])
def test_out_dot_in_a_checkout_is_refused_in_one_line(
    out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`.` and `..` have no name to put `.partial` beside: still one line, never a traceback."""
    checkout = tmp_path / "checkout" / "src"
    checkout.mkdir(parents=True)
    (checkout / "main.py").write_text("print('keep me')\n")
    monkeypatch.chdir(checkout)
    assert main(["--stack", "dev", "--out", out]) == 2
    assert capsys.readouterr().err.startswith(f"--out {out}: not an earlier plan")
    assert (checkout / "main.py").read_text() == "print('keep me')\n"


def test_out_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep\n")
    assert main(["--stack", "dev", "--out", str(target)]) == 2
    assert "is a file, not a plan directory" in capsys.readouterr().err
    assert target.read_text() == "keep\n"


def test_empty_out_directory_is_accepted(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert main(["--stack", "dev", "--out", str(out)]) == 0
    assert (out / "resources.json").is_file() and not (tmp_path / "empty.previous").exists()


def test_missing_diff_base_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--stack", "dev", "--out", str(tmp_path / "plan"), "--diff", str(tmp_path / "base")])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    base = tmp_path / "base"
    assert captured.err == f"--diff {base}: no plan there (no resources.json); write one first with --out {base}\n"
    assert not (tmp_path / "plan").exists()


def test_a_second_plan_shows_what_changed_since_the_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = write_tenants(tmp_path / "tenants", tenant_document("acme"))
    out = tmp_path / "plan"
    assert main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out)]) == 0
    assert "Changes since the last plan" not in capsys.readouterr().out
    write_tenants(tenants, tenant_document("beta"))
    assert main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Changes since the last plan: stack dev\n=====" in printed
    assert "\ntenant beta (13 added, 0 removed, 0 changed):\n" in printed and "tenant acme" not in printed
    # Terminal text: no Markdown markup; the last line says where the plan went.
    assert "**" not in printed and "`" not in printed and "###" not in printed
    assert (
        printed.rstrip().splitlines()[-1]
        == f"wrote {len(list((out / 'manifests').rglob('*.yaml'))) + 2} files to {out}"
    )
    assert (tmp_path / "plan.previous" / "resources.json").is_file()


def test_set_problems_are_charged_to_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pools = '{"shared": {"kind": "existing", "costCode": "not a code!"}}'
    assert main(["--stack", "dev", "--set", f"tenancy:nodePools={pools}"]) == 2
    err = capsys.readouterr().err
    assert "--set tenancy:nodePools: tenancy:nodePools.shared.costCode:" in err
    assert "Pulumi.dev.yaml" not in err
