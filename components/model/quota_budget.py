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
from decimal import Decimal
from fractions import Fraction

from components.model.fields import QuotaSpec, quantity_value
from components.model.tenant_file import TenantSpec

# Object counts of the `small` tier for every namespaced kind a tenant role may create
# (components/platform/roles.py; tests/guardrails/test_quota_budget.py keeps the two in step).
# pods, services, secrets, configmaps and persistentvolumeclaims have their own quota names.
SMALL_OBJECT_COUNTS: dict[str, int] = {
    "pods": 20,
    "services": 20,
    "persistentvolumeclaims": 20,
    "secrets": 100,
    "configmaps": 100,
    "count/endpoints": 20,
    "count/serviceaccounts": 20,
    "count/deployments.apps": 20,
    "count/statefulsets.apps": 10,
    # A Deployment keeps up to 10 old ReplicaSets for rollback.
    "count/replicasets.apps": 200,
    "count/jobs.batch": 50,
    "count/cronjobs.batch": 10,
    "count/horizontalpodautoscalers.autoscaling": 20,
    "count/poddisruptionbudgets.policy": 20,
    "count/ingresses.networking.k8s.io": 20,
    "count/networkpolicies.networking.k8s.io": 20,
    "count/httproutes.gateway.networking.k8s.io": 20,
    "count/grpcroutes.gateway.networking.k8s.io": 20,
    "count/tlsroutes.gateway.networking.k8s.io": 20,
    "count/listenersets.gateway.networking.k8s.io": 10,
    "count/certificates.cert-manager.io": 20,
    "count/externalsecrets.external-secrets.io": 50,
    "count/helmreleases.helm.toolkit.fluxcd.io": 20,
    "count/helmrepositories.source.toolkit.fluxcd.io": 10,
    "count/ocirepositories.source.toolkit.fluxcd.io": 20,
}

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
