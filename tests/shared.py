"""Session fixtures computed once per test run, also when pytest-xdist runs it on several workers.

`make test` runs the suite with a worker per core (`pytest -n auto --dist loadfile`). A session
fixture is per worker there, so each worker would plan the example stacks again (a few seconds of
CPU each, and the lifecycle mixes nine plans). `shared` lets the first worker that needs a value
compute it and every other worker load it: the value is pickled into the run's shared temporary
directory under a file lock, keyed by the fixture's name. Without xdist it is computed in place.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def shared(tmp_path_factory: pytest.TempPathFactory, key: str, make: Callable[[], T]) -> T:
    """`make()` once per test run, whichever worker asks first; the others read its result."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return make()
    # Under xdist each worker's base temporary directory is `<run>/popen-gwN`: the parent is the run's.
    root = tmp_path_factory.getbasetemp().parent / "shared-fixtures"
    root.mkdir(exist_ok=True)
    path = root / f"{key}.pickle"
    with (root / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if path.exists():
                value: T = pickle.loads(path.read_bytes())
                return value
            value = make()
            path.with_suffix(".tmp").write_bytes(pickle.dumps(value))
            path.with_suffix(".tmp").rename(path)
            return value
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
