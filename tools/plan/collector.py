"""Let Python's garbage collector scan only a run's own objects while the run goes on.

A mocked run allocates hundreds of thousands of short-lived objects (futures, outputs, protobuf
messages), which trigger collections; a full collection scans every object in the process. In a
test worker that already holds the suite's modules, schemas and many plans, those full scans cost
about a quarter of a plan's CPU (issue 35). `run_scope()` freezes what existed before the run (the
collector skips frozen objects), collects the run's own garbage when it ends, and unfreezes: the
same objects are freed, only the scans of the unrelated heap are skipped.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def run_scope() -> Iterator[None]:
    """Inside the block, collections see only objects made inside it; its garbage is freed on exit.

    Does nothing when the collector is off or someone else froze objects (unfreezing would hand them
    back too)."""
    if not gc.isenabled() or gc.get_freeze_count() > 0:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.collect()
        gc.unfreeze()
