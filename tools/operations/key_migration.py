"""Carry a stack deployed before per-environment keys over: what it has, what to set, what preview does.

    tenancy key-migration --state prod-state.json --stack prod [--environment prod]

`--state` is `pulumi stack export` of the deployed stack. The tool finds each tenant's old
per-tenant key (`<tenant>-key`) and every dedicated instance still encrypted with it, prints the
`tenancy:data.legacyKeys` block that carries them over (the old key becomes `--environment`'s, the
other environments' instances keep it until moved), then plans the stack with that block and
shows, per tenant, what the engine's first preview would delete, replace and create
(tools/operations/upgrade_preview.py). Exit status 1 while a protected resource would still be deleted or
replaced: that preview would be refused. Run it again after each instance is moved: an instance
no longer on the old key drops out of the block (docs/runbooks/per-environment-keys.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.model.core.errors import ConfigurationError
from tools.operations.upgrade_preview import StateResource, Step, preview, read_state
from tools.plan.harness import ProgramRun, run_stack, stack_config

_KEY_TYPES = {"gcp:kms/cryptoKey:CryptoKey": "id", "aws:kms/key:Key": "arn"}
_INSTANCES = {"gcp:sql/databaseInstance:DatabaseInstance": "encryptionKeyName", "aws:rds/instance:Instance": "kmsKeyId"}
_TENANT_TYPE = "$tenancy:index:Tenant::"
# What the report lists unless asked for everything: what holds data or grants access to it.
_CLOUD_TYPES = ("gcp:", "aws:", "random:")


@dataclass
class LegacyTenant:
    """One tenant's old key and what is still encrypted with it."""

    tenant: str
    key_urn: str
    key: str
    # (environment, database) of dedicated instances on the old key.
    instances: list[tuple[str, str]] = field(default_factory=list)


def tenant_of(resource: StateResource) -> str | None:
    """The tenant a resource belongs to: its parent is the tenant's component."""
    if resource.parent is None or _TENANT_TYPE not in resource.parent:
        return None
    return resource.parent.rsplit("::", 1)[-1]


def _key_value(resource: StateResource) -> str:
    output = _KEY_TYPES[resource.type]
    return resource.id if output == "id" else str(resource.outputs.get(output, ""))


def _instance_of(resource: StateResource, tenant: str) -> tuple[str, str] | None:
    """(environment, database) of a dedicated instance from its labels and its name
    `<tenant>-<environment>-db-<database, _ as ->-instance` (database names have no `-`)."""
    labels = resource.inputs.get("tags") or (resource.inputs.get("settings") or {}).get("userLabels") or {}
    environment = labels.get("environment")
    prefix = f"{tenant}-{environment}-db-"
    if not environment or not resource.name.startswith(prefix) or not resource.name.endswith("-instance"):
        return None
    return str(environment), resource.name[len(prefix) : -len("-instance")].replace("-", "_")


def legacy_tenants(state: list[StateResource], adopted: Mapping[str, str] | None = None) -> dict[str, LegacyTenant]:
    """Tenants of a deployed stack that still have their one old key, with the instances on it.

    Before the first `up` with `legacyKeys` the key is `<tenant>-key`; after it, the engine has
    moved it to the adopting environment's name, which `adopted` (tenant -> environment, the
    stack's current `legacyKeys`) gives, so the tool can be run again at every step."""
    found: dict[str, LegacyTenant] = {}
    for resource in state:
        tenant = tenant_of(resource)
        if tenant is None or resource.type not in _KEY_TYPES:
            continue
        names = {f"{tenant}-key"} | ({f"{tenant}-{adopted[tenant]}-key"} if adopted and tenant in adopted else set())
        if resource.name in names:
            found[tenant] = LegacyTenant(tenant, resource.urn, _key_value(resource))
    for resource in state:
        tenant = tenant_of(resource)
        if tenant not in found or resource.type not in _INSTANCES:
            continue
        if resource.inputs.get(_INSTANCES[resource.type]) == found[tenant].key:
            placed = _instance_of(resource, tenant)
            if placed is not None:
                found[tenant].instances.append(placed)
    return found


