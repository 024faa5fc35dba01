"""Progress of a long plan on stderr: resources registered, then files written (tqdm).

A 500-tenant plan runs for a minute with nothing on the screen otherwise. tqdm draws its bar only
on a terminal (`disable=None` turns it off when stderr is not one, so CI logs and captured output
stay clean) and only once a step has run for `DELAY_SECONDS`, so a short plan prints nothing extra.
The total for the registrations is the earlier plan's resource count when there is one (a plan
rarely changes much), else the bar counts without a total.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm

from tools.plan import harness

# Seconds a step runs before its bar appears.
DELAY_SECONDS = 2.0


@contextmanager
def registering(total: int | None) -> Iterator[None]:
    """While the program runs, count each resource it registers on a bar (`total`: expected count)."""
    bar = tqdm(total=total, desc="registering", unit=" resources", delay=DELAY_SECONDS, disable=None, leave=False)
    with bar:
        harness.ON_REGISTER.append(bar.update)
        try:
            yield
        finally:
            harness.ON_REGISTER.remove(bar.update)


def writing(total: int) -> tqdm[Any]:
    """A bar for writing `total` plan files; call `update()` per file, close it after."""
    return tqdm(total=total, desc="writing", unit=" files", delay=DELAY_SECONDS, disable=None, leave=False)
