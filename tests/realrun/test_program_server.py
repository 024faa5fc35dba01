"""The bench's program process (tools/realrun/program_server.py) serves the Python SDK's language
server on loopback, says where, and stops on SIGTERM, so the CLI can run the program in a process of
its own as the language host would."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc  # type: ignore[import-untyped]  # grpcio ships no type information
from pulumi.runtime.proto import language_pb2, language_pb2_grpc

from tools.plan.harness import PROJECT_ROOT


def test_it_serves_the_language_server_and_stops_on_sigterm(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    server = subprocess.Popen([sys.executable, "-m", "tools.realrun.program_server", str(port_file)], cwd=PROJECT_ROOT)
    try:
        deadline = time.monotonic() + 120
        while not port_file.exists():
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        with grpc.insecure_channel(f"127.0.0.1:{int(port_file.read_text())}") as channel:
            about = language_pb2_grpc.LanguageRuntimeStub(channel).About(language_pb2.AboutRequest(), timeout=30)
        assert about.executable == sys.executable
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
