"""The service agents' use of the tenant keys is kept like the data under them (issue 44, 1), and a
tenant key waits for that use and nothing else of the platform's (issue 44, 3).

Before: the KeyRingIAMMember grants were plain resources, so `destroy --exclude-protected`, a rename
without alias or a replacement revoked Cloud SQL's and Secret Manager's use of every tenant key; and
each CryptoKey read the key ring out of the whole platform value, so it waited for the shared Cloud
SQL instance and its admin secret (the first `up` queued every tenant key behind one long create).
"""

from __future__ import annotations

from tools.plan.harness import ProgramRun

GRANT = "gcp:kms/keyRingIAMMember:KeyRingIAMMember"
KEY = "gcp:kms/cryptoKey:CryptoKey"


def _closure(run: ProgramRun, urn: str) -> set[str]:
    """Every resource `urn` waits for, directly or through others (parents included)."""
    by_urn = run.by_urn()
    seen: set[str] = set()
    todo = [urn]
    while todo:
        record = by_urn[todo.pop()]
        for dependency in [*record.dependencies, *([record.parent] if record.parent else [])]:
            if dependency in by_urn and dependency not in seen:
                seen.add(dependency)
                todo.append(dependency)
    return seen


def test_the_agents_use_of_the_keys_is_protected_and_retained(prod_plan: ProgramRun) -> None:
    grants = prod_plan.of_type(GRANT)
    assert {g.name for g in grants} == {"tenancy-sql-agent-keys", "tenancy-secrets-agent-keys"}
    for grant in grants:
        assert grant.protect and grant.retain_on_delete, grant.name


def test_every_tenant_key_waits_for_the_agents_grants(prod_plan: ProgramRun) -> None:
    grants = {g.urn for g in prod_plan.of_type(GRANT)}
    keys = prod_plan.of_type(KEY)
    assert keys
    for key in keys:
        assert grants <= _closure(prod_plan, key.urn), key.name


def test_no_tenant_key_waits_for_a_shared_instance_or_its_admin_secret(prod_plan: ProgramRun) -> None:
    by_urn = prod_plan.by_urn()
    keys = prod_plan.of_type(KEY)
    assert keys
    for key in keys:
        waited = {by_urn[u].name for u in _closure(prod_plan, key.urn)}
        shared = sorted(name for name in waited if name.startswith("shared-"))
        assert shared == [], (key.name, shared)
