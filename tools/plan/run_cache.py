"""Reuse mocked runs with equal inputs within one test run; off unless the test suite turns it on.

The suite plans the same inputs hundreds of times (issue 35: 143 of 526 plans in one run were
repeats, about a third of the suite's CPU). `tools.plan.harness.run_program` asks the active cache
first; the key is `tools.plan.run_key.run_key`, built from what the program reads. Runs are kept
pickled in a directory, so the pytest-xdist workers of one run share them, and every caller gets
its own copy to mutate. A run that failed is not kept (the exception propagates each time), nor one
whose content mentions its tenant directory's path (the key holds the content, not the path).

What the program logged (`tools.plan.lean_sdk.EngineLog`: warnings, errors) is kept with the run and
logged again on a hit, so a test reading the log sees the same lines. `tenancy plan` and the other tools never
turn the cache on: each of their processes plans once.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class CacheStats:
    """What the cache did, so tests (and whoever tunes the suite) can count hits without timing."""

    hits: int = 0
    misses: int = 0
    stored: int = 0
    refused: int = 0


@dataclass
class RunCache:
    """Pickled runs by key in `directory`; the directory may be shared by processes of one test run."""

    directory: Path
    stats: CacheStats = field(default_factory=CacheStats)

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)

    def load(self, key: str) -> tuple[object, list[tuple[int, str]]] | None:
        """A fresh copy of the run stored under `key` and the log records it made, or None. The run is
        an `object`: this module sits below tools/plan/harness.py, which checks the type."""
        path = self.directory / f"{key}.pickle"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        run, records = pickle.loads(data)
        return run, records

    def store(self, key: str, run: object, records: list[tuple[int, str]], forbidden: Sequence[str]) -> None:
        """Keep `run` under `key` unless its pickled form contains one of the `forbidden` strings."""
        data = pickle.dumps((run, records), protocol=pickle.HIGHEST_PROTOCOL)
        if any(text.encode() in data for text in forbidden):
            self.stats.refused += 1
            return
        # Write then rename: another worker may read the same key at any moment.
        partial = self.directory / f"{key}.{os.getpid()}.tmp"
        partial.write_bytes(data)
        partial.rename(self.directory / f"{key}.pickle")
        self.stats.stored += 1


_active: RunCache | None = None


def active() -> RunCache | None:
    """The cache runs go through now, or None (the default: every run is computed)."""
    return _active


def activate(cache: RunCache | None) -> None:
    """Make `cache` the active one for every later run (None turns caching off)."""
    global _active
    _active = cache


@contextmanager
def suspended() -> Iterator[None]:
    """No cache inside the block (a test that patches the program's code), the previous one after."""
    previous = _active
    activate(None)
    try:
        yield
    finally:
        activate(previous)


def replay(records: list[tuple[int, str]]) -> None:
    """Log again what a stored run logged, to the root logger as the mock engine did."""
    for level, message in records:
        logging.getLogger().log(level, message)
