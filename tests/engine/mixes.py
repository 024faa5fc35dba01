"""Tenant mixes that reach every placement and lifecycle state, per example stack.

Each mix is the example tenants (tenants/) all set to one lifecycle state, plus one tenant with
every database `placement: shared` the stack's cloud serves, so the engine invariants
(tests/engine/test_invariants.py) see dedicated and shared databases, soft and virtual-cluster
tenants, and the cluster-wide parts, in each state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from components.model.tenant_file.spec import Lifecycle
from tests.support import DECOMMISSIONED_ON, EXAMPLE_TENANTS, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, stack_config

STACKS = ("dev", "prod", "prod-aws")
LIFECYCLES: tuple[Lifecycle, ...] = ("active", "suspended", "decommissioned")
# The shared instances each stack's settings name (Pulumi.<stack>.yaml), plus on dev a local
# MariaDB one (the kind stack names none): the shared tenant's databases use exactly these.
LOCAL_SHARED_INSTANCES = {"maria": {"engine": "mysql", "version": "8.0", "storageGb": 40}}
SHARED_DATABASES: dict[str, list[dict[str, Any]]] = {
    "dev": [{"name": "billing", "engine": "mysql", "version": "8.0", "placement": "shared"}],
    "prod": [{"name": "orders", "engine": "postgres", "version": "16", "placement": "shared"}],
    "prod-aws": [
        {"name": "orders", "engine": "postgres", "version": "16", "placement": "shared"},
        {"name": "billing", "engine": "mysql", "version": "8.4", "placement": "shared", "environments": ["prod"]},
    ],
}


def _with_lifecycle(document: dict[str, Any], lifecycle: Lifecycle) -> dict[str, Any]:
    changed = {**document, "lifecycle": lifecycle}
    if lifecycle == "decommissioned":
        changed.setdefault("decommissionedOn", DECOMMISSIONED_ON)
    else:
        changed.pop("decommissionedOn", None)
    return changed


def mix_documents(stack: str, lifecycle: Lifecycle) -> list[dict[str, Any]]:
    """The example tenants and a shared-placement tenant, all in `lifecycle`."""
    examples = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted(EXAMPLE_TENANTS.glob("*.yaml"))]
    shared = tenant_document("sharedco", environments=["dev", "prod"], databases=SHARED_DATABASES[stack])
    return [_with_lifecycle(document, lifecycle) for document in [*examples, shared]]


def _data_override(stack: str) -> dict[str, str]:
    if stack != "dev":
        return {}
    config, _ = stack_config(stack)
    data = json.loads(config["tenancy:data"])
    data["sharedInstances"] = LOCAL_SHARED_INSTANCES
    return {"data": json.dumps(data)}


def plan_mix(stack: str, lifecycle: Lifecycle, directory: Path) -> ProgramRun:
    """Plan the mix of `stack` in `lifecycle` from tenant files written under `directory`."""
    tenants = write_tenants(directory, *mix_documents(stack, lifecycle))
    return plan(stack, tenants, **_data_override(stack))


def records(run: ProgramRun) -> list[dict[str, Any]]:
    """The run's resources as `resources.json` holds them (tools/plan/run.py), tenant included."""
    tenants = run.tenants()
    return [{**resource.as_json(), "tenant": tenants[resource.urn]} for resource in run.resources]


def disabled_providers(stack: str) -> list[str]:
    """`pulumi:disable-default-providers` of Pulumi.<stack>.yaml."""
    from tools.plan.engine_rules import disabled_default_providers

    return disabled_default_providers(stack_config(stack)[0])
