"""The Makefile's own behaviour, run by make with stand-in tools: what `make test` runs and when it
fails, and the environment every Python process it starts gets."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tools.plan.harness import PROJECT_ROOT

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _stand_in_bin(directory: Path, exit_codes: dict[str, int]) -> Path:
    """A `.venv/bin` whose ruff, mypy and python only say they ran and exit with the given code;
    its `activate` is newer than the requirement files, so make does not rebuild the virtualenv."""
    directory.mkdir()
    for name in ("ruff", "mypy", "python"):
        script = directory / name
        script.write_text(f'#!/bin/sh\necho "{name} ran: $*"\nexit {exit_codes.get(name, 0)}\n', encoding="utf-8")
        script.chmod(0o755)
    (directory / "activate").touch()
    return directory


def _make(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *arguments],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )


@needs_make
@pytest.mark.parametrize(
    ("exit_codes", "passes"),
    [({}, True), ({"mypy": 1}, False), ({"python": 1}, False), ({"mypy": 1, "python": 1}, False)],
    ids=["both-pass", "types-fail", "tests-fail", "both-fail"],
)
def test_make_test_runs_types_beside_the_suite_and_fails_if_either_fails(
    tmp_path: Path, exit_codes: dict[str, int], passes: bool
) -> None:
    result = _make("test", f"BIN={_stand_in_bin(tmp_path / 'bin', exit_codes)}")
    assert (result.returncode == 0) is passes, result.stdout + result.stderr
    assert "ruff ran: check ." in result.stdout
    assert "ruff ran: format --check ." in result.stdout
    assert "python ran: -m pytest -q -n auto --dist loadfile" in result.stdout
    # mypy's report comes after the suite's output, whatever its timing.
    assert result.stdout.index("mypy ran:") > result.stdout.index("python ran:")


@needs_make
def test_every_process_make_starts_caches_byte_code_in_the_virtualenv() -> None:
    """Even when the shell asks Python not to write byte-code (each process would compile the cloud
    SDKs again): it goes to `.venv/pycache`, never beside the sources."""
    show = 'show-python-env: ; @echo "prefix=$$PYTHONPYCACHEPREFIX dont-write=[$$PYTHONDONTWRITEBYTECODE]"'
    result = _make("--eval", show, "show-python-env")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"prefix={PROJECT_ROOT / '.venv' / 'pycache'} dont-write=[]"
