"""An existing GCP/AWS stack's first preview after keys became per environment (issue 13 follow-up).

The state files are what a stack deployed from the commit before per-environment keys holds: its
cloud and random resources, made from `tools.plan.run --stack prod|prod-aws` of commit 5e3f2b4 with
the mocks' ids and ARNs as outputs (the shape of `pulumi stack export`). Each test plans today's
program over them and reads the steps the engine would take (tools/operations/upgrade_preview.py).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tools.operations import key_migration
from tools.operations.key_migration import legacy_keys_block, legacy_tenants, plan_with
from tools.operations.upgrade_preview import StateResource, Step, preview, read_state

FIXTURES = Path(__file__).parent / "fixtures"
STACKS = ["prod", "prod-aws"]
INSTANCE_KEY = {"prod": "encryptionKeyName", "prod-aws": "kmsKeyId"}


def _state(stack: str) -> list[StateResource]:
    return read_state(FIXTURES / f"state-before-per-environment-keys-{stack}.json")


def _steps(stack: str, block: dict[str, Any]) -> list[Step]:
    return preview(_state(stack), plan_with(stack, block).resources)


def _named(steps: list[Step]) -> dict[str, Step]:
    return {step.urn.rsplit("::", 1)[-1]: step for step in steps}


def _refused(steps: list[Step]) -> set[str]:
    return {step.urn.rsplit("::", 1)[-1] for step in steps if step.refused}


def test_old_keys_and_the_instances_on_them_are_found_in_the_state() -> None:
    gcp = legacy_tenants(_state("prod"))
    assert sorted(gcp) == ["acme", "genomics-lab", "northwind"]
    assert sorted(gcp["acme"].instances) == [("dev", "orders"), ("prod", "legacy_billing"), ("prod", "orders")]
    assert gcp["acme"].key.endswith("/cryptoKeys/tenant-acme")
    aws = legacy_tenants(_state("prod-aws"))
    assert sorted(aws) == ["acme", "genomics-lab"]
    assert aws["acme"].key.endswith(":key/acme-key")
    assert legacy_keys_block(aws, "prod") == {
        "acme": {"environment": "prod", "databases": ["dev/orders"]},
        "genomics-lab": {"environment": "prod"},
    }


@pytest.mark.parametrize("stack", STACKS)
def test_without_legacy_keys_the_first_preview_is_refused(stack: str) -> None:
    """What a stack deployed before the change meets today: its old key would be deleted and its
    instances replaced onto new keys; all protected, so the engine stops the preview."""
    refused = _refused(_steps(stack, {}))
    assert {"acme-key", "genomics-lab-key"} <= refused
    steps = _named(_steps(stack, {}))
    assert steps["acme-dev-db-orders-instance"].kind == "replace"
    assert steps["acme-dev-db-orders-instance"].properties == (INSTANCE_KEY[stack],)
    assert "acme-dev-db-orders-instance" in refused


@pytest.mark.parametrize("stack", STACKS)
def test_with_the_suggested_block_nothing_protected_is_deleted_or_replaced(stack: str) -> None:
    state = _state(stack)
    block = legacy_keys_block(legacy_tenants(state), "prod")
    steps = _steps(stack, block)
    assert _refused(steps) == set()
    protected = [step for step in steps if step.protected and step.kind in ("delete", "replace")]
    assert protected == []
    named = _named(steps)
    # The old key is prod's key now: the same cloud object, updated in place (labels, description).
    for tenant in block:
        assert str(named[f"{tenant}-prod-key"].old).endswith(f"::{tenant}-key")
        assert named[f"{tenant}-prod-key"].kind in ("same", "update")
    # Every instance that was deployed keeps its key.
    for item in state:
        if item.type in ("gcp:sql/databaseInstance:DatabaseInstance", "aws:rds/instance:Instance"):
            assert INSTANCE_KEY[stack] not in named[item.name].properties, item.name


@pytest.mark.parametrize("stack", STACKS)
def test_an_instance_taken_off_the_block_too_early_is_refused(stack: str) -> None:
    """Removing an entry before its instance is moved does not half-apply: the engine refuses
    to replace the protected instance, and the preview stops with it named."""
    block = legacy_keys_block(legacy_tenants(_state(stack)), "prod")
    block["acme"].pop("databases")
    assert _refused(_steps(stack, block)) == {"acme-dev-db-orders-instance"}


def test_identities_are_replaced_not_kept_and_eks_associations_updated_in_place() -> None:
    block = legacy_keys_block(legacy_tenants(_state("prod-aws")), "prod")
    named = _named(_steps("prod-aws", block))
    assert named["acme-identity"].kind == "delete"
    assert named["acme-dev-identity"].kind == "create"
    # EKS allows one association per namespace and account: the old one is updated, not doubled.
    association = named["acme-dev-pod-identity"]
    assert association.kind == "update"
    assert str(association.old).endswith("::acme-tenant-acme-dev-pod-identity")
    # Secrets Manager re-encrypts the labelled versions in place under the environment's key.
    assert named["acme-dev-secret-session-key-secret"].kind == "update"
    assert named["acme-dev-secret-session-key-secret"].properties == ("kmsKeyId",)


def test_gcp_secrets_change_key_in_place_and_old_identity_grants_go() -> None:
    block = legacy_keys_block(legacy_tenants(_state("prod")), "prod")
    named = _named(_steps("prod", block))
    assert named["acme-dev-secret-session-key-secret"].kind == "update"
    assert named["acme-dev-secret-session-key-secret"].properties == ("replication",)
    assert named["acme-key-user"].kind == "delete"
    assert named["acme-identity"].kind == "delete"


def test_a_moved_instance_drops_out_of_the_block(tmp_path: Path) -> None:
    """After the dev instance is restored under dev's key, the next run lists nothing to keep."""
    document = json.loads((FIXTURES / "state-before-per-environment-keys-prod-aws.json").read_text())
    moved = copy.deepcopy(document)
    for item in moved["deployment"]["resources"]:
        if item["urn"].endswith("::acme-dev-db-orders-instance"):
            item["inputs"]["kmsKeyId"] = "arn:aws:kms:eu-west-1:111122223333:key/acme-dev-key"
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(moved), encoding="utf-8")
    block = legacy_keys_block(legacy_tenants(read_state(path)), "prod")
    assert block["acme"] == {"environment": "prod"}


