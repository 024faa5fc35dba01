"""Offboarding: what decommissioned tenants still hold, for how long, and how to remove it.

    tenancy offboard --stack prod [--tenant acme] [--outputs outputs.json] [--json] [--plaintext-secrets]

Lists, per decommissioned tenant of the stack, every retained resource (databases with their
credentials, secrets, keys, namespaces kept for data) with its cost labels and how long it has been
retained since the tenant file's `decommissionedOn`, then the commands that export each one and,
once the stack's retention period (`tenancy:data.retentionDays`) has passed, the commands that
delete it. Before then the delete commands are withheld.

The list comes from the plan the program renders (tools/operations/retained.py), so it is exactly what the
program retains. Cloud names of autonamed resources (Cloud SQL instances, RDS identifiers, KMS
keys) exist only in the real stack: pass `--outputs` with `pulumi stack output --json` for them;
without it the plan's mock names stand in, and the listing says so. Exit code 1 when a retained
resource belongs to no known item (nothing is dropped silently), 2 on invalid configuration and
on a `--tenant` the stack does not have or that is not decommissioned (each refused in its own words).
Exports of secret values are encrypted to `$EXPORT_RECIPIENT` (gpg) unless `--plaintext-secrets`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.settings.stack import StackSettings
from tools.operations.offboard_commands import commands_for
from tools.operations.retained import DecommissionedTenant, RetainedItem, decommissioned_tenants
from tools.plan.harness import PROJECT_ROOT, run_stack, stack_config

_VARIABLES = {
    "gcp": "Set EXPORT_BUCKET (a gs:// bucket the Cloud SQL service account may write) for database exports.",
    "aws": "Set ADMIN_USER (the shared instance's admin user) for exports from shared instances.",
    "local": "Exports run through kubectl exec in the database pods.",
}
SECRETS_ENCRYPTED = (
    "Set EXPORT_RECIPIENT (a gpg key id) for exports of secret values: they are written encrypted "
    "(--plaintext-secrets writes them in plaintext files instead)."
)
SECRETS_PLAINTEXT = (
    "--plaintext-secrets: exports of secret values are written in PLAINTEXT files; delete them after use."
)


class TenantRefusedError(ValueError):
    """`--tenant` names a tenant the stack lacks, or one that is not decommissioned."""


def check_tenant(only: str, tenants: dict[str, Any], stack: str) -> None:
    """Refuse, each in its own words, a tenant the stack does not have and an active or suspended one."""
    if only not in tenants:
        known = ", ".join(sorted(tenants)) or "none"
        raise TenantRefusedError(f"tenant {only!r} is not in stack {stack} (its tenants: {known})")
    lifecycle = tenants[only].get("lifecycle", "active")
    if lifecycle != "decommissioned":
        raise TenantRefusedError(
            f"tenant {only!r} is {lifecycle}, not decommissioned: nothing of it is retained for offboarding. "
            f"Set `lifecycle: decommissioned` and `decommissionedOn` in its file and deploy first "
            "(docs/operations.md, Offboarding)"
        )


def item_report(
    item: RetainedItem, settings: StackSettings, deletable: bool, plaintext_secrets: bool = False
) -> dict[str, Any]:
    """One retained item as the listing shows it; `delete` is None while retention runs."""
    commands = commands_for(item, settings, plaintext_secrets)
    return {
        "kind": item.kind,
        "name": item.name,
        "environment": item.environment,
        "labels": item.labels,
        "resources": [{"type": r.type, "name": r.name} for r in item.resources],
        "export": commands.export,
        "delete": commands.delete if deletable else None,
    }


def tenant_report(
    tenant: DecommissionedTenant, settings: StackSettings, today: datetime.date, plaintext_secrets: bool = False
) -> dict[str, Any]:
    """A tenant's retention window and items; deletes only once `retentionDays` have passed."""
    deletable_on = tenant.decommissioned_on + datetime.timedelta(days=settings.data.retention_days)
    deletable = today >= deletable_on
    return {
        "name": tenant.name,
        "decommissionedOn": tenant.decommissioned_on.isoformat(),
        "retainedDays": tenant.retained_days(today),
        "deletableOn": deletable_on.isoformat(),
        "deletable": deletable,
        "items": [item_report(item, settings, deletable, plaintext_secrets) for item in tenant.items],
    }


