"""Every process a real-run entry point starts, owned until it has stopped (docs/real-run.md#stopping).

One mechanism for `tenancy realrun`, `tenancy realrun --bench` and everything they start through
`ControlPlane.start` (the control plane, controllers, kubelets, containerd, the enforcer):

- **Process groups.** A process the run starts gets a session (and so a process group) of its own, and
  is stopped by signalling its whole group: what it forks without a group of its own goes with it.
- **Descendants.** Processes the run did not start itself are found and owned too: the Pulumi CLI the
  Automation API starts, and the plugins the CLI starts, each in a group of its own (pulumi/pulumi
  v3.274.1 `sdk/go/common/util/cmdutil/child_unix.go` `RegisterProcessGroup`: `Setpgid`), so a
  signal to the CLI's group never reaches the provider. A tracker thread records every descendant of
  the entry point, and the entry point is the child subreaper of its tree (Linux `prctl`), so a
  process whose parent died is still a descendant.
- **Pid files.** Each owned process has a file in `.realrun/pids/` naming it, its start time (clock
  ticks since boot) and the boot, and the run that owns it. A run that finds files of an earlier run
  whose entry point is gone, and whose process is still the same process (same pid, start time and
  boot, so a reused pid never matches), stops it first and says so; it never signals anything else.
- **Signals.** SIGINT (Ctrl-C) and SIGTERM (`kill`, a CI job's timeout) print one line, send SIGTERM to
  every owned process at once (so the waits that unwind end quickly: the Automation API waits for its
  CLI), SIGKILL what is left after `GRACE_SECONDS`, and raise `RunInterrupted` so every `finally`
  runs (the control plane's host-change undos among them). A signal that arrives while a stop is in
  progress hastens it and is raised only when the stop is done, so an undo is never cut short.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]
PID_DIR = ROOT / ".realrun" / "pids"
# How long a stopped process may take to exit after SIGTERM before it is killed: etcd and the API
# server exit within a second; the Pulumi CLI cancels "gracefully" and could wait minutes for an
# operation in flight, which a run that is stopping has no use for.
GRACE_SECONDS = 5.0
# How often the tracker records new descendants; a process that lives less than this may go
# unrecorded, which only matters if the run is SIGKILLed in that window.
TRACK_SECONDS = 1.0
_PR_SET_CHILD_SUBREAPER = 36


class RunInterrupted(BaseException):
    """A signal ended the run; raised in the main thread so every `finally` runs. BaseException,
    like KeyboardInterrupt, so no `except Exception` in between swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@dataclass(frozen=True)
class Identity:
    """What tells one process from any other that later gets the same pid."""

    pid: int
    start: int  # clock ticks after boot (/proc/<pid>/stat field 22)
    boot: str


@dataclass(frozen=True)
class Stat:
    ppid: int
    pgrp: int
    state: str
    start: int


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


BOOT = _boot_id()


