"""Tune Python's garbage collector for the registrations: fewer scans of a heap that only grows.

Registering a resource allocates a few hundred container objects (outputs, futures, tasks, protobuf
messages); most are freed by reference counting and few ever form a cycle. With the default gen-0
threshold (700 allocations) a stack of 300 tenants triggers tens of thousands of young collections
and, through them, repeated full collections that scan every object the program holds: the loaded
catalog, the imported modules, the registered resources. Measured on the mock plan of 100 typical
tenants (docs/scale.md "The program's garbage collector"): ~18% of the program's CPU went to them.

`tune_for_registrations()` is called once, after the catalog is loaded and before the first
registration: it collects the loading's garbage, then freezes what is left (long-lived: modules,
settings, the catalog; the collector skips frozen objects for the rest of the run) and raises the
thresholds so a collection runs every `YOUNG_THRESHOLD` net allocations. Cyclic garbage is still
collected, less often; the peak memory cost measured was ~3%.
"""

from __future__ import annotations

import gc

# Net container allocations between young collections (default 700). 100,000 made the young
# collections of a 100-tenant plan ~150 times rarer; larger values saved nothing more measurable.
YOUNG_THRESHOLD = 100_000
# Young collections between middle ones, and middle ones between full ones (defaults 10 and 10):
# the program's long-lived objects are frozen, so later generations hold little worth scanning.
MIDDLE_THRESHOLD = 50
OLD_THRESHOLD = 100


def tune_for_registrations() -> None:
    """Freeze what the program holds so far and make collections rare for the rest of the run.

    Leaves the collector alone when it is disabled (a caller that turned it off decides)."""
    if not gc.isenabled():
        return
    gc.collect()  # so that no garbage of the loading is frozen with the live objects
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
