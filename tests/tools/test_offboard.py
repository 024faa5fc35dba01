"""tenancy offboard: every retained resource of a decommissioned tenant, from the plan itself.

Each example stack is planned with acme decommissioned (dedicated databases, secrets, key, local
namespaces) and a second tenant, shop, whose databases live on shared instances.
"""

from __future__ import annotations

import copy
import datetime
import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.catalog.stack_config import parse_settings
from components.model.settings.stack import StackSettings
from tests.support import DECOMMISSIONED_ON, EXAMPLE_TENANTS, tenant_document, write_tenants
from tools.operations import offboard
from tools.operations.offboard_commands import commands_for
from tools.operations.retained import decommissioned_tenants
from tools.plan.harness import ProgramRun, run_stack, stack_config

SHARED = {
    "dev": [{"name": "ledger", "engine": "mysql", "version": "8.0", "placement": "shared"}],
    "prod": [{"name": "ledger", "engine": "postgres", "version": "16", "placement": "shared"}],
    "prod-aws": [
        {"name": "ledger", "engine": "postgres", "version": "16", "placement": "shared"},
        {"name": "archive", "engine": "mysql", "version": "8.4", "placement": "shared", "environments": ["prod"]},
    ],
}
LOCAL_SHARED = {"sharedInstances": {"maria": {"engine": "mysql", "version": "8.0"}}}
DECOMMISSIONED = datetime.date.fromisoformat(DECOMMISSIONED_ON)


def tenants_dir(directory: Path, stack: str) -> Path:
    """The example tenants with acme decommissioned, plus shop (shared databases) decommissioned."""
    shutil.copytree(EXAMPLE_TENANTS, directory)
    acme = yaml.safe_load((directory / "acme.yaml").read_text(encoding="utf-8"))
    acme.update(lifecycle="decommissioned", decommissionedOn=DECOMMISSIONED_ON)
    (directory / "acme.yaml").write_text(yaml.safe_dump(acme), encoding="utf-8")
    shop = tenant_document("shop", lifecycle="decommissioned", databases=SHARED[stack])
    return write_tenants(directory, shop)


def overrides(stack: str, directory: Path) -> dict[str, str]:
    values = {"tenancy:tenantsDir": str(directory)}
    if stack == "dev":
        # The stack's own data settings (shared secrets) plus a shared MariaDB.
        values["tenancy:data"] = json.dumps({**json.loads(stack_config(stack)[0]["tenancy:data"]), **LOCAL_SHARED})
    return values


@pytest.fixture(scope="module", params=["dev", "prod", "prod-aws"])
def planned(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ProgramRun, StackSettings, dict[str, str]]:
    stack = request.param
    values = overrides(stack, tenants_dir(tmp_path_factory.mktemp(stack) / "tenants", stack))
    settings = parse_settings(stack_config(stack, values)[0], f"Pulumi.{stack}.yaml")
    return run_stack(stack, values), settings, values


def test_every_retained_resource_belongs_to_exactly_one_item(
    planned: tuple[ProgramRun, StackSettings, dict[str, str]],
) -> None:
    run, settings, _ = planned
    tenants = decommissioned_tenants(run)
    assert [t.name for t in tenants] == ["acme", "shop"]
    retained = {r.urn for r in run.resources if r.retain_on_delete and run.tenant_of(r) in {"acme", "shop"}}
    listed = [r.urn for t in tenants for item in t.items for r in item.resources]
    assert retained and sorted(listed) == sorted(retained)
    for tenant in tenants:
        assert {item.kind for item in tenant.items} <= {"database", "secret", "key", "namespace", "security-group"}
        for item in tenant.items:
            assert item.resources, item
            assert item.labels.get("tenancy.io/tenant", item.labels.get("tenant")) == tenant.name
            commands = commands_for(item, settings)
            assert commands.delete, item
            assert commands.export or item.kind in ("key", "security-group"), item
            for command in commands.export + commands.delete:
                shlex.split(command)  # balanced quoting: each line runs as printed


def test_the_lists_name_what_the_cloud_holds(planned: tuple[ProgramRun, StackSettings, dict[str, str]]) -> None:
    run, settings, _ = planned
    (acme, shop) = decommissioned_tenants(run)
    commands = {
        (item.kind, item.environment, item.name): commands_for(item, settings) for item in acme.items + shop.items
    }
    orders = commands[("database", "prod", "orders")]
    ledger = commands[("database", "prod", "ledger")]
    expected = {
        "dev": ("delete clusters.postgresql.cnpg.io pg-orders", "DROP DATABASE `shop-prod-ledger`"),
        "prod": (
            "gcloud sql instances delete acme-prod-db-orders-instance-mock",
            "gcloud sql databases delete shop-prod-ledger",
        ),
        "prod-aws": (
            "aws rds delete-db-instance --db-instance-identifier acme-prod-db-orders-instance",
            "DROP DATABASE",
        ),
    }[run.stack]
    assert any(expected[0] in line for line in orders.delete), orders.delete
    assert any(expected[1] in line for line in ledger.delete), ledger.delete


