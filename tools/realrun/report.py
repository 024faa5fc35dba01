"""The real run's results, one line each, and the closing count that CI reads."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field


@dataclass
class Report:
    """Each check as `PASS name: detail` or `FAIL name: detail`, as it finishes."""

    passed: int = 0
    failed: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        elapsed = time.monotonic() - self.started
        print(f"[{elapsed:6.0f}s] {'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append(name)
        return ok

    def note(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:6.0f}s]      {text}", flush=True)

    def close(self) -> int:
        """The closing line (`N passed, N failed`) and the exit code: 0 only when nothing failed."""
        print(f"realrun: {self.passed} passed, {len(self.failed)} failed", flush=True)
        if self.failed:
            print("failed: " + ", ".join(self.failed), file=sys.stderr)
        return 0 if not self.failed else 1
