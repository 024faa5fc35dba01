"""The program in a process of its own, as `pulumi preview` runs it (docs/scale.md#the-real-engine).

A user's `pulumi preview` has the language host start a Python process for `__main__.py`, so the
program's CPU is its own and shares no interpreter with anything else. The language host is not
served by the Go module proxy (docs/real-run.md), so the bench starts this instead: a Python process
that serves the Python SDK's own language server (the one the Automation API serves inside its
caller) for the repository's `__main__.py`, and the CLI connects to it (`--client`). One process per
engine command, like the language host's.

    python -m tools.realrun.program_server PORT_FILE [--profile FILE]

It writes the port it listens on (127.0.0.1 only) to PORT_FILE and serves until stopped. With
`--profile`, each run of the program is profiled (cProfile) into FILE.
"""

from __future__ import annotations

import argparse
import cProfile
import signal
import sys
from concurrent import futures
from pathlib import Path

import grpc  # type: ignore[import-untyped]  # grpcio ships no type information
from pulumi.automation._server import LanguageServer
from pulumi.runtime._grpc_settings import _GRPC_CHANNEL_OPTIONS
from pulumi.runtime.proto import language_pb2_grpc

from tools.realrun.engine import run_program


def profiled(target: Path) -> None:
    """The program under cProfile, the profile written when it returns."""
    profile = cProfile.Profile()
    try:
        profile.runcall(run_program)
    finally:
        profile.dump_stats(str(target))


def serve(port_file: Path, profile: Path | None = None) -> grpc.Server:
    """Start the language server for the program; the port goes to `port_file` once it listens."""
    # Four workers, as the Automation API's own server has.
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=_GRPC_CHANNEL_OPTIONS)
    program = run_program if profile is None else (lambda: profiled(profile))
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(LanguageServer(program), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    scratch = port_file.with_suffix(".tmp")
    scratch.write_text(str(port))
    scratch.replace(port_file)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.realrun.program_server", description=__doc__)
    parser.add_argument("port_file", type=Path)
    parser.add_argument("--profile", type=Path, help="write a cProfile of the program here")
    args = parser.parse_args(argv)
    server = serve(args.port_file, args.profile)
    # Stopped by the bench (SIGTERM to its process group): stop serving and exit 0.
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
