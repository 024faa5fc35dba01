"""Every real-run entry point stops what it started, whatever stops it (tools/realrun/processes.py,
docs/real-run.md#stopping).

`tenancy realrun` and `tenancy realrun --bench` run with stand-in processes (tests/realrun/
stop_driver.py) and are interrupted during the build, with the control plane up, and in the engine's
`up` or preview, by SIGINT (to its process group, as Ctrl-C in a terminal) and by SIGTERM (to it
alone, as `kill` or a CI job's timeout); then no process of the run is left, the host change is
undone, the pid files are gone, and stderr holds one line and no traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.plan.harness import PROJECT_ROOT
from tools.realrun import processes

STANDIN = Path(__file__).with_name("standin_process.py")
# What has started by the time each phase waits, besides the entry point itself.
STARTED = {
    "build": {"go", "compile"},
    "seed": {"etcd", "kube-apiserver", "apiserver-child"},
    "up": {"etcd", "kube-apiserver", "apiserver-child", "pulumi", "pulumi-resource-kubernetes"},
    "preview": {"etcd", "kube-apiserver", "apiserver-child", "pulumi", "pulumi-resource-kubernetes"},
}
CASES = [
    ("realrun", "build"),
    ("realrun", "seed"),
    ("realrun", "up"),
    ("bench", "build"),
    ("bench", "preview"),
    ("bench", "up"),
]


def _started(log: Path) -> dict[str, int]:
    if not log.exists():
        return {}
    words = (line.split() for line in log.read_text().splitlines())
    return {w[0]: int(w[1]) for w in words if len(w) == 2 and w[0] != "phase"}


def _start_driver(work: Path, command: str, phase: str) -> tuple[subprocess.Popen[str], dict[str, int]]:
    driver = subprocess.Popen(
        [sys.executable, "-m", "tests.realrun.stop_driver", str(work), command, phase],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # A session of its own, as a terminal's job or a CI step is: the test signals only it.
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not STARTED[phase] <= set(started := _started(work / "processes.log")):
        assert driver.poll() is None, driver.communicate()[1]
        assert time.monotonic() < deadline, f"{command} never reached {phase}: {started}"
        time.sleep(0.1)
    return driver, started


def _still_running(pids: dict[str, int]) -> dict[str, int]:
    """Those of `pids` still running (a zombie holds no port and no memory: it is not running)."""
    return {name: pid for name, pid in pids.items() if _running(pid)}


def _running(pid: int) -> bool:
    found = processes.stat(pid)
    return found is not None and found.state not in ("Z", "X")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize(("command", "phase"), CASES)
def test_a_signal_stops_every_process_of_the_run(tmp_path: Path, command: str, phase: str, signum: int) -> None:
    driver, started = _start_driver(tmp_path, command, phase)
    try:
        signalled = time.monotonic()
        if signum == signal.SIGINT:
            # Ctrl-C: the terminal signals its whole foreground group (the command, the CLI the
            # Automation API started, `go build`); processes in sessions of their own get nothing.
            os.killpg(driver.pid, signum)
        else:
            driver.send_signal(signum)  # `kill`, a CI job's timeout: the command alone
        _, stderr = driver.communicate(timeout=60)
        took = time.monotonic() - signalled
        assert driver.returncode == 128 + signum
        assert _still_running(started) == {}
        assert stderr.strip().splitlines() == [
            f"realrun: {signal.Signals(signum).name}: stopping every process of the run "
            f"(pid files in {tmp_path / 'pids'})"
        ]
        assert took < processes.GRACE_SECONDS + 10
        assert list((tmp_path / "pids").glob("*")) == []
        if phase != "build":
            assert (tmp_path / "undone").read_text() == "undone\n"
    finally:
        driver.kill()
        for pid in _still_running(started).values():
            os.kill(pid, signal.SIGKILL)


def _entry_point(work: Path, body: str) -> subprocess.CompletedProcess[str]:
    """`processes.entry_point` around `body` (Python that may use `owner`, `log`, `standin`), in a
    fresh process like every real entry point (it becomes the subreaper of its tree)."""
    program = (
        "import subprocess, sys, time\n"
        "from pathlib import Path\n"
        "from tools.realrun import processes\n"
        f"log, standin = Path({str(work / 'log')!r}), {str(STANDIN)!r}\n"
        "def started():\n"
        "    return {l.split()[0] for l in log.read_text().splitlines()} if log.exists() else set()\n"
        "def body():\n"
        "    owner = processes.current_owner()\n"
        + "".join(f"    {line}\n" for line in body.strip().splitlines())
        + f"sys.exit(processes.entry_point(body, pid_dir=Path({str(work / 'pids')!r})))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", program], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )


def test_a_killed_runs_leftovers_are_stopped_by_the_next_run_and_nothing_else(tmp_path: Path) -> None:
    driver, started = _start_driver(tmp_path, "realrun", "up")
    stranger = subprocess.Popen(["sleep", "300"])
    # The tracker records what the run did not start itself within processes.TRACK_SECONDS.
    while not all((tmp_path / "pids" / f"{pid}.json").exists() for pid in started.values()):
        time.sleep(0.1)
    try:
        driver.kill()  # SIGKILL: nothing of the run can clean up
        driver.wait(timeout=30)
        left = _still_running(started)
        assert set(left) == STARTED["up"]
        # A pid file that names a live process with another start time (its pid was reused) is no proof.
        forged = {**json.loads(next((tmp_path / "pids").glob("*.json")).read_text()), "pid": stranger.pid}
        (tmp_path / "pids" / f"{stranger.pid}.json").write_text(json.dumps(forged))
        next_run = _entry_point(tmp_path, "return 0")
        assert next_run.returncode == 0, next_run.stderr
        assert _still_running(started) == {}
        assert stranger.poll() is None
        lines = next_run.stderr.splitlines()
        assert len(lines) == 1
        assert lines[0].startswith(f"realrun: stopped {len(left)} processes an earlier run left running: ")
        assert all(f"(pid {pid})" in lines[0] for pid in left.values())
        assert list((tmp_path / "pids").glob("*")) == []
    finally:
        stranger.kill()
        for pid in _still_running(started).values():
            os.kill(pid, signal.SIGKILL)


def test_a_running_runs_processes_are_left_alone(tmp_path: Path) -> None:
    driver, started = _start_driver(tmp_path, "realrun", "seed")
    # The tracker records what the run did not start itself within processes.TRACK_SECONDS.
    while not all((tmp_path / "pids" / f"{pid}.json").exists() for pid in started.values()):
        time.sleep(0.1)
    try:
        next_run = _entry_point(tmp_path, "return 0")
        assert next_run.returncode == 0, next_run.stderr
        assert _still_running(started) == started
        assert next_run.stderr.splitlines() == [
            f"realrun: left alone {len(started)} processes of a run still going (pid {driver.pid})"
        ]
    finally:
        driver.send_signal(signal.SIGTERM)
        driver.communicate(timeout=60)
        for pid in _still_running(started).values():
            os.kill(pid, signal.SIGKILL)


def test_a_process_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    run = _entry_point(
        tmp_path,
        """
