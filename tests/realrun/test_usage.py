"""What the bench reads of each process (tools/realrun/usage.py): its own CPU seconds and peak
memory, for a root process and everything below it, up to the moment each exits."""

from __future__ import annotations

import subprocess
import sys

from tools.realrun import usage

# A parent that starts a child which burns CPU for a moment and holds 64 MB, then both exit.
_BUSY = (
    "import subprocess, sys\n"
    "child = 'import time\\nblock = bytearray(64 * 2**20)\\nend = time.process_time() + 1.0\\n"
    "while time.process_time() < end: pass\\n'\n"
    "subprocess.run([sys.executable, '-c', child], check=True)\n"
)


def test_a_child_that_exited_is_counted_with_its_cpu_and_peak_memory() -> None:
    parent = subprocess.Popen([sys.executable, "-c", _BUSY])
    with usage.Sampler(parent.pid, interval=0.05, discover=0.05) as sampled:
        parent.wait(timeout=120)
    children = [u for pid, u in sampled.last.items() if pid != parent.pid]
    assert len(children) == 1
    assert children[0].cpu >= 0.8
    assert children[0].peak_mb >= 64
    assert sampled.total("python").cpu >= children[0].cpu


def test_a_process_that_is_gone_reads_as_nothing() -> None:
    done = subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert done.returncode == 0
    assert usage.read(2**22 + 7) is None
    assert usage.cpu_seconds(2**22 + 7) == 0.0


def test_a_process_that_exited_but_is_not_reaped_keeps_its_peak() -> None:
    """The CLI is a zombie between its exit and the bench's wait: /proc still lists it, without
    VmHWM. The sampler must keep the peak it read while the process ran (it read 0 MB before)."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys\nblock = bytearray(64 * 2**20)\nsys.stdin.read()"], stdin=subprocess.PIPE
    )
    sampler = usage.Sampler(child.pid)
    try:
        while usage.read(child.pid) is None or usage.read(child.pid).peak_mb < 64:  # type: ignore[union-attr]
            pass
        sampler.sample()
        assert child.stdin is not None
        child.stdin.close()
        while (reading := usage.read(child.pid)) is not None and reading.peak_mb > 0:
            pass  # until it exits; not reaped yet, so it stays listed as a zombie
        sampler.sample()
        assert sampler.last[child.pid].peak_mb >= 64
    finally:
        child.wait(timeout=60)
