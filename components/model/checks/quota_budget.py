"""Quotas that hold (issue 13, hole 11): an object count for every kind a tenant may create, and one
budget per tenant split over its environments.

A quota tier (or a tenant's custom quota) is the tenant's total in a stack, not an amount per
namespace: two environments at the full tier each would be twice what the tier promises. The split
rule: each environment of the tenant gets `weight / sum of the weights of the tenant's environments`
of every amount, with the weights from `tenancy:quotaSplit` (default 1 each: equal shares).
Amounts are rounded down (millicores, mebibytes, whole objects), so the environments' quotas never
add up to more than the tier. A tenant with one environment gets the whole tier.

Any amount a quota leaves out would be unbounded, so a custom quota or a stack-defined tier is
completed from the stack's default tier and then from the platform caps below before it is split.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from components.model.core.fields import QuotaSpec, quantity_value
from components.model.settings.quota_objects import SMALL_OBJECT_COUNTS
from components.model.tenant_file.isolation import (
    CHART_CONTROL_PLANE_EPHEMERAL_STORAGE,
    CHART_COREDNS_RESOURCES,
    CHART_DISTRO_INIT_RESOURCES,
)
from components.model.tenant_file.spec import TenantSpec

if TYPE_CHECKING:
    from components.model.settings.stack import LimitDefaults
    from components.model.tenant_file.isolation import VirtualClusterSettings

# The last resort for amounts neither the quota nor the stack's default tier sets.
PLATFORM_CAPS: dict[str, str] = {
    "requests.ephemeral-storage": "10Gi",
    "limits.ephemeral-storage": "20Gi",
    **{key: str(count) for key, count in SMALL_OBJECT_COUNTS.items()},
}

_MI = 1024 * 1024


def completed(hard: Mapping[str, str], *fallbacks: Mapping[str, str]) -> dict[str, str]:
    """`hard` with every key it lacks taken from the first fallback that has it."""
    result = dict(hard)
    for fallback in fallbacks:
        for key, value in fallback.items():
            result.setdefault(key, value)
    return result


def environment_share(environment: str, environments: list[str], weights: Mapping[str, int]) -> Fraction:
    """The fraction of the tenant's budget one of its environments gets (weights default to 1)."""
    total = sum(weights.get(e, 1) for e in environments)
    return Fraction(weights.get(environment, 1), total)


def _scaled_quantity(key: str, value: str, share: Fraction) -> str:
    scaled = quantity_value(value) * Decimal(share.numerator) / Decimal(share.denominator)
    if key.endswith(".cpu"):
        millicores = math.floor(scaled * 1000)
        return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"
    mebibytes = math.floor(scaled / _MI)
    return f"{mebibytes // 1024}Gi" if mebibytes % 1024 == 0 else f"{mebibytes}Mi"


def split_hard(hard: Mapping[str, str], share: Fraction) -> dict[str, str]:
    """One environment's share of a tenant's quota, rounded down so the shares never exceed it."""
    if share == 1:
        return dict(hard)
    split: dict[str, str] = {}
    for key, value in hard.items():
        if key.startswith(("requests.", "limits.")):
            split[key] = _scaled_quantity(key, value, share)
        else:
            split[key] = str(math.floor(int(value) * share))
    return split


def resolve_quota(spec: TenantSpec, *, quota_tiers: Mapping[str, QuotaSpec], default_tier: str) -> QuotaSpec:
    """The tenant's quota: its explicit amounts, its tier, or the stack's default tier."""
    if spec.quota is not None and spec.quota.custom is not None:
        return spec.quota.custom
    tier = spec.quota.tier if spec.quota is not None and spec.quota.tier is not None else default_tier
    return quota_tiers[tier]


def tenant_total(spec: TenantSpec, *, quota_tiers: Mapping[str, QuotaSpec], default_tier: str) -> dict[str, str]:
    """The tenant's whole budget, completed from the default tier and the platform caps."""
    return completed(
        resolve_quota(spec, quota_tiers=quota_tiers, default_tier=default_tier).hard(),
        quota_tiers[default_tier].hard(),
        PLATFORM_CAPS,
    )


def emptied_by_split(total: Mapping[str, str], share: Fraction) -> list[str]:
    """The amounts that are above zero in `total` but round down to zero in this share.

    Such an environment could create none of that kind (or start no pod at all), which is never
    what a tier means; the catalog refuses it and names the amount to raise.
    """
    split = split_hard(total, share)
    return sorted(key for key, value in total.items() if quantity_value(value) > 0 and quantity_value(split[key]) == 0)


# --- What the platform itself places in a namespace (issue 24) ---------------------------------
#
# A namespace's quota must hold what the platform puts there before the tenant runs anything of
# its own, or the platform's own objects are refused by the quota: a database's last volume claim
# stays Pending and the database never becomes ready, an app never rolls out. Counted per
# environment namespace:
# - in-namespace databases (clouds whose databases run in the tenant's namespace, `local`):
#   CloudNativePG `Cluster` instances (pods, one claim of `storageGb` each), its `Pooler` (one pod),
#   a MariaDB (one pod, one claim); the operators set no resources, so every container gets the
#   namespace's LimitRange defaults (a pod's init containers count as their largest one, which
#   with defaults is never more than its containers: k8s.io/kubernetes pkg/api/v1/resource,
#   PodRequests takes max(sum of containers, each init container));
# - a virtual cluster's pods as the pinned chart renders them (virtual_cluster_placement): the control
#   plane (`tenancy:virtualClusters` amounts, the chart's ephemeral storage, its init containers),
#   CoreDNS, and the state store's claim;
# - each image app's Deployment at one replica (autoscalers own the count, from one);
# - and one more pod at the LimitRange defaults: a rolling update's surge (maxSurge 25%, rounded
#   up: one pod), without which no Deployment of the namespace can roll.
# Chart apps are left out: what a chart runs is the chart's, unknown to the plan.