def stat(pid: int) -> Stat | None:
    """The fields of /proc/<pid>/stat the run needs, or None if there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    fields = text[text.rindex(")") + 2 :].split()
    return Stat(ppid=int(fields[1]), pgrp=int(fields[2]), state=fields[0], start=int(fields[19]))


def identity(pid: int) -> Identity | None:
    found = stat(pid)
    return None if found is None else Identity(pid, found.start, BOOT)


def is_running(who: Identity) -> bool:
    """The very process `who` names is still there and not a zombie."""
    found = stat(who.pid)
    return found is not None and found.start == who.start and who.boot == BOOT and found.state not in ("Z", "X")


def process_table() -> dict[int, Stat]:
    table: dict[int, Stat] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := stat(int(entry))) is not None:
            table[int(entry)] = found
    return table


def descendants(root: int, table: Mapping[int, Stat]) -> list[int]:
    """Every process below `root` in the parent tree, parents before children."""
    children: dict[int, list[int]] = {}
    for pid, found in table.items():
        children.setdefault(found.ppid, []).append(pid)
    found_pids: list[int] = []
    queue = list(children.get(root, []))
    while queue:
        pid = queue.pop(0)
        found_pids.append(pid)
        queue.extend(children.get(pid, []))
    return found_pids


def _command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


@dataclass(frozen=True)
class Record:
    """One pid file: an owned process, and the entry point that owns it."""

    name: str
    pid: int
    start: int
    boot: str
    group: bool  # the leader of a process group of its own: stopped by signalling the group
    owner_pid: int
    owner_start: int

    @property
    def who(self) -> Identity:
        return Identity(self.pid, self.start, self.boot)

    @property
    def owner(self) -> Identity:
        return Identity(self.owner_pid, self.owner_start, self.boot)


def _group_members(pgid: int) -> bool:
    """Some live process is still in group `pgid` (Linux never hands out a pid that is still some
    group's id, so a group this run made is still the same group while it has members)."""
    return any(found.pgrp == pgid and found.state not in ("Z", "X") for found in process_table().values())


class RunProcesses:
    """The processes one entry point owns: started here (`start`) or found below it (`track`)."""

    def __init__(self, pid_dir: Path | None = None) -> None:
        self.pid_dir = pid_dir or PID_DIR
        me = identity(os.getpid())
        self.me = me if me is not None else Identity(os.getpid(), 0, BOOT)
        self._records: dict[int, Record] = {}
        self._lock = threading.RLock()
        self._popens: dict[int, subprocess.Popen[bytes]] = {}
        # Groups this run made (`start`): signalled while they have members, even after their leader.
        self._groups_made: set[int] = set()
        # Processes first seen with another parent: if they come here (the subreaper), this process
        # reaps them; its own children are waited for by their Popen (its own or the Automation API's).
        self._foster: set[int] = set()

    # -- starting and recording -------------------------------------------------------------------

    def start(
        self,
        name: str,
        command: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stdout: IO[bytes] | int | None = None,
        stderr: IO[bytes] | int | None = subprocess.STDOUT,
    ) -> subprocess.Popen[bytes]:
        """Start `command` in a session of its own, with its pid file written before this returns."""
        process = subprocess.Popen(
            command,
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        with self._lock:
            self._popens[process.pid] = process
            self._groups_made.add(process.pid)
        found = stat(process.pid)
        if found is not None:
            self._record(name, process.pid, found, group=True)
        return process

    def _record(self, name: str, pid: int, found: Stat, *, group: bool) -> None:
        record = Record(name, pid, found.start, BOOT, group, self.me.pid, self.me.start)
        with self._lock:
            self._records[pid] = record
        self.pid_dir.mkdir(parents=True, exist_ok=True)
        target = self.pid_dir / f"{pid}.json"
        scratch = target.with_suffix(".tmp")
        scratch.write_text(json.dumps(asdict(record)))
        scratch.replace(target)

    def _forget(self, pid: int) -> None:
        with self._lock:
            self._records.pop(pid, None)
            self._popens.pop(pid, None)
        (self.pid_dir / f"{pid}.json").unlink(missing_ok=True)

    def track(self) -> None:
        """Record every live descendant not yet recorded, and forget the records of the exited."""
        table = process_table()
        for pid in descendants(self.me.pid, table):
            found = table[pid]
            with self._lock:
                known = self._records.get(pid)
            if found.state in ("Z", "X") or (known is not None and known.start == found.start):
                continue
            if found.ppid != self.me.pid:
                self._foster.add(pid)
            self._record(_command_name(pid), pid, found, group=found.pgrp == pid)
        for record in self._snapshot():
            popen = self._popens.get(record.pid)
            if not is_running(record.who) and (popen is None or popen.returncode is not None):
                self._forget(record.pid)

    def _snapshot(self) -> list[Record]:
        """The records, oldest first (the tracker thread adds to them while the main thread stops)."""
        with self._lock:
            return list(self._records.values())

    @contextlib.contextmanager
    def tracking(self, interval: float = TRACK_SECONDS) -> Iterator[None]:
        """A daemon thread calls `track` every `interval` seconds inside the block."""
        done = threading.Event()

        def loop() -> None:
            while not done.wait(interval):
                with contextlib.suppress(OSError):
                    self.track()

        thread = threading.Thread(target=loop, name="realrun-process-tracker", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join(timeout=interval + 5)

    # -- stopping ---------------------------------------------------------------------------------

    def stop(self, processes: Iterable[subprocess.Popen[bytes]], grace: float = GRACE_SECONDS) -> None:
        """Stop these started processes (with their groups), in the order given: SIGTERM to each, then
        SIGKILL to whatever is still running `grace` seconds later."""
        with self._lock:
            records = [self._records[p.pid] for p in processes if p.pid in self._records]
        self._stop_records(records, grace)

    def stop_all(self, grace: float = GRACE_SECONDS) -> None:
        """Stop everything owned and every live descendant, newest first."""
        with contextlib.suppress(OSError):
            self.track()
        self._stop_records(list(reversed(self._snapshot())), grace)
        self._reap_orphans()

    def signal_all(self, signum: int) -> None:
        """Send `signum` to everything owned and every live descendant now, without waiting."""
        with contextlib.suppress(OSError):
            self.track()
        for record in reversed(self._snapshot()):
            self._signal(record, signum)

    def _stop_records(self, records: list[Record], grace: float) -> None:
        for record in records:
            self._signal(record, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(self._alive(r) for r in records):
            time.sleep(0.05)
        for record in records:
            if self._alive(record):
                self._signal(record, signal.SIGKILL)
        for record in records:
            popen = self._popens.get(record.pid)
            if popen is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    popen.wait(timeout=grace)
            if not self._alive(record):
                self._forget(record.pid)

    def _alive(self, record: Record) -> bool:
        with self._lock:
            popen = self._popens.get(record.pid)
        if popen is not None:
            popen.poll()  # reaps it: a zombie child counts as stopped
        if is_running(record.who):
            return True
        return record.pid in self._groups_made and _group_members(record.pid)

    def _signal(self, record: Record, signum: int) -> None:
        """Signal the process (its group, when it leads one) only while it provably is the one
        recorded: the same start time, or a group this run made that still has members. Never the
        entry point's own group (a `make` or a shell may share it)."""
        leader = is_running(record.who)
        made = record.pid in self._groups_made
        if not leader and not (made and _group_members(record.pid)):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if (record.group or made) and record.pid != os.getpgrp():
                os.killpg(record.pid, signum)
            else:
                os.kill(record.pid, signum)

    def _reap_orphans(self) -> None:
        """Collect the exit statuses of orphans re-parented here (the subreaper), never those of this
        process's own children, which their `Popen` (its own or the Automation API's) waits for."""
        for pid, found in process_table().items():
            if found.ppid == self.me.pid and found.state == "Z" and pid in self._foster:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)

    # -- an earlier run's leftovers ---------------------------------------------------------------

    def stop_leftovers(self, grace: float = GRACE_SECONDS) -> tuple[list[Record], list[Record]]:
        """Stop what earlier runs left, as their pid files prove; returns (stopped, left alone because
        their run is still going). A pid file whose process is gone, or is another process now, is
        only removed."""
        stale: list[Record] = []
        busy: list[Record] = []
        if not self.pid_dir.is_dir():
            return [], []
        for path in sorted(self.pid_dir.glob("*.json")):
            try:
                record = Record(**json.loads(path.read_text()))
            except (OSError, ValueError, TypeError):
                path.unlink(missing_ok=True)  # half-written by a run killed while writing it
                continue
            if not is_running(record.who):
                path.unlink(missing_ok=True)
            elif record.owner != self.me and is_running(record.owner):
                busy.append(record)
            elif record.owner != self.me:
                stale.append(record)
        with self._lock:
            self._records.update((record.pid, record) for record in stale)
        self._stop_records(stale, grace)
        return stale, busy


# -- the entry point --------------------------------------------------------------------------------

_current: RunProcesses | None = None


def current_owner() -> RunProcesses:
    """The entry point's owner; outside one (a test building a ControlPlane by hand), a fresh owner
    that records into the same pid folder."""
    return _current if _current is not None else RunProcesses()


def _become_subreaper() -> None:
    """Orphans of the run's processes are re-parented to the entry point, not to init, so they stay
    descendants (Linux 3.4 and later); elsewhere, nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


class _Signals:
    """SIGINT and SIGTERM stop the run's processes and raise RunInterrupted, at most once."""

    def __init__(self, run: RunProcesses, say: Callable[[str], None]) -> None:
        self.run = run
        self.say = say
        self.received: int | None = None
        self.shielded = 0
        self.previous: dict[int, Any] = {}
        self._killer: threading.Timer | None = None

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self.previous[signum] = signal.signal(signum, self._handle)

    def restore(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        if self._killer is not None:
            self._killer.cancel()

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is not None:
            # Asked again: no more waiting.
            self.run.signal_all(signal.SIGKILL)
            return
        self.received = signum
        name = signal.Signals(signum).name
        self.say(f"realrun: {name}: stopping every process of the run (pid files in {_shown(self.run.pid_dir)})")
        self.run.signal_all(signal.SIGTERM)
        self._killer = threading.Timer(GRACE_SECONDS, self.run.signal_all, args=(signal.SIGKILL,))
        self._killer.daemon = True
        self._killer.start()
        if not self.shielded:
            raise RunInterrupted(signum)

    @contextlib.contextmanager
    def shield(self) -> Iterator[None]:
        self.shielded += 1
        try:
            yield
        finally:
            self.shielded -= 1
        if not self.shielded and self.received is not None:
            raise RunInterrupted(self.received)


_signals: _Signals | None = None


@contextlib.contextmanager
def stopping() -> Iterator[None]:
    """A stop in progress (a control plane's, with its undos): a signal inside is raised after it."""
    if _signals is None:
        yield
        return
    with _signals.shield():
        yield


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def entry_point(body: Callable[[], int], *, pid_dir: Path | None = None, say: Callable[[str], None] = _say) -> int:
    """Run `body` as the owner of every process it starts, and stop all of them whatever ends it.

    Returns `body`'s exit code, or 128 + the signal's number (130 for SIGINT, 143 for SIGTERM) when a
    signal ended it, after one line on stderr and no traceback. Only the main thread can do this."""
    global _current, _signals
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("a real-run entry point runs in the main thread (signal handlers)")
    run = RunProcesses(pid_dir)
    stopped, busy = run.stop_leftovers()
    if stopped:
        names = ", ".join(f"{r.name} (pid {r.pid})" for r in stopped)
        say(f"realrun: stopped {len(stopped)} processes an earlier run left running: {names}")
    if busy:
        owners = sorted({r.owner_pid for r in busy})
        say(f"realrun: left alone {len(busy)} processes of a run still going (pid {', '.join(map(str, owners))})")
    _become_subreaper()
    signals = _Signals(run, say)
    previous_current, previous_signals = _current, _signals
    _current, _signals = run, signals
    signals.install()
    try:
        with run.tracking():
            try:
                try:
                    return body()
                finally:
                    with signals.shield():
                        run.stop_all()
            except RunInterrupted as interrupted:
                return interrupted.exit_code
            except KeyboardInterrupt:  # before the handler was installed, or raised by hand
                say("realrun: interrupted")
                return 128 + signal.SIGINT
    finally:
        signals.restore()
        _current, _signals = previous_current, previous_signals