def legacy_keys_block(
    found: dict[str, LegacyTenant], environment: str, adopted: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The `tenancy:data.legacyKeys` value that carries these tenants over: each keeps the
    environment it already names (`adopted`), others get `environment`."""
    block: dict[str, Any] = {}
    for tenant, legacy in sorted(found.items()):
        chosen = (adopted or {}).get(tenant, environment)
        pinned = sorted(f"{env}/{db}" for env, db in legacy.instances if env != chosen)
        block[tenant] = {"environment": chosen, **({"databases": pinned} if pinned else {})}
    return block


def configured(stack: str) -> dict[str, str]:
    """Tenant -> adopting environment, from the stack's current `tenancy:data.legacyKeys`."""
    config, _ = stack_config(stack)
    legacy = json.loads(config.get("tenancy:data", "{}")).get("legacyKeys") or {}
    return {tenant: str(entry.get("environment")) for tenant, entry in legacy.items() if isinstance(entry, dict)}


def plan_with(stack: str, block: dict[str, Any], tenants_dir: str | None = None) -> ProgramRun:
    """The stack's plan with `legacyKeys` set to `block` (the rest of `tenancy:data` as it is)."""
    config, _ = stack_config(stack)
    data = json.loads(config.get("tenancy:data", "{}"))
    data["legacyKeys"] = block
    overrides = {"tenancy:data": json.dumps(data)}
    if tenants_dir is not None:
        overrides["tenancy:tenantsDir"] = tenants_dir
    return run_stack(stack, overrides)


def report(steps: list[Step], run: ProgramRun, state: list[StateResource], everything: bool = False) -> str:
    """Per tenant, the steps other than `same` of cloud resources (of every resource with
    `everything`); refusals always shown."""
    owners = {item.urn: tenant_of(item) for item in state}
    by_tenant: dict[str, list[Step]] = defaultdict(list)
    for step in steps:
        if step.kind == "same" or not (everything or step.refused or step.type.startswith(_CLOUD_TYPES)):
            continue
        recorded = run.by_urn().get(step.urn)
        tenant = run.tenant_of(recorded) if recorded is not None else owners.get(step.urn)
        by_tenant[tenant or "(cluster-wide)"].append(step)
    lines: list[str] = []
    for tenant, items in sorted(by_tenant.items()):
        lines.append(f"{tenant}:")
        for step in sorted(items, key=lambda s: (s.kind, s.urn)):
            mark = "  REFUSED (protected)" if step.refused else ""
            detail = f" [{', '.join(step.properties)}]" if step.properties else ""
            lines.append(f"  {step.kind:8} {step.urn.rsplit('::', 1)[-1]} ({step.type}){detail}{mark}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy key-migration", description=__doc__.split("\n")[0])
    parser.add_argument("--state", required=True, type=Path, help="`pulumi stack export` of the deployed stack")
    parser.add_argument("--stack", required=True, help="stack name; reads Pulumi.<stack>.yaml")
    parser.add_argument("--environment", default="prod", help="the environment that takes each old key over")
    parser.add_argument("--tenants-dir", help="tenant files to use instead of tenants/")
    parser.add_argument("--all", action="store_true", help="list the steps of every resource, not only cloud ones")
    args = parser.parse_args(argv)
    state = read_state(args.state)
    adopted = configured(args.stack)
    found = legacy_tenants(state, adopted)
    block = legacy_keys_block(found, args.environment, adopted)
    print(f"# tenancy:data.legacyKeys for Pulumi.{args.stack}.yaml")
    print(yaml.safe_dump({"legacyKeys": block}, sort_keys=True).rstrip())
    try:
        run = plan_with(args.stack, block, args.tenants_dir)
    except ConfigurationError as error:
        # A tenant without that environment, say: the block needs editing before it is used.
        print(f"\nthe stack refuses this block; edit it and run again:\n{error}", file=sys.stderr)
        return 2
    steps = preview(state, run.resources)
    print("\n# first preview with it (same left out)")
    print(report(steps, run, state, everything=args.all))
    refused = [step for step in steps if step.refused]
    instances = sum(len(legacy.instances) for legacy in found.values())
    print(
        f"\n{len(found)} tenants on an old key, {instances} instances on it; "
        f"{len(refused)} protected resources the preview would refuse to delete or replace"
    )
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
