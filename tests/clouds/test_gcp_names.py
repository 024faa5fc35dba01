"""GCP names the program derives from tenant, environment, database and instance names, checked
against GCP's name rules (components/clouds/gcp/name_rules.py) at the model's limits and edge
characters, in a rendered plan: tenant + environment at 55 characters (their namespace's limit),
tenant `a--b`, databases `x__y`, `x_` and 31 characters, the longest project id. Each name is
valid, and names that must be unique are (`a-b`/`c` against `a`/`b-c`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from components.clouds.gcp.data import key_name, service_account_id
from components.clouds.gcp.name_rules import AUTONAME_SUFFIX, RULES, cloud_sql_instance_name
from components.model.core.labels import MAX_DNS_LABEL, NAMESPACE_PREFIX
from tests.support import EXAMPLE_TENANTS, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, RecordedResource

PAIRS = [("a-b", "c"), ("a", "b-c"), ("acme", "dev"), ("acme", "prod"), ("x" * 40, "staging-eu-west"), ("ab", "d")]
# tenant + environment: the longest pair whose namespace `tenant-<t>-<e>` is a DNS label.
PAIR_LIMIT = MAX_DNS_LABEL - len(NAMESPACE_PREFIX) - 1
LONG_ENV = "e" * 20
LONG_TENANT = "t" * (PAIR_LIMIT - len(LONG_ENV))
# Longest project id the model allows (6-30 characters).
LONG_PROJECT = "p" + "-" * 28 + "q"
EDGE_DATABASES = ["x__y", "x_", "x" * 31, "y" + "_" * 30, "z"]
_INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"


@pytest.mark.parametrize(("tenant", "environment"), PAIRS)
def test_names_are_valid(tenant: str, environment: str) -> None:
    assert RULES["service-account-id"].problems(service_account_id(tenant, environment)) == []
    assert RULES["kms-crypto-key"].problems(key_name(tenant, environment)) == []


def test_names_never_collide() -> None:
    assert len({service_account_id(t, e) for t, e in PAIRS}) == len(PAIRS)
    assert len({key_name(t, e) for t, e in PAIRS}) == len(PAIRS)
    # The readable part alone would collide; the hash keeps them apart.
    assert service_account_id("a-b", "c") != service_account_id("a", "b-c")


def _edge_plan(tmp_path: Path, project: str = LONG_PROJECT) -> ProgramRun:
    databases = [{"name": name, "engine": "postgres", "version": "16"} for name in EDGE_DATABASES]
    secrets = [{"name": "s" * MAX_DNS_LABEL, "source": "generated"}]
    documents = [
        # Only prod hosts LONG_ENV (the --set below): the other stacks would refuse a tenant naming it.
        tenant_document(LONG_TENANT, environments=[LONG_ENV], databases=databases, secrets=secrets, stacks=["prod"]),
        tenant_document("a--b", costCenter="Cost_Centre-" + "X" * 51, databases=databases[:2], secrets=secrets),
    ]
    gcp = (
        f'{{"project": "{project}", "region": "europe-west1", "keyRing": "tenancy-tenant-keys", '
        f'"network": "projects/{project}/global/networks/tenancy"}}'
    )
    return plan(
        "prod",
        write_tenants(tmp_path, *documents),
        gcp=gcp,
        environments=f'["dev", "prod", "{LONG_ENV}"]',
        data='{"sharedInstances": {"' + "s" * MAX_DNS_LABEL + '": {"engine": "postgres", "version": "16"}}}',
    )


def _instance_id(instance: RecordedResource) -> str:
    """The id Cloud SQL gets: the program's name, or Pulumi's auto-name at its longest."""
    named = instance.inputs.get("name")
    return named if isinstance(named, str) else f"{instance.name}-{'f' * (AUTONAME_SUFFIX - 1)}"


def _labels(resource: RecordedResource) -> dict[str, Any]:
    settings = resource.inputs.get("settings")
    labels = resource.inputs.get("labels") or (settings.get("userLabels") if isinstance(settings, dict) else None)
    return labels if isinstance(labels, dict) else {}


def test_every_gcp_name_at_the_models_limits_is_one_gcp_accepts(tmp_path: Path) -> None:
    run = _edge_plan(tmp_path)
    checked: Counter[str] = Counter()
    for resource in run.resources:
        for key, value in _labels(resource).items():
            assert RULES["label-key"].problems(key) == [], resource.name
            assert RULES["label-value"].problems(value) == [], (resource.name, key)
            checked["label"] += 1
        if resource.type == _INSTANCE:
            problems = RULES["cloud-sql-instance"].problems(_instance_id(resource), reserved=len(LONG_PROJECT) + 1)
            assert problems == [], resource.name
        elif resource.type == "gcp:serviceaccount/account:Account":
            assert RULES["service-account-id"].problems(resource.inputs["accountId"]) == [], resource.name
        elif resource.type == "gcp:kms/cryptoKey:CryptoKey":
            assert RULES["kms-crypto-key"].problems(resource.inputs["name"]) == [], resource.name
        elif resource.type == "gcp:kms/keyRing:KeyRing":
            assert RULES["kms-key-ring"].problems(resource.inputs["name"]) == [], resource.name
        elif resource.type == "gcp:secretmanager/secret:Secret":
            assert RULES["secret-manager-secret"].problems(resource.inputs["secretId"]) == [], resource.name
        else:
            continue
        checked[resource.type] += 1
    # Every kind was met: 5 + 2 databases in 1 + 2 environments, the shared instance, identities, keys.
    assert checked[_INSTANCE] == 5 + 2 * 2 + 1, checked
    assert checked["gcp:secretmanager/secret:Secret"] >= 3 and checked["label"], checked
    # Ids that must be unique in the project are.
    for kind, field in (
        (_INSTANCE, None),
        ("gcp:serviceaccount/account:Account", "accountId"),
        ("gcp:kms/cryptoKey:CryptoKey", "name"),
        ("gcp:secretmanager/secret:Secret", "secretId"),
    ):
        ids = [_instance_id(r) if field is None else r.inputs[field] for r in run.of_type(kind)]
        assert len(ids) == len(set(ids)), kind


def test_only_names_past_the_limit_are_shortened() -> None:
    # Every instance of the example tenants keeps Pulumi's auto-name: nothing in a state is renamed.
    run = plan("prod", EXAMPLE_TENANTS)
    assert run.of_type(_INSTANCE) and all("name" not in i.inputs for i in run.of_type(_INSTANCE))
    fits = "a" * (98 - len("tenancy-prod") - 1 - AUTONAME_SUFFIX)
    assert cloud_sql_instance_name(fits, "tenancy-prod") is None
    shortened = cloud_sql_instance_name(fits + "b", "tenancy-prod")
    assert shortened is not None and len("tenancy-prod:" + shortened) <= 98
    # Deterministic, and unique for resource names that share the readable prefix.
    assert shortened == cloud_sql_instance_name(fits + "b", "tenancy-prod")
    assert shortened != cloud_sql_instance_name(fits + "c", "tenancy-prod")
    # Never a trailing hyphen before the hash, whatever the cut point.
    assert "--" not in (cloud_sql_instance_name("a" * 60 + "-" * 40, "tenancy-prod") or "")
