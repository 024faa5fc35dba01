"""GCP names per tenant environment: valid service account ids and key names that never collide,
even where tenant and environment names contain `-` (`a-b`/`c` against `a`/`b-c`)."""

from __future__ import annotations

import re

import pytest

from components.clouds.gcp.data import key_name, service_account_id

# IAM's rule for service account ids.
_ACCOUNT_ID = re.compile(r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$")
_KEY_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,63}$")
PAIRS = [("a-b", "c"), ("a", "b-c"), ("acme", "dev"), ("acme", "prod"), ("x" * 40, "staging-eu-west"), ("ab", "d")]


@pytest.mark.parametrize(("tenant", "environment"), PAIRS)
def test_names_are_valid(tenant: str, environment: str) -> None:
    assert _ACCOUNT_ID.fullmatch(service_account_id(tenant, environment))
    assert _KEY_NAME.fullmatch(key_name(tenant, environment))


def test_names_never_collide() -> None:
    assert len({service_account_id(t, e) for t, e in PAIRS}) == len(PAIRS)
    assert len({key_name(t, e) for t, e in PAIRS}) == len(PAIRS)
    # The readable part alone would collide; the hash keeps them apart.
    assert service_account_id("a-b", "c") != service_account_id("a", "b-c")
