"""`tenancy:data.legacyKeys`: what it registers on GCP and AWS (aliases, the old CryptoKey name,
instances that keep their key), that per-environment isolation still holds with it, and every
wrong entry refused before anything is registered, naming the settings file and key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.clouds.legacy_keys import one_identity_tenants
from components.model.core.errors import ConfigurationError
from tests.clouds.identity_reach import aws_identities, gcp_identities
from tests.support import EXAMPLE_TENANTS, plan, tenant_document, write_tenants
from tests.vcluster.helpers import previous_outputs
from tools.plan.harness import ProgramRun, RecordedResource, new_monitor, run_program, stack_config

ACME = {"environment": "prod", "databases": ["dev/orders"]}
KEY_TYPE = {"prod": "gcp:kms/cryptoKey:CryptoKey", "prod-aws": "aws:kms/key:Key"}
INSTANCE_TYPE = {"prod": "gcp:sql/databaseInstance:DatabaseInstance", "prod-aws": "aws:rds/instance:Instance"}
INSTANCE_KEY = {"prod": "encryptionKeyName", "prod-aws": "kmsKeyId"}
FIXTURES = Path(__file__).parent.parent / "tools" / "fixtures"
CONTROLLER = "arn:aws:iam::111122223333:role/tenancy-prod-external-secrets"


def _data(stack: str, legacy: dict[str, Any]) -> str:
    config, _ = stack_config(stack)
    data = json.loads(config["tenancy:data"])
    data["legacyKeys"] = legacy
    return json.dumps(data)


def _plan(stack: str, legacy: dict[str, Any]) -> ProgramRun:
    return plan(stack, EXAMPLE_TENANTS, data=_data(stack, legacy))


def _one(run: ProgramRun, type_token: str, name: str) -> RecordedResource:
    [match] = [r for r in run.of_type(type_token) if r.name == name]
    return match


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_the_adopting_environment_key_is_the_old_key_moved(stack: str) -> None:
    run = _plan(stack, {"acme": ACME})
    adopted = _one(run, KEY_TYPE[stack], "acme-prod-key")
    assert adopted.aliases == ["acme-key"]
    assert adopted.protect
    assert _one(run, KEY_TYPE[stack], "acme-dev-key").aliases == []
    # Tenants not listed are planned as new ones: their keys have no past.
    assert _one(run, KEY_TYPE[stack], "genomics-lab-prod-key").aliases == []


def test_gcp_adopted_key_keeps_its_cryptokey_name() -> None:
    """A CryptoKey's name cannot change (a new name is a new key), so the old one stays."""
    run = _plan("prod", {"acme": ACME})
    assert _one(run, KEY_TYPE["prod"], "acme-prod-key").inputs["name"] == "tenant-acme"
    assert _one(run, KEY_TYPE["prod"], "acme-dev-key").inputs["name"] == "tenancy_acme_dev"
    assert _one(run, KEY_TYPE["prod"], "genomics-lab-prod-key").inputs["name"] == "tenancy_genomics-lab_prod"


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_listed_instances_keep_their_key_and_others_take_their_environments(stack: str) -> None:
    run = _plan(stack, {"acme": ACME})
    dev = _one(run, INSTANCE_TYPE[stack], "acme-dev-db-orders-instance")
    # Besides the key, an RDS instance always ignores its create-only lifecycle setting (engine_rules.py)
    # and a Cloud SQL instance the disk size autoresize grows (gcp/disk_size.py AUTORESIZED_DISK).
    always = {"prod": ["settings.diskSize"], "prod-aws": ["engineLifecycleSupport"]}[stack]
    assert dev.ignore_changes == sorted([INSTANCE_KEY[stack], *always])
    assert dev.protect
    for name in ("acme-prod-db-orders-instance", "acme-prod-db-legacy-billing-instance"):
        assert _one(run, INSTANCE_TYPE[stack], name).ignore_changes == always


def test_aws_pod_identity_associations_take_the_old_ones_over() -> None:
    run = _plan("prod-aws", {"acme": ACME})
    association = _one(run, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "acme-dev-pod-identity")
    assert association.aliases == ["acme-tenant-acme-dev-pod-identity"]


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_without_the_setting_nothing_is_aliased_or_ignored(stack: str) -> None:
    run = plan(stack, EXAMPLE_TENANTS)
    types = {KEY_TYPE[stack], INSTANCE_TYPE[stack], "aws:eks/podIdentityAssociation:PodIdentityAssociation"}
    touched = [r for r in run.resources if r.type in types]
    assert len(touched) > 5
    for resource in touched:
        # RDS instances always ignore their create-only lifecycle setting (engine_rules.py), nothing else.
        always = {
            "aws:rds/instance:Instance": ["engineLifecycleSupport"],
            "gcp:sql/databaseInstance:DatabaseInstance": ["settings.diskSize"],
        }.get(resource.type, [])
        assert resource.aliases == [] and resource.ignore_changes == always, resource.name


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_dev_identity_reaches_nothing_of_prod_with_the_old_key_adopted(stack: str) -> None:
    """The adopted key is prod's alone: dev's identity has no grant on it, even while a dev
    instance stays encrypted with it (the database service uses the key, not the tenant)."""
    run = _plan(stack, {"acme": ACME})
    identities = gcp_identities(run) if stack == "prod" else aws_identities(run, CONTROLLER)
    by_namespace = {ns: identity for identity in identities.values() for ns in identity.namespaces}
    dev, prod = by_namespace["tenant-acme-dev"], by_namespace["tenant-acme-prod"]
    assert not {asset for asset in dev.reaches if asset.environment == "prod"}
    if stack == "prod":
        # On GCP no tenant identity holds a key role (the service agents use the keys); the adopted
        # key is prod's and keeps its old CryptoKey name.
        assert not [asset for asset in (*dev.reaches, *prod.reaches) if asset.kind == "key"]
        (adopted,) = [k for k in run.of_type(KEY_TYPE[stack]) if k.name == "acme-prod-key"]
        assert adopted.inputs["name"] == "tenant-acme"
        return
    [key] = [asset for asset in prod.reaches if asset.kind == "key"]
    assert key.environment == "prod"


