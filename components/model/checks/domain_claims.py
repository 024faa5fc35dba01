"""Which tenant claims which hostnames, and which claims of other tenants a new one overlaps.

A claim is an exact hostname (`shop.example.com`) or a wildcard (`*.example.com`, any name below
example.com). Comparing every new claim with every earlier one made the catalog check quadratic:
28 s for 3,000 tenants with two domains each. `DomainClaims` indexes claims by name and by every
parent domain, so one lookup costs a few dictionary reads per label of the name, whatever the
number of tenants; `domains_overlap` stays the definition the index is tested against
(tests/model/test_domain_claims.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Claim:
    """One hostname pattern of one tenant, and the file that claims it (for the message)."""

    pattern: str
    tenant: str
    source: str


def domains_overlap(a: str, b: str) -> bool:
    """Whether some hostname matches both patterns; `*.x` matches any name below x."""
    a_wild, b_wild = a.startswith("*."), b.startswith("*.")
    a_base, b_base = a.removeprefix("*."), b.removeprefix("*.")
    if not a_wild and not b_wild:
        return a == b
    if a_wild and b_wild:
        return a_base == b_base or a_base.endswith("." + b_base) or b_base.endswith("." + a_base)
    exact, wildcard_base = (b, a_base) if a_wild else (a, b_base)
    return exact.endswith("." + wildcard_base)


def _parents(name: str) -> list[str]:
    """The strict parent domains of a name: a.b.c -> [b.c, c]."""
    labels = name.split(".")
    return [".".join(labels[index:]) for index in range(1, len(labels))]


@dataclass
class DomainClaims:
    """Claims so far, indexed three ways; each lookup returns claims in the order they were added."""

    _order: dict[Claim, int] = field(default_factory=dict)
    # Exact hostnames and wildcard bases, by that name.
    _exact: dict[str, list[Claim]] = field(default_factory=lambda: defaultdict(list))
    _wildcard: dict[str, list[Claim]] = field(default_factory=lambda: defaultdict(list))
    # Every claim (exact or wildcard) strictly below a domain, by that domain.
    _below: dict[str, list[Claim]] = field(default_factory=lambda: defaultdict(list))

    def add(self, claim: Claim) -> None:
        self._order.setdefault(claim, len(self._order))
        wild = claim.pattern.startswith("*.")
        base = claim.pattern.removeprefix("*.")
        (self._wildcard if wild else self._exact)[base].append(claim)
        for parent in _parents(base):
            self._below[parent].append(claim)

    def overlapping(self, pattern: str, tenant: str) -> list[Claim]:
        """Claims of other tenants that some hostname matching `pattern` also matches."""
        base = pattern.removeprefix("*.")
        if pattern.startswith("*."):
            # *.base meets wildcards on base or a parent of it, and every claim below base.
            found = [claim for name in [base, *_parents(base)] for claim in self._wildcard.get(name, [])]
            found += self._below.get(base, [])
        else:
            # An exact name meets itself and wildcards on its parents (`*.base` does not match base).
            found = [claim for name in _parents(base) for claim in self._wildcard.get(name, [])]
            found += self._exact.get(base, [])
        unique = {claim: None for claim in found if claim.tenant != tenant}
        return sorted(unique, key=self._order.__getitem__)
