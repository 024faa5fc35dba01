"""Live objects against the offline plan's manifests (docs/real-run.md#what-it-verifies).

Every object the offline plan writes must exist on the server, and every field it sets must read
back as written: a field the server drops (an unknown key, a field of a newer API version) or
rewrites shows here, where the mock runtime can never show it. The server adds fields (defaults,
status, managed fields); those are not compared. A few fields are written in one form and read back
in another by design, each normalised below with the reason.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kubernetes.utils import parse_quantity

# What the offline plan writes where it cannot know a value (tools/plan/harness.py): not compared.
PLACEHOLDERS = {"[secret]", "[unknown]"}
# Fields the server never returns as written: Secret `stringData` is write-only (merged into `data`).
WRITE_ONLY = {("Secret", "stringData")}


@dataclass(frozen=True)
class Difference:
    """One field of one object that does not read back as the plan wrote it."""

    object: str
    path: str
    planned: Any
    live: Any

    def __str__(self) -> str:
        return f"{self.object} {self.path}: planned {self.planned!r}, live {self.live!r}"


def _quantity(value: Any) -> Decimal | None:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    try:
        return Decimal(parse_quantity(value))  # type: ignore[no-untyped-call]
    except (ValueError, TypeError, ArithmeticError):
        return None


def _same_scalar(planned: Any, live: Any, path: str) -> bool:
    if planned == live:
        return True
    # Resource quantities are canonicalised by the server ("0.5" reads back as "500m").
    if any(key in path for key in (".resources.", ".hard.", ".limits", ".requests", ".default", ".max", ".min")):
        a, b = _quantity(planned), _quantity(live)
        return a is not None and a == b
    # An int-or-string written as a number string may read back as a number, and the reverse.
    return str(planned) == str(live)


def differences(planned: Any, live: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, planned, live) for every planned field that does not read back equal."""
    if isinstance(planned, dict):
        if not isinstance(live, dict):
            yield path, planned, live
            return
        for key, value in planned.items():
            # An empty map or list reads back absent: the API's `omitempty` drops it, same meaning.
            if value in ({}, []) and live.get(key) is None:
                continue
            yield from differences(value, live.get(key), f"{path}.{key}")
    elif isinstance(planned, list):
        if not isinstance(live, list) or len(live) != len(planned):
            yield path, planned, live
            return
        for index, (a, b) in enumerate(zip(planned, live, strict=True)):
            yield from differences(a, b, f"{path}[{index}]")
    elif planned in PLACEHOLDERS:
        return
    elif not _same_scalar(planned, live, path):
        yield path, planned, live


def compare(planned: dict[str, Any], live: dict[str, Any] | None) -> list[Difference]:
    """How `live` differs from `planned` (a missing object is one difference at the root)."""
    meta = planned.get("metadata", {})
    name = f"{planned.get('kind')} {meta.get('namespace', '')}/{meta.get('name')}".replace(" /", " ")
    if live is None:
        return [Difference(name, "", "the object", None)]
    found = []
    kind = planned.get("kind", "")
    for key, value in planned.items():
        if key in ("apiVersion", "kind", "status") or (kind, key) in WRITE_ONLY:
            continue
        if kind == "Secret" and key == "data" and isinstance(value, dict):
            # `data` is base64 on the wire in both directions; compare decoded.
            live_data = {k: base64.b64decode(v) for k, v in (live.get("data") or {}).items()}
            for item, encoded in value.items():
                if encoded in PLACEHOLDERS:
                    continue
                if live_data.get(item) != base64.b64decode(encoded):
                    found.append(Difference(name, f".data.{item}", "<value>", "<other value>"))
            continue
        found += [Difference(name, p, a, b) for p, a, b in differences(value, live.get(key), f".{key}")]
    return found