def test_an_aws_environments_database_group_goes_last_once_its_instances_are_deleted(
    planned: tuple[ProgramRun, StackSettings, dict[str, str]],
) -> None:
    run, settings, _ = planned
    (acme, _) = decommissioned_tenants(run)
    groups = [item for item in acme.items if item.kind == "security-group"]
    if run.stack != "prod-aws":
        assert groups == []
        return
    assert [(g.environment, g.name) for g in groups] == [("dev", "acme-dev-databases"), ("prod", "acme-prod-databases")]
    assert acme.items[-len(groups) :] == groups
    delete = commands_for(groups[1], settings).delete
    assert delete[:2] == [
        "aws rds wait db-instance-deleted --db-instance-identifier acme-prod-db-legacy-billing-instance",
        "aws rds wait db-instance-deleted --db-instance-identifier acme-prod-db-orders-instance",
    ]
    assert "Name=group-name,Values=acme-prod-databases-*" in delete[2]
    assert "Name=tag:tenant,Values=acme" in delete[2] and "Name=tag:environment,Values=prod" in delete[2]
    assert delete[2].endswith("| xargs -r -n1 aws ec2 delete-security-group --group-id")


def test_a_decommissioned_aws_tenants_key_aliases_are_kept_and_deleted_with_its_keys(
    planned: tuple[ProgramRun, StackSettings, dict[str, str]],
) -> None:
    """Issue 44, 12: docs/operations.md and released_names.py say a decommissioned tenant keeps its
    key aliases (`alias/tenancy/<name>/<env>`); before, the alias left the program with the identity
    and was deleted. Kept (retained) with the key, it goes with it when the offboarding deletes it."""
    run, settings, _ = planned
    if run.stack != "prod-aws":
        return
    (acme, _) = decommissioned_tenants(run)
    aliases = [r for r in run.of_type("aws:kms/alias:Alias") if run.tenant_of(r) == "acme"]
    assert sorted(r.inputs["name"] for r in aliases) == ["alias/tenancy/acme/dev", "alias/tenancy/acme/prod"]
    assert all(r.retain_on_delete for r in aliases)
    keys = {item.environment: item for item in acme.items if item.kind == "key"}
    delete = commands_for(keys["prod"], settings).delete
    assert delete[0] == "aws kms delete-alias --alias-name alias/tenancy/acme/prod"
    assert delete[1].startswith("aws kms schedule-key-deletion")


def _report(values: dict[str, str], stack: str, today: datetime.date, outputs: Any = None) -> dict[str, Any]:
    return offboard.build_report(stack, values, outputs, today, None)


def test_delete_commands_are_withheld_until_the_retention_period_has_passed(
    planned: tuple[ProgramRun, StackSettings, dict[str, str]],
) -> None:
    run, settings, values = planned
    deletable_on = DECOMMISSIONED + datetime.timedelta(days=settings.data.retention_days)
    early = _report(values, run.stack, deletable_on - datetime.timedelta(days=1))
    (acme, _) = early["tenants"]
    assert acme["deletable"] is False and acme["retainedDays"] == settings.data.retention_days - 1
    assert all(item["delete"] is None for t in early["tenants"] for item in t["items"])
    assert "withheld until" in offboard.render_text(early) and "delete (after" not in offboard.render_text(early)
    due = _report(values, run.stack, deletable_on)
    assert all(item["delete"] for t in due["tenants"] for item in t["items"])
    assert due["tenants"][0]["deletableOn"] == deletable_on.isoformat()


def test_the_stacks_outputs_give_the_clouds_names(planned: tuple[ProgramRun, StackSettings, dict[str, str]]) -> None:
    run, _, values = planned
    real = json.loads(json.dumps(run.outputs))
    database = real["tenants"]["acme"]["retained"]["databases"]["prod"]["orders"]
    database["instance"] = str(database["instance"]).replace("-mock", "") + "-4f2a9c1"
    report = _report(values, run.stack, DECOMMISSIONED + datetime.timedelta(days=400), real)
    assert report["namesFrom"] == "outputs"
    (orders,) = [i for i in report["tenants"][0]["items"] if (i["environment"], i["name"]) == ("prod", "orders")]
    assert any("4f2a9c1" in line for line in orders["export"] + orders["delete"])


