"""The inputs of a resource that set what it costs, as one short line of the plan diff.

A reviewer approving a new database or node pool should see its size without opening
resources.json: Cloud SQL edition and tier, RDS instance class and storage, machine types and node
counts, storage sizes, Karpenter limits. Field names are the providers' (the `gcp` and `aws`
Pulumi packages, as resources.json records them) and the operators' CRDs (CNPG `Cluster`,
mariadb-operator `MariaDB`, Karpenter `NodePool`); an absent field is left out, so a provider
default never reads as a choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Getter = str | Callable[[dict[str, Any]], Any]


def _requirement(key: str) -> Callable[[dict[str, Any]], Any]:
    """The values a Karpenter NodePool's `In` requirement on `key` allows (instance families, capacity types)."""

    def read(inputs: dict[str, Any]) -> Any:
        template = ((inputs.get("spec") or {}).get("template") or {}).get("spec") or {}
        for requirement in template.get("requirements") or []:
            if isinstance(requirement, dict) and requirement.get("key") == key and requirement.get("operator") == "In":
                return requirement.get("values")
        return None

    return read


# Resource type -> (label, dotted input path or reader), in the order they are shown.
COST_INPUTS: Mapping[str, tuple[tuple[str, Getter], ...]] = {
    "gcp:sql/databaseInstance:DatabaseInstance": (
        ("edition", "settings.edition"),
        ("tier", "settings.tier"),
        ("availability", "settings.availabilityType"),
        ("disk GB", "settings.diskSize"),
    ),
    "aws:rds/instance:Instance": (
        ("class", "instanceClass"),
        ("storage GB", "allocatedStorage"),
        ("max storage GB", "maxAllocatedStorage"),
        ("storage type", "storageType"),
        ("multi-AZ", "multiAz"),
    ),
    "gcp:container/nodePool:NodePool": (
        ("machine", "nodeConfig.machineType"),
        ("spot", "nodeConfig.spot"),
        ("disk GB", "nodeConfig.diskSizeGb"),
        ("nodes", "nodeCount"),
        ("min nodes", "autoscaling.totalMinNodeCount"),
        ("max nodes", "autoscaling.totalMaxNodeCount"),
        ("min nodes per zone", "autoscaling.minNodeCount"),
        ("max nodes per zone", "autoscaling.maxNodeCount"),
    ),
    "aws:eks/nodeGroup:NodeGroup": (
        ("instance types", "instanceTypes"),
        ("capacity", "capacityType"),
        ("desired nodes", "scalingConfig.desiredSize"),
        ("min nodes", "scalingConfig.minSize"),
        ("max nodes", "scalingConfig.maxSize"),
        ("disk GB", "diskSize"),
    ),
    "kubernetes:karpenter.sh/v1:NodePool": (
        ("cpu limit", "spec.limits.cpu"),
        ("memory limit", "spec.limits.memory"),
        ("instance families", _requirement("karpenter.k8s.aws/instance-family")),
        ("capacity", _requirement("karpenter.sh/capacity-type")),
    ),
    "kubernetes:core/v1:PersistentVolumeClaim": (
        ("storage", "spec.resources.requests.storage"),
        ("class", "spec.storageClassName"),
    ),
    "kubernetes:postgresql.cnpg.io/v1:Cluster": (
        ("instances", "spec.instances"),
        ("storage", "spec.storage.size"),
        ("WAL storage", "spec.walStorage.size"),
    ),
    "kubernetes:k8s.mariadb.com/v1alpha1:MariaDB": (
        ("replicas", "spec.replicas"),
        ("storage", "spec.storage.size"),
    ),
}


def _read(inputs: dict[str, Any], getter: Getter) -> Any:
    if callable(getter):
        return getter(inputs)
    value: Any = inputs
    for part in getter.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def cost_inputs(record: dict[str, Any]) -> dict[str, Any]:
    """The cost-relevant inputs of one resources.json record, by label (empty for other types)."""
    inputs = record.get("inputs") or {}
    found = {label: _read(inputs, getter) for label, getter in COST_INPUTS.get(record.get("type", ""), ())}
    return {label: value for label, value in found.items() if value is not None}


def cost_line(record: dict[str, Any], base: dict[str, Any] | None = None) -> str | None:
    """`edition ENTERPRISE, tier db-custom-2-7680 → db-custom-4-15360`, or None for a type without any.

    With `base` (the record before a change) a changed value shows as old → new."""
    now = cost_inputs(record)
    before = cost_inputs(base) if base is not None else now
    labels = [label for label, _ in COST_INPUTS.get(record.get("type", ""), ()) if label in now or label in before]
    if not labels:
        return None
    parts = []
    for label in labels:
        old, new = before.get(label), now.get(label)
        if old == new:
            parts.append(f"{label} `{_text(new)}`")
        else:
            old_text = f"`{_text(old)}`" if old is not None else "_(none)_"
            new_text = f"`{_text(new)}`" if new is not None else "_(none)_"
            parts.append(f"{label} {old_text} → {new_text}")
    return ", ".join(parts)