POSTGRES_INSTANCES = {"small": 1, "medium": 2, "large": 3}
_COMPUTE = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True)
class Placement:
    """One thing the platform runs in a namespace and the quota amounts it takes."""

    what: str
    amounts: dict[str, Decimal]


def _pod_amounts(requests: Mapping[str, str], limits: Mapping[str, str], defaults: LimitDefaults) -> dict[str, Decimal]:
    """One single-container pod as the quota sees it after the API server's defaulting and the
    LimitRanger (a stated limit is also the request when none is stated: pkg/apis/core/v1
    defaults.go SetDefaults_Pod; then the LimitRange's default request and default limit)."""
    default_request, default_limit = defaults.default_request.resources(), defaults.default_limit.resources()
    amounts: dict[str, Decimal] = {"pods": Decimal(1)}
    for resource in _COMPUTE:
        limit = limits.get(resource, default_limit.get(resource))
        request = requests.get(resource, limits.get(resource, default_request.get(resource)))
        if request is not None:
            amounts[f"requests.{resource}"] = quantity_value(request)
        if limit is not None:
            amounts[f"limits.{resource}"] = quantity_value(limit)
    return amounts


def _scaled(amounts: Mapping[str, Decimal], count: int) -> dict[str, Decimal]:
    return {key: value * count for key, value in amounts.items()}


def _claims(count: int, size: str) -> dict[str, Decimal]:
    return {"persistentvolumeclaims": Decimal(count), "requests.storage": quantity_value(size) * count}


def platform_placements(
    spec: TenantSpec,
    environment: str,
    *,
    defaults: LimitDefaults,
    data_placement: str,
    databases_in_namespace: bool,
    virtual_cluster: VirtualClusterSettings | None,
) -> list[Placement]:
    """Everything the platform itself places in one environment's namespace, surge pod last."""
    default_pod = _pod_amounts({}, {}, defaults)
    placed: list[Placement] = []
    for database in spec.in_environment(spec.databases, environment):
        if not databases_in_namespace or (database.placement or data_placement) != "dedicated":
            continue
        size = f"{database.storage_gb}Gi"
        if database.engine == "postgres":
            instances = POSTGRES_INSTANCES[database.size]
            amounts = _add(_scaled(default_pod, instances), _claims(instances, size))
            placed.append(Placement(f"database {database.name} ({instances} x {size})", amounts))
            if database.pool_size is not None:
                placed.append(Placement(f"the pooler of database {database.name}", dict(default_pod)))
        else:
            placed.append(Placement(f"database {database.name} ({size})", _add(default_pod, _claims(1, size))))
    if virtual_cluster is not None:
        placed.append(virtual_cluster_placement(virtual_cluster, defaults))
    for app in spec.in_environment(spec.apps, environment):
        if app.image is None:
            continue
        resources = app.resources
        requests = resources.requests.resources() if resources is not None else {}
        limits = resources.limits.resources() if resources is not None else {}
        placed.append(Placement(f"app {app.name}", _pod_amounts(requests, limits, defaults)))
    placed.append(Placement("one rolling-update surge pod at the LimitRange defaults", dict(default_pod)))
    return placed


def virtual_cluster_placement(settings: VirtualClusterSettings, defaults: LimitDefaults) -> Placement:
    """The control plane pod and CoreDNS, as chart 0.20.0 renders them with the platform's values
    (tests/vcluster/chart_pods.py), and the state store's claim. A pod's init containers count as
    their largest one where that exceeds its containers (pkg/api/v1/resource PodRequests)."""
    ephemeral = CHART_CONTROL_PLANE_EPHEMERAL_STORAGE
    syncer = _pod_amounts(
        {"cpu": settings.cpu_request, "memory": settings.memory_request, "ephemeral-storage": ephemeral["requests"]},
        {"memory": settings.memory_limit, "ephemeral-storage": ephemeral["limits"]},
        defaults,
    )
    init = _pod_amounts(CHART_DISTRO_INIT_RESOURCES["requests"], CHART_DISTRO_INIT_RESOURCES["limits"], defaults)
    control_plane = {key: max(value, init.get(key, Decimal(0))) for key, value in syncer.items()}
    coredns = _pod_amounts(CHART_COREDNS_RESOURCES["requests"], CHART_COREDNS_RESOURCES["limits"], defaults)
    return Placement(
        "the virtual cluster's control plane and CoreDNS",
        _add(control_plane, coredns, _claims(1, settings.storage)),
    )


def _add(*parts: Mapping[str, Decimal]) -> dict[str, Decimal]:
    total: dict[str, Decimal] = {}
    for part in parts:
        for key, value in part.items():
            total[key] = total.get(key, Decimal(0)) + value
    return total


def over_budget(hard: Mapping[str, str], placements: list[Placement]) -> dict[str, Decimal]:
    """The quota amounts the placements together need more of than `hard` gives: key -> need."""
    total = _add(*(p.amounts for p in placements))
    return {key: need for key, need in sorted(total.items()) if key in hard and need > quantity_value(hard[key])}
