"""network-config-analyzer's command line, run in a child process forked from one that imported it.

Each of the suite's ~50 connectivity maps used to start `nca` afresh, and importing nca is most of a
small map's time (about 0.5 s of CPU of 0.6 s). `run` starts one child per call from a forkserver
that imported nca once per test worker: nothing nca keeps in module state outlives a call, a call
that runs too long is killed (as `subprocess.run(timeout=...)` did), and a crashed child fails only
its own call. The child runs the same `nca_main` the `nca` executable runs with its file descriptors
1 and 2 sent to files, so everything it writes (nca binds `sys.stderr` at import) is captured.
This module imports nothing of the project (the forkserver stays small) and nca only in the
forkserver and its children (a suite without nca collects, its tests skip).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
from multiprocessing.connection import Connection
from pathlib import Path

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["nca.nca_cli", __name__])


def _main(args: list[str], output_dir: str, done: Connection) -> None:
    """In the child: run nca with fds 1 and 2 in files under `output_dir`, send its exit code."""
    from nca.nca_cli import nca_main  # imported by the forkserver already: free here

    for fd, name in ((1, "stdout"), (2, "stderr")):
        target = os.open(Path(output_dir) / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    try:
        code = nca_main(args)
    except SystemExit as exit_:  # argparse's errors
        code = exit_.code if isinstance(exit_.code, int) else 2
    sys.stdout.flush()
    sys.stderr.flush()
    done.send(int(code or 0))


def run(args: list[str], timeout: float) -> tuple[int, str, str]:
    """`nca ARGS` in a fresh child of this worker's forkserver: (exit code, stdout, stderr).

    A child that outlives `timeout` is killed and reported as exit code -9; one that dies without
    answering gets its own exit code."""
    with tempfile.TemporaryDirectory(prefix="nca-") as output_dir:
        receive, send = _CONTEXT.Pipe(duplex=False)
        child = _CONTEXT.Process(target=_main, args=(args, output_dir, send), daemon=True)
        child.start()
        send.close()
        try:
            code = receive.recv() if receive.poll(timeout) else None
        except EOFError:  # the child died before answering
            code = None
        finally:
            receive.close()
        if code is None:
            child.kill()
        child.join()
        if code is None:
            code = child.exitcode if child.exitcode is not None else -9
        output = Path(output_dir)
        stdout = (output / "stdout").read_text(errors="replace") if (output / "stdout").exists() else ""
        stderr = (output / "stderr").read_text(errors="replace") if (output / "stderr").exists() else ""
    return code, stdout, stderr
