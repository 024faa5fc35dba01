"""A terminated real run stops the control plane it started (tools/realrun/cluster.py `sigterm_exits`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support import process_alive
from tools.plan.harness import PROJECT_ROOT

# A run that started a long-lived component (here `sleep` stands in for etcd) and waits.
_RUN = """
import sys, time
from pathlib import Path
from tools.realrun.cluster import ControlPlane, sigterm_exits

folder = Path(sys.argv[1])
(folder / "logs").mkdir()
plane = ControlPlane(folder=folder, server="", kubeconfig=folder / "kubeconfig", token="")
with sigterm_exits():
    try:
        plane.start("etcd", ["sleep", "300"])
        print(plane.processes["etcd"].pid, flush=True)
        time.sleep(300)
    finally:
        plane.stop()
"""


def test_sigterm_stops_the_components_and_exits_143(tmp_path: Path) -> None:
    run = subprocess.Popen(
        [sys.executable, "-c", _RUN, str(tmp_path)], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True
    )
    assert run.stdout is not None
    component = int(run.stdout.readline())
    try:
        assert process_alive(component)
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=30) == 143
        assert not process_alive(component)
    finally:
        if process_alive(component):
            os.kill(component, signal.SIGKILL)
        run.kill()