def test_active_tenants_are_not_listed_and_the_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        offboard.main(["--help"])
    assert exit_info.value.code == 0
    assert "--outputs" in capsys.readouterr().out
    assert offboard.main(["--stack", "dev", "--today", "2026-02-01"]) == 0
    assert "No decommissioned tenants." in capsys.readouterr().out


def test_a_decommissioned_tenant_without_a_date_is_refused_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = tenant_document("gone", lifecycle="decommissioned")
    del document["decommissionedOn"]
    directory = write_tenants(tmp_path / "tenants", document)
    assert offboard.main(["--stack", "dev", "--tenants-dir", str(directory)]) == 2
    assert "gone.yaml: decommissionedOn: required with lifecycle: decommissioned" in capsys.readouterr().err


def test_the_tenant_summary_says_the_state_and_what_is_retained(
    planned: tuple[ProgramRun, StackSettings, dict[str, str]], dev_plan: ProgramRun
) -> None:
    run, _, _ = planned
    acme = run.outputs["tenants"]["acme"]
    assert (acme["lifecycle"], acme["decommissionedOn"]) == ("decommissioned", DECOMMISSIONED_ON)
    retained = acme["retained"]
    assert set(retained["databases"]) == {"dev", "prod"} and set(retained["secrets"]["prod"]) == {
        "session-key",
        "payment-api-key",
    }
    # A cloud keeps a key per tenant environment; a local cluster keeps the namespaces that hold the data.
    assert ("keys" in retained) is (run.stack != "dev")
    assert retained.get("namespaces", []) == (["tenant-acme-dev", "tenant-acme-prod"] if run.stack == "dev" else [])
    active = dev_plan.outputs["tenants"]["acme"]
    assert (active["lifecycle"], active["retained"]) == ("active", {}) and "decommissionedOn" not in active


def test_a_retained_resource_no_item_explains_is_reported_not_dropped(
    planned: tuple[ProgramRun, StackSettings, dict[str, str]],
) -> None:
    run, _, _ = planned
    stray_run = copy.deepcopy(run)
    (tenant,) = [r for r in stray_run.resources if r.type == "tenancy:index:Tenant" and r.name == "acme"]
    # Not a security group: those make an item of their own (test above).
    stray = copy.deepcopy(
        next(
            r
            for r in stray_run.resources
            if r.retain_on_delete and r.parent == tenant.urn and not r.type.startswith("aws:ec2/securityGroup")
        )
    )
    stray.urn, stray.name = stray.urn.rsplit("::", 1)[0] + "::acme-stray", "acme-stray"
    stray_run.resources.append(stray)
    items = decommissioned_tenants(stray_run)[0].items
    assert [(i.kind, i.name) for i in items if i.resources == [stray]] == [("unattributed", "acme-stray")]


def test_an_unknown_and_an_active_tenant_are_refused_each_in_its_own_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert offboard.main(["--stack", "dev", "--tenant", "nobody"]) == 2
    unknown = capsys.readouterr()
    assert "tenant 'nobody' is not in stack dev (its tenants: " in unknown.err and "acme" in unknown.err
    assert "No decommissioned tenants" not in unknown.out + unknown.err
    assert offboard.main(["--stack", "dev", "--tenant", "acme"]) == 2
    active = capsys.readouterr()
    assert "tenant 'acme' is active, not decommissioned" in active.err and "lifecycle: decommissioned" in active.err
    assert "No decommissioned tenants" not in active.out + active.err


def _secret_exports(commands: list[str]) -> list[str]:
    """Exports that carry secret values: a secret's value, a Secret object, a namespace's objects."""
    return [
        c
        for c in commands
        if "secrets versions access" in c
        or "get-secret-value" in c
        or "get all,configmaps,secrets" in c
        or " get secrets " in c
    ]


def test_secret_values_are_exported_encrypted_unless_plaintext_is_asked_for(
    planned: tuple[ProgramRun, StackSettings, dict[str, str]],
) -> None:
    run, settings, _ = planned
    items = [item for tenant in decommissioned_tenants(run) for item in tenant.items]
    default = _secret_exports([c for item in items for c in commands_for(item, settings).export])
    assert default, "the example tenants retain secrets"
    for command in default:
        assert '| gpg --encrypt --recipient "$EXPORT_RECIPIENT" --output ' in command and ">" not in command, command
    explicit = _secret_exports([c for item in items for c in commands_for(item, settings, True).export])
    assert len(explicit) == len(default) and all("gpg" not in c and " > " in c for c in explicit), explicit