def _refusal(stack: str, legacy: dict[str, Any], tenants: list[dict[str, Any]] | None = None, tmp: Any = None) -> str:
    overrides = {"tenancy:data": _data(stack, legacy)}
    overrides["tenancy:tenantsDir"] = str(write_tenants(tmp, *tenants) if tenants else EXAMPLE_TENANTS)
    config, secret_keys = stack_config(stack, overrides)
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program(stack, config, secret_keys, monitor=monitor)
    assert monitor.recorded == []
    return str(raised.value)


@pytest.mark.parametrize(
    ("legacy", "field", "words"),
    [
        ({"nobody": {"environment": "prod"}}, "tenancy:data.legacyKeys.nobody", "no tenant file"),
        ({"acme": {"environment": "staging"}}, "tenancy:data.legacyKeys.acme.environment", "not an environment"),
        (
            {"acme": {"environment": "prod", "databases": ["prod/orders"]}},
            "tenancy:data.legacyKeys.acme.databases.0",
            "takes the old key over",
        ),
        (
            {"acme": {"environment": "prod", "databases": ["qa/orders"]}},
            "tenancy:data.legacyKeys.acme.databases.0",
            "not an environment of tenant acme",
        ),
        (
            {"acme": {"environment": "prod", "databases": ["dev/invoices"]}},
            "tenancy:data.legacyKeys.acme.databases.0",
            "no database 'invoices' in dev",
        ),
        (
            {"acme": {"environment": "prod", "databases": ["dev/orders", "dev/orders"]}},
            "tenancy:data.legacyKeys.acme.databases",
            "duplicate entries",
        ),
        ({"acme": {"environment": "prod", "databases": ["orders"]}}, "tenancy:data.legacyKeys.acme.databases.0", ""),
    ],
)
@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_wrong_entries_are_refused_naming_the_key(stack: str, legacy: dict[str, Any], field: str, words: str) -> None:
    message = _refusal(stack, legacy)
    assert f"Pulumi.{stack}.yaml" in message
    assert field in message and words in message, message


def test_a_database_on_a_shared_instance_has_no_key_to_keep(tmp_path: Any) -> None:
    tenant = tenant_document(
        "shop", databases=[{"name": "orders", "engine": "postgres", "version": "16", "placement": "shared"}]
    )
    message = _refusal("prod", {"shop": {"environment": "prod", "databases": ["dev/orders"]}}, [tenant], tmp_path)
    assert "tenancy:data.legacyKeys.shop.databases.0" in message and "shared instance" in message


def test_a_local_stack_refuses_the_setting() -> None:
    message = _refusal("dev", {"acme": {"environment": "prod"}})
    assert "Pulumi.dev.yaml" in message and "tenancy:data.legacyKeys" in message and "no cloud keys" in message


# The tenants' identity outputs of the prod stack deployed before per-environment keys (5e3f2b4).
OLD_OUTPUTS = json.loads((FIXTURES / "outputs-before-per-environment-keys-prod.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_a_stack_deployed_with_one_key_per_tenant_must_name_each_in_legacy_keys(stack: str) -> None:
    """The engine would refuse to delete the old key and advise unprotecting it, which would lose
    it; the stack refuses first, before anything registers, and says what to do."""
    with previous_outputs(stack, OLD_OUTPUTS):
        message = _refusal(stack, {"acme": ACME})
    assert f"Pulumi.{stack}.yaml: tenancy:data.legacyKeys.genomics-lab:" in message
    assert "tenancy key-migration" in message and "docs/runbooks/per-environment-keys.md" in message
    assert "legacyKeys.acme" not in message


def test_a_stack_listing_every_old_tenant_plans() -> None:
    legacy = {"acme": ACME, "genomics-lab": {"environment": "prod"}, "northwind": {"environment": "prod"}}
    with previous_outputs("prod", OLD_OUTPUTS):
        run = _plan("prod", legacy)
    assert _one(run, KEY_TYPE["prod"], "northwind-prod-key").aliases == ["northwind-key"]


def test_a_stack_already_per_environment_is_not_asked() -> None:
    current = plan("prod", EXAMPLE_TENANTS).outputs
    assert one_identity_tenants(current) == set()
    with previous_outputs("prod", current):
        assert plan("prod", EXAMPLE_TENANTS).resources