def test_the_command_prints_the_block_and_exits_zero_when_nothing_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = str(FIXTURES / "state-before-per-environment-keys-prod.json")
    assert key_migration.main(["--state", state, "--stack", "prod"]) == 0
    out = capsys.readouterr().out
    assert "legacyKeys:" in out and "- dev/orders" in out
    assert "0 protected resources the preview would refuse" in out
    assert "delete   acme-identity (gcp:serviceaccount/account:Account)" in out


def test_the_command_refuses_an_environment_a_tenant_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    state = str(FIXTURES / "state-before-per-environment-keys-prod.json")
    assert key_migration.main(["--state", state, "--stack", "prod", "--environment", "staging"]) == 2
    assert "tenancy:data.legacyKeys.acme.environment" in capsys.readouterr().err


def _after_first_up_and_move(stack: str) -> list[StateResource]:
    """The state once the first `up` has moved acme's old key to prod's URN and created dev's key,
    and the dev instance has been restored under dev's key and imported in place of the old one."""
    key_type, key_out = ("aws:kms/key:Key", "arn") if stack == "prod-aws" else ("gcp:kms/cryptoKey:CryptoKey", "id")
    state = []
    dev_key = "arn:aws:kms:eu-west-1:111122223333:key/acme-dev-key"
    if stack == "prod":
        ring_id = "projects/mock-project/locations/europe-west1/keyRings/tenancy-tenant-keys"
        dev_key = f"{ring_id}/cryptoKeys/tenancy_acme_dev"
    for item in _state(stack):
        if item.name == "acme-key":
            item = StateResource(item.urn.replace("::acme-key", "::acme-prod-key"), *_rest(item))
        if item.name == "acme-dev-db-orders-instance":
            item.inputs[INSTANCE_KEY[stack]] = dev_key
        state.append(item)
    template = next(item for item in state if item.name == "acme-prod-key")
    outputs = {key_out: dev_key} if key_out == "arn" else {}
    ring = {"name": "tenancy_acme_dev", "keyRing": dev_key.split("/cryptoKeys/")[0]} if stack == "prod" else {}
    urn = template.urn.replace("acme-prod-key", "acme-dev-key")
    made = StateResource(urn, key_type, dev_key, ring, outputs, True, template.parent)
    return [*state, made]


def _rest(item: StateResource) -> tuple[str, str, dict[str, Any], dict[str, Any], bool, str | None]:
    return item.type, item.id, item.inputs, item.outputs, item.protect, item.parent


@pytest.mark.parametrize("stack", STACKS)
def test_once_the_instance_is_moved_its_entry_goes_and_nothing_is_refused(stack: str) -> None:
    state = _after_first_up_and_move(stack)
    # Before the move was recorded, the stack named acme (and the others) with prod adopting.
    adopted = {"acme": "prod", "genomics-lab": "prod", "northwind": "prod"}
    found = legacy_tenants(state, adopted)
    assert found["acme"].instances == [("prod", "legacy_billing"), ("prod", "orders")]
    block = legacy_keys_block(found, "prod", adopted)
    assert block["acme"] == {"environment": "prod"}
    steps = _named(preview(state, plan_with(stack, block).resources))
    assert not {name for name, step in steps.items() if step.refused}
    assert INSTANCE_KEY[stack] not in steps["acme-dev-db-orders-instance"].properties
    assert steps["acme-prod-key"].old is not None and steps["acme-prod-key"].kind in ("same", "update")


GCP_RENAMED = {"acme-prod-key", "acme-prod-db-orders-instance", "acme-prod-db-legacy-billing-instance"}


@pytest.mark.parametrize(("stack", "refused"), [("prod-aws", set()), ("prod", GCP_RENAMED)])
def test_after_the_first_up_an_aws_entry_may_go_a_gcp_one_may_not(stack: str, refused: set[str]) -> None:
    """Once the engine has recorded the old key under the environment's name, AWS needs no alias
    any more; GCP still needs the entry for the CryptoKey's old name (a new name is a new key, and
    the instances encrypted with it would follow)."""
    state = _after_first_up_and_move(stack)
    block = legacy_keys_block(legacy_tenants(state, {"acme": "prod"}), "prod", {"acme": "prod"})
    del block["acme"]
    assert _refused(preview(state, plan_with(stack, block).resources)) == refused
