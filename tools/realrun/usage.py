"""CPU seconds and peak memory of the bench's processes, read from /proc (docs/scale.md#the-real-engine).

A process's own CPU (user + system, /proc/<pid>/stat) and its peak resident memory (`VmHWM`,
/proc/<pid>/status) can be read only while it runs; `Sampler` reads them for every process below
one root (the Pulumi CLI and its plugins) until it is stopped, so a plugin that exits with the CLI
is counted up to its last fraction of a second. Linux only, as the real run is.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tools.realrun.processes import descendants, process_table

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    """One process at one moment."""

    name: str
    cpu: float  # seconds, user + system, its own (not its children's)
    peak_mb: float  # VmHWM


def read(pid: int) -> Usage | None:
    """The process's usage now, or None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    peak = 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    return Usage(name, cpu, peak)


def _later(earlier: Usage | None, now: Usage) -> Usage:
    """The newer reading, without losing the peak: an exited process not yet reaped (a zombie,
    as the CLI is between its exit and the bench's `wait4`) has no `VmHWM` and reads as 0 MB."""
    if earlier is None:
        return now
    return Usage(now.name, max(earlier.cpu, now.cpu), max(earlier.peak_mb, now.peak_mb))


def cpu_seconds(pid: int) -> float:
    found = read(pid)
    return found.cpu if found is not None else 0.0


def load() -> tuple[float, float, float]:
    """The machine's load average (1, 5, 15 minutes)."""
    return os.getloadavg()


class Sampler:
    """Reads the usage of `root` and every process below it every `interval` seconds until
    stopped; keeps the last reading of each (pid -> Usage), with the highest peak seen. New
    processes are looked for every `discover` seconds: a scan of the whole process table costs
    about 5 to 12 ms of CPU here, which a bench on two cores should not spend five times a second."""

    def __init__(self, root: int, interval: float = 0.25, discover: float = 1.0) -> None:
        self.root = root
        self.interval = interval
        self.discover = discover
        self.last: dict[int, Usage] = {}
        self._known: set[int] = {root}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="usage-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join(timeout=10)

    def sample(self, *, discover: bool = True) -> None:
        if discover:
            self._known.update(descendants(self.root, process_table()))
        for pid in list(self._known):
            found = read(pid)
            if found is None:
                self._known.discard(pid)
            else:
                self.last[pid] = _later(self.last.get(pid), found)

    def _loop(self) -> None:
        looked = 0.0
        while not self._done.is_set():
            now = time.monotonic()
            self.sample(discover=now - looked >= self.discover)
            if now - looked >= self.discover:
                looked = now
            self._done.wait(self.interval)

    def total(self, prefix: str) -> Usage:
        """CPU summed and peak memory (the largest) of the sampled processes named `prefix...` (a
        process name is cut at 15 characters: `pulumi-resource` for every provider plugin)."""
        matching = [usage for usage in self.last.values() if usage.name.startswith(prefix)]
        return Usage(prefix, sum(u.cpu for u in matching), max((u.peak_mb for u in matching), default=0.0))
