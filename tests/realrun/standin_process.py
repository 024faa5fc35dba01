"""A stand-in for one process of the real run (etcd, the API server, `go build`, the Pulumi CLI, a
plugin), for tests/realrun/test_stop.py: it writes `NAME PID` to LOG, starts the children it is
asked for (`NAME`, or `NAME+group` for a child in a process group of its own, as the Pulumi CLI
starts its plugins), and waits to be stopped.

    python standin_process.py LOG NAME [CHILD ...] [--ignore-term]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def main(argv: list[str]) -> None:
    log, name, *rest = argv
    if "--own-group" in rest:
        os.setpgid(0, 0)
    if "--ignore-term" in rest:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Ctrl-C reaches every process of the terminal's foreground group: exit quietly, as Go programs do.
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
    for child in (word for word in rest if not word.startswith("--")):
        child_name, _, how = child.partition("+")
        extra = ["--own-group"] if how == "group" else []
        subprocess.Popen([sys.executable, __file__, log, child_name, *extra])
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{name} {os.getpid()}\n")
    time.sleep(600)


if __name__ == "__main__":
    main(sys.argv[1:])
