"""Which shard stack a tenant lives in.

Thousands of tenants do not fit one Pulumi stack (every resource step rewrites the state file, and
previews of a few thousand resources take tens of minutes), so large installs split tenants into
shard stacks that run in parallel. A tenant's shard must never change by accident: moving it means
moving its state with `pulumi state move`. So the assignment is

* an explicit `shard:` pin in the tenant file when present, otherwise
* rendezvous (highest-random-weight) hashing of the tenant's name over the shard count.

Adding or removing a tenant never moves another tenant (the assignment of a name depends on that
name only), and raising the shard count from n to n+1 moves only the ~1/(n+1) of tenants that the
new shard wins, which is the least any scheme can move.
"""

from __future__ import annotations

import hashlib


def _weight(tenant: str, shard: int) -> int:
    digest = hashlib.sha256(f"{tenant}/{shard}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def shard_of(tenant: str, shard_count: int, pinned: int | None = None) -> int:
    """The shard (0-based) a tenant belongs to, stable across runs, machines and Python versions."""
    if shard_count < 1:
        raise ValueError("shard_count must be at least 1")
    if pinned is not None:
        return pinned
    return max(range(shard_count), key=lambda shard: _weight(tenant, shard))
