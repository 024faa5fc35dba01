"""The Makefile's own behaviour, run by make with stand-in tools: what `make test` runs and when it
fails, and the environment every Python process it starts gets."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import process_alive
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
    venv = tmp_path / "venv"
    venv.mkdir()
    result = _make("test", f"VENV={venv}", f"BIN={_stand_in_bin(venv / 'bin', exit_codes)}")
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


# Runs the command with SIGINT at its default action, as a terminal's foreground job has it: a suite
# started in the background of a non-interactive shell (`cmd &`) inherits SIGINT ignored, and a
# shell cannot trap a signal ignored when it started.
_SIGINT_DEFAULT = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])",
]


@needs_make
def test_ctrl_c_stops_the_type_check_running_beside_the_suite(tmp_path: Path) -> None:
    """A background job of a non-interactive shell ignores SIGINT: without the recipe's trap, mypy
    would run on (about 40 s cold) after the suite was interrupted."""
    venv = tmp_path / "venv"
    venv.mkdir()
    bin_ = _stand_in_bin(venv / "bin", {})
    (bin_ / "mypy").write_text(f"#!/bin/sh\necho $$ > {tmp_path}/mypy.pid\nexec sleep 60\n", encoding="utf-8")
    (bin_ / "python").write_text(f"#!/bin/sh\ntouch {tmp_path}/suite.started\nsleep 60\n", encoding="utf-8")
    make = subprocess.Popen(
        [*_SIGINT_DEFAULT, "make", "--no-print-directory", "test", f"VENV={venv}", f"BIN={bin_}"],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin"},
        start_new_session=True,
    )
    mypy_pid = 0
    try:
        deadline = time.monotonic() + 30
        while not ((tmp_path / "mypy.pid").exists() and (tmp_path / "suite.started").exists()):
            assert time.monotonic() < deadline, "the stand-ins never started"
            time.sleep(0.05)
        mypy_pid = int((tmp_path / "mypy.pid").read_text())
        os.killpg(make.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
        assert make.wait(timeout=30) != 0
        deadline = time.monotonic() + 10
        while process_alive(mypy_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_alive(mypy_pid)
    finally:
        if mypy_pid and process_alive(mypy_pid):
            os.kill(mypy_pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGKILL)
