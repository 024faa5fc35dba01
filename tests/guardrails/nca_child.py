"""network-config-analyzer's command line, run in a child process forked from one that imported it.

Each of the suite's ~50 connectivity maps used to start `nca` afresh, and importing nca is most of a
small map's time (about 0.5 s of CPU of 0.6 s). `run` goes to a forkserver that imported this module,
and so nca, once per test worker; every call gets a new child (nothing nca keeps in module state
outlives a call) that runs the same `nca_main` the `nca` executable runs, with its standard output
captured. This module imports nothing of the project (the forkserver stays small) and nca only in the
forkserver (a suite without nca collects, its tests skip).
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

_executor: ProcessPoolExecutor | None = None


def _main(args: list[str]) -> tuple[int, str]:
    """In the child: nca's exit code and what it printed."""
    from nca.nca_cli import nca_main  # imported by the forkserver already: free here

    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        try:
            code = nca_main(args)
        except SystemExit as exit_:  # argparse's errors
            code = exit_.code if isinstance(exit_.code, int) else 2
    return int(code or 0), output.getvalue()


def run(args: list[str], timeout: float) -> tuple[int, str]:
    """`nca ARGS` in a fresh child of this worker's forkserver: (exit code, standard output)."""
    global _executor
    if _executor is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["nca.nca_cli", __name__])
        _executor = ProcessPoolExecutor(max_workers=1, mp_context=context, max_tasks_per_child=1)
    return _executor.submit(_main, args).result(timeout=timeout)
