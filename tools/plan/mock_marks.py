"""Where a plan carries values the mocks made up: ids, e-mails, ARNs and addresses that the cloud
computes at `pulumi up`. Offline they are placeholders of the right shape (a private IP from
10.30.0.0/24, the account 111122223333, the project `mock-project`); the plan files say so, so
nobody copies one into a firewall rule or a ticket as if it were real.

A field is marked when its value contains a mock-made value. Stacks whose mocks make nothing up
(the `local` cloud) pay nothing for this.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any


def _leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    elif isinstance(value, str):
        yield path, value


def matcher(made: frozenset[str]) -> re.Pattern[str] | None:
    """One pattern for all mock-made values, longest first; None when there are none."""
    if not made:
        return None
    return re.compile("|".join(re.escape(value) for value in sorted(made, key=len, reverse=True)))


def mock_paths(value: Any, pattern: re.Pattern[str] | None) -> list[str]:
    """Field paths (`spec.egress[0].to[0].ipBlock.cidr`) whose value holds a mock-made value."""
    if pattern is None:
        return []
    return [path for path, text in _leaves(value, "") if pattern.search(text)]


def manifest_header(paths: list[str]) -> str:
    """A YAML comment for a manifest with mock-made fields (comments keep the object valid)."""
    if not paths:
        return ""
    return "# Offline plan: these fields hold values the mocks made up; the cloud computes the real ones:\n" + "".join(
        f"#   {path}\n" for path in paths
    )
