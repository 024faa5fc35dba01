"""The domain index answers exactly what comparing every pair of claims answers, in the same order."""

from __future__ import annotations

import random

import pytest

from components.model.checks.domain_claims import Claim, DomainClaims, domains_overlap

# Few labels and shallow names, so that equal names, parents and wildcards meet often.
_LABELS = ["a", "b", "c", "ab"]


def _pattern(rng: random.Random) -> str:
    name = ".".join(rng.choice(_LABELS) for _ in range(rng.randint(1, 4)))
    return f"*.{name}" if rng.random() < 0.5 else name


@pytest.mark.parametrize("seed", range(40))
def test_the_index_finds_what_pairwise_comparison_finds(seed: int) -> None:
    rng = random.Random(seed)
    claims = DomainClaims()
    added: list[Claim] = []
    checked = 0
    for step in range(150):
        tenant = f"t{rng.randint(0, 9)}"
        pattern = _pattern(rng)
        expected = [c for c in added if c.tenant != tenant and domains_overlap(pattern, c.pattern)]
        assert claims.overlapping(pattern, tenant) == expected, (pattern, tenant)
        checked += bool(expected)
        claim = Claim(pattern, tenant, f"{tenant}.yaml#{step}")
        claims.add(claim)
        added.append(claim)
    # The generator must produce overlaps, or the comparison proves nothing.
    assert checked > 20


def test_known_cases() -> None:
    claims = DomainClaims()
    for pattern, tenant in [("shop.example.com", "a"), ("*.api.example.com", "b"), ("*.example.org", "c")]:
        claims.add(Claim(pattern, tenant, f"{tenant}.yaml"))
    found = [c.pattern for c in claims.overlapping("*.example.com", "z")]
    assert found == ["shop.example.com", "*.api.example.com"]
    assert [c.pattern for c in claims.overlapping("v1.api.example.com", "z")] == ["*.api.example.com"]
    # `*.x` does not match x itself, and a tenant never overlaps itself.
    assert claims.overlapping("api.example.com", "z") == []
    assert claims.overlapping("shop.example.com", "a") == []
    assert [c.tenant for c in claims.overlapping("*.deep.sub.example.org", "z")] == ["c"]
