"""What decommissioned tenants leave behind, read from the plan the program renders.

The list cannot drift from what is retained because it is not written anywhere else: the program
is run under mocks (tools/plan/harness.py), and every resource it registers with `retainOnDelete` for a
decommissioned tenant is attributed to one retained item of that tenant's summary (the `retained`
section of the stack outputs: its databases, secrets, key and kept namespaces). A retained resource
that belongs to no item is reported as `unattributed`, never dropped.

The cloud's own names of autonamed resources (Cloud SQL instances, RDS identifiers, KMS keys) exist
only once created; they are read from the same `retained` section of the real stack outputs when
given (`pulumi stack output --json`), else the plan's mock names stand in and are marked so.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tools.plan.harness import ProgramRun, RecordedResource

# Types whose labels or tags carry the cost labels of a retained item, in the order they are read.
_LABEL_PATHS = (("labels",), ("tags",), ("settings", "userLabels"), ("metadata", "labels"))
# The keys of components/model/core/labels.py cost_labels(), in cloud and Kubernetes form alike.
_COST_KEYS = {"managed-by", "tenant", "cost-center", "environment"}


@dataclass
class RetainedItem:
    """One thing to export and then delete: a database, a secret, a key or a namespace."""

    tenant: str
    kind: str  # database | secret | key | namespace | security-group | unattributed
    name: str
    environment: str | None
    # What the outputs say about it (instance, database, username, host, port for databases).
    facts: dict[str, Any] = field(default_factory=dict)
    resources: list[RecordedResource] = field(default_factory=list)

    @property
    def labels(self) -> dict[str, str]:
        """The cost labels its resources carry (cloud labels, tags or Kubernetes labels), merged."""
        merged: dict[str, str] = {}
        for resource in self.resources:
            for path in _LABEL_PATHS:
                value: Any = resource.inputs
                for key in path:
                    value = value.get(key) if isinstance(value, dict) else None
                if isinstance(value, dict):
                    merged.update({k: str(v) for k, v in value.items() if _cost_key(k) and k not in merged})
        return dict(sorted(merged.items()))

    def of_type(self, *suffixes: str) -> list[RecordedResource]:
        """Its resources whose type token ends with one of `suffixes` (`sql/databaseInstance:DatabaseInstance`)."""
        return [r for r in self.resources if r.type.endswith(suffixes)]


@dataclass
class DecommissionedTenant:
    """A decommissioned tenant of the stack, since when, and everything it retains."""

    name: str
    decommissioned_on: datetime.date
    items: list[RetainedItem]

    def retained_days(self, today: datetime.date) -> int:
        return (today - self.decommissioned_on).days


def _cost_key(key: str) -> bool:
    """Cloud cost labels (`cost-center`) and their Kubernetes forms (`tenancy.io/cost-center`)."""
    return key.rpartition("/")[2] in _COST_KEYS


def _slug(name: str) -> str:
    """Resource names use the database's name with `_` as `-` (`legacy_billing` -> `legacy-billing`)."""
    return name.replace("_", "-")


def _items(tenant: str, retained: dict[str, Any]) -> list[tuple[str, RetainedItem]]:
    """The tenant's retained items from its summary, each with the resource-name prefix of its parts."""
    items: list[tuple[str, RetainedItem]] = []
    for env, databases in sorted((retained.get("databases") or {}).items()):
        for name, facts in sorted(databases.items()):
            item = RetainedItem(tenant, "database", name, env, dict(facts))
            items.append((f"{tenant}-{env}-db-{_slug(name)}-", item))
    for env, secrets in sorted((retained.get("secrets") or {}).items()):
        items += [(f"{tenant}-{env}-secret-{name}-", RetainedItem(tenant, "secret", name, env)) for name in secrets]
    # One key per environment (components/clouds/*/data.py `identity`).
    for env, key in sorted((retained.get("keys") or {}).items()):
        items.append((f"{tenant}-{env}-key", RetainedItem(tenant, "key", str(key), env)))
    for namespace in retained.get("namespaces") or []:
        env = namespace.removeprefix(f"tenant-{tenant}-")
        item = RetainedItem(tenant, "namespace", namespace, env)
        # The namespace and the guard rails it keeps while it holds data (components/guardrails/namespace.py
        # `build_kept_namespace`): they go with it.
        items += [(f"{tenant}-{env}-{part}", item) for part in _KEPT_NAMESPACE_PARTS]
    return items


# Resource-name suffixes of a kept namespace and its guard rails (quota, limits, isolation policy).
# In the ClusterNetworkPolicy mode the isolation is cluster-scoped (`-cluster-isolation`, `-cluster-databases`).
_KEPT_NAMESPACE_PARTS = ("namespace", "quota", "limits", "isolation", "cluster-")


# Retained resources that no summary entry names but that data uses, each its own item, listed
# after the data: an environment's database security group (AWS), deletable once its instances are.
_RDS = "rds/instance:Instance"
_USED_BY_DATA = {"aws:ec2/securityGroup:SecurityGroup": "security-group"}


def _environment_of(resource: RecordedResource) -> str | None:
    tags = resource.inputs.get("tags")
    return str(tags["environment"]) if isinstance(tags, dict) and "environment" in tags else None


def _attribute(resource: RecordedResource, items: list[tuple[str, RetainedItem]]) -> RetainedItem | None:
    """The item a resource belongs to: the longest name prefix that matches it."""
    matches = [(prefix, item) for prefix, item in items if resource.name == prefix or resource.name.startswith(prefix)]
    return max(matches, key=lambda match: len(match[0]))[1] if matches else None


def decommissioned_tenants(run: ProgramRun, outputs: dict[str, Any] | None = None) -> list[DecommissionedTenant]:
    """Every decommissioned tenant of the plan with its retained items.

    `outputs` are the real stack outputs; where they hold a tenant's summary, its `retained`
    section (the cloud's names) and `decommissionedOn` replace the plan's.
    """
    planned = run.outputs.get("tenants") or {}
    real = (outputs or {}).get("tenants") or {}
    result: list[DecommissionedTenant] = []
    for name, summary in sorted(planned.items()):
        if summary.get("lifecycle") != "decommissioned":
            continue
        summary = {**summary, **real.get(name, {})}
        items = _items(name, summary.get("retained") or {})
        for resource in run.resources:
            if resource.retain_on_delete and run.tenant_of(resource) == name:
                owner = _attribute(resource, items)
                if owner is None and resource.type in _USED_BY_DATA:
                    owner = RetainedItem(name, _USED_BY_DATA[resource.type], resource.name, _environment_of(resource))
                    items.append((resource.name, owner))
                if owner is None:
                    owner = RetainedItem(name, "unattributed", resource.name, None)
                    items.append((resource.name, owner))
                owner.resources.append(resource)
        for _, item in items:
            if item.kind == "security-group":
                # Its environment's dedicated instances: the group can go only once they are gone.
                item.facts["instances"] = sorted(
                    str(other.facts["instance"])
                    for _, other in items
                    if other.kind == "database" and other.environment == item.environment and other.of_type(_RDS)
                )
        on = datetime.date.fromisoformat(str(summary["decommissionedOn"]))
        result.append(DecommissionedTenant(name, on, _distinct(item for _, item in items)))
    return result


def _distinct(items: Iterable[RetainedItem]) -> list[RetainedItem]:
    """Each item once, in order: a kept namespace is listed under several name prefixes (its parts)."""
    seen: set[int] = set()
    result: list[RetainedItem] = []
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            result.append(item)
    return result