owner.start("stubborn", [sys.executable, standin, str(log), "stubborn", "--ignore-term"])
while "stubborn" not in started():
    time.sleep(0.05)
return 0
""",
    )
    assert run.returncode == 0, run.stderr
    assert _still_running(_started(tmp_path / "log")) == {}
    assert list((tmp_path / "pids").glob("*")) == []


def test_a_normal_exit_and_an_exception_stop_everything_too(tmp_path: Path) -> None:
    # One started through the owner, one as the Automation API starts the CLI (a plain Popen), whose
    # plugin has a process group of its own.
    body = """
owner.start("etcd", [sys.executable, standin, str(log), "etcd", "etcd-child"])
subprocess.Popen([sys.executable, standin, str(log), "pulumi", "pulumi-resource-kubernetes+group"])
while not {"etcd", "etcd-child", "pulumi", "pulumi-resource-kubernetes"} <= started():
    time.sleep(0.05)
"""
    normal = _entry_point(tmp_path, body + "return 3")
    assert normal.returncode == 3, normal.stderr
    assert set(_started(tmp_path / "log")) == {"etcd", "etcd-child", "pulumi", "pulumi-resource-kubernetes"}
    assert _still_running(_started(tmp_path / "log")) == {}
    (tmp_path / "log").unlink()
    failed = _entry_point(tmp_path, body + "raise RuntimeError('a failed step')")
    assert failed.returncode == 1
    assert "RuntimeError: a failed step" in failed.stderr
    assert len(_started(tmp_path / "log")) == 4
    assert _still_running(_started(tmp_path / "log")) == {}
    assert list((tmp_path / "pids").glob("*")) == []