def render_text(report: dict[str, Any]) -> str:
    """The listing for people: per tenant, per item, labels, resources, export then delete."""
    lines = [
        f"stack {report['stack']}: data of decommissioned tenants is retained {report['retentionDays']} days "
        "(tenancy:data.retentionDays)",
        _VARIABLES[report["cloud"]],
        SECRETS_PLAINTEXT if report.get("plaintextSecrets") else SECRETS_ENCRYPTED,
        "Run every export first; delete in the order listed (data, then the key that encrypts it, then "
        "namespaces and the security groups the databases used).",
    ]
    if report["namesFrom"] == "plan":
        lines.append("Names of autonamed cloud resources are the plan's; pass --outputs for the cloud's.")
    if not report["tenants"]:
        lines.append("No decommissioned tenants.")
    for tenant in report["tenants"]:
        lines.append(
            f"\ntenant {tenant['name']}: decommissioned on {tenant['decommissionedOn']}, "
            f"retained {tenant['retainedDays']} days, deletable from {tenant['deletableOn']}"
        )
        for item in tenant["items"]:
            where = f"{item['environment']}/" if item["environment"] else ""
            labels = ", ".join(f"{k}={v}" for k, v in item["labels"].items()) or "none"
            lines += [f"  {item['kind']} {where}{item['name']}", f"    cost labels: {labels}"]
            lines += [f"    retains {r['type']} {r['name']}" for r in item["resources"]]
            lines += ["    export:", *(f"      {c}" for c in item["export"] or ["(nothing to export)"])]
            if item["delete"] is None:
                lines.append(f"    delete: withheld until {tenant['deletableOn']} (retention period)")
            else:
                lines += ["    delete (after the export):", *(f"      {c}" for c in item["delete"])]
    return "\n".join(lines)


def build_report(
    stack: str,
    overrides: dict[str, str],
    outputs: dict[str, Any] | None,
    today: datetime.date,
    only: str | None,
    plaintext_secrets: bool = False,
) -> dict[str, Any]:
    """Plan the stack, attribute what it retains, and decide what may be deleted today."""
    settings = parse_settings(stack_config(stack, overrides)[0], f"Pulumi.{stack}.yaml")
    run = run_stack(stack, overrides)
    if only is not None:
        check_tenant(only, run.outputs.get("tenants") or {}, stack)
    tenants = [t for t in decommissioned_tenants(run, outputs) if only is None or t.name == only]
    return {
        "stack": stack,
        "cloud": settings.cloud,
        "retentionDays": settings.data.retention_days,
        "today": today.isoformat(),
        "namesFrom": "outputs" if outputs is not None else "plan",
        "plaintextSecrets": plaintext_secrets,
        "tenants": [tenant_report(t, settings, today, plaintext_secrets) for t in tenants],
    }


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(prog="tenancy offboard", description=__doc__.split("\n\n")[0])
    result.add_argument("--stack", required=True, help="stack name; reads Pulumi.<stack>.yaml")
    result.add_argument("--tenant", help="only this tenant")
    result.add_argument("--outputs", type=Path, help="`pulumi stack output --json` of the stack, for cloud names")
    result.add_argument("--tenants-dir", type=Path, help="tenant files to use instead of tenants/")
    result.add_argument("--today", type=datetime.date.fromisoformat, help="YYYY-MM-DD instead of today's date")
    result.add_argument("--json", action="store_true", help="print JSON instead of text")
    result.add_argument(
        "--plaintext-secrets",
        action="store_true",
        help="export secret values to plaintext files (default: encrypted with gpg to $EXPORT_RECIPIENT)",
    )
    return result


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    overrides = {"tenancy:tenantsDir": str(args.tenants_dir.resolve())} if args.tenants_dir else {}
    outputs = json.loads(args.outputs.read_text(encoding="utf-8")) if args.outputs else None
    today = args.today or datetime.datetime.now(datetime.UTC).date()
    try:
        report = build_report(args.stack, overrides, outputs, today, args.tenant, args.plaintext_secrets)
    except (ConfigurationError, FileNotFoundError, TenantRefusedError) as error:
        print(str(error), file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else render_text(report))
    unattributed = [i for t in report["tenants"] for i in t["items"] if i["kind"] == "unattributed"]
    for item in unattributed:
        print(f"retained resource {item['name']} belongs to no known item: remove it by hand", file=sys.stderr)
    return 1 if unattributed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(PROJECT_ROOT))
    raise SystemExit(main())
