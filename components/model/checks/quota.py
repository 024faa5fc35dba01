"""Refuse a quota that leaves an environment with nothing, or that asks for more than any tier.

Shares are rounded down so a tenant's environments never add up to more than its tier; with a
small amount and several environments (or a light `tenancy:quotaSplit` weight) that rounding can
reach zero, and the environment could then create none of that kind, or start no pod. That is a
configuration mistake, so it is reported against the tenant file with the amount to raise.

A custom quota above the stack's largest tier is refused too (`quota_ceiling_problems`): `cpu: "500"`
is 500 cores where millicores (`500m`) were meant, and nothing else would notice until the cluster
runs out. A tenant that really needs more gets a tier of its own in `tenancy:quotaTiers`, which the
platform team reviews.
"""

from __future__ import annotations

from decimal import Decimal

from components.model.checks.capabilities import CloudCapabilities
from components.model.checks.quota_budget import (
    emptied_by_split,
    environment_share,
    over_budget,
    platform_placements,
    split_hard,
    tenant_total,
)
from components.model.core.fields import quantity_value
from components.model.core.labels import namespace_name
from components.model.settings.stack import StackSettings
from components.model.tenant_file.isolation import virtual_environments
from components.model.tenant_file.spec import TenantSpec


def _quota_field(spec: TenantSpec, settings: StackSettings) -> tuple[str, str]:
    """The field that set the budget, and how the message names it."""
    if spec.quota is not None and spec.quota.custom is not None:
        return "quota.custom", "the custom quota"
    tier = spec.quota.tier if spec.quota is not None and spec.quota.tier is not None else settings.default_quota_tier
    where = "quota.tier" if spec.quota is not None and spec.quota.tier is not None else "quota"
    return where, f"quota tier {tier!r}"


def quota_split_problems(spec: TenantSpec, settings: StackSettings) -> list[tuple[str, str]]:
    """(field, message) for each environment whose share of an amount rounds down to zero."""
    # The same environments and weights the quota component splits by (components/guardrails/quota.py).
    environments = list(spec.environments)
    if len(environments) < 2:
        return []
    total = tenant_total(spec, quota_tiers=settings.quota_tiers, default_tier=settings.default_quota_tier)
    where, budget = _quota_field(spec, settings)
    problems: list[tuple[str, str]] = []
    for environment in environments:
        share = environment_share(environment, environments, settings.quota_split)
        emptied = emptied_by_split(total, share)
        if emptied:
            amounts = ", ".join(f"{key} ({total[key]})" for key in emptied)
            problems.append(
                (
                    where,
                    f"{budget} split over {', '.join(environments)} (tenancy:quotaSplit) leaves environment "
                    f"{environment} zero of {amounts}; raise those amounts or give {environment} more weight",
                )
            )
    return problems


def _amount_field(spec: TenantSpec, key: str) -> str:
    """The tenant-file field that sets one quota amount."""
    if spec.quota is None or spec.quota.custom is None:
        return "quota.tier" if spec.quota is not None and spec.quota.tier is not None else "quota"
    if key == "requests.storage":
        return "quota.custom.storage"
    prefix, _, resource = key.partition(".")
    if prefix in ("requests", "limits") and resource in ("cpu", "memory", "ephemeral-storage"):
        return f"quota.custom.{prefix}.{'ephemeralStorage' if resource == 'ephemeral-storage' else resource}"
    return f"quota.custom.objects.{key}"


def _shown(key: str, value: Decimal) -> str:
    if key.endswith(".cpu"):
        return f"{value * 1000:.0f}m" if value % 1 else f"{value:.0f}"
    if key.startswith(("requests.", "limits.")):
        gibibytes, mebibytes = value / 1024**3, -(-value // 1024**2)
        return f"{gibibytes:.0f}Gi" if gibibytes % 1 == 0 else f"{mebibytes:.0f}Mi"
    return f"{value:.0f}"


def quota_placement_problems(
    spec: TenantSpec, settings: StackSettings, capabilities: CloudCapabilities
) -> list[tuple[str, str]]:
    """(field, message) for each environment whose quota cannot hold what the platform places in
    its namespace plus one rolling-update surge pod (components/model/checks/quota_budget.py)."""
    if spec.lifecycle == "decommissioned":
        return []
    environments = list(spec.environments)
    total = tenant_total(spec, quota_tiers=settings.quota_tiers, default_tier=settings.default_quota_tier)
    virtual = virtual_environments(spec.isolation, environments)
    problems: list[tuple[str, str]] = []
    for environment in environments:
        share = environment_share(environment, environments, settings.quota_split)
        hard = split_hard(total, share)
        # An amount the split empties is reported by quota_split_problems already.
        emptied = set(emptied_by_split(total, share))
        placements = platform_placements(
            spec,
            environment,
            defaults=settings.limit_defaults,
            data_placement=settings.data.placement,
            databases_in_namespace=capabilities.databases_in_namespace,
            virtual_cluster=settings.virtual_clusters if environment in virtual else None,
        )
        what = "; ".join(p.what for p in placements)
        for key, need in over_budget(hard, placements).items():
            if key in emptied:
                continue
            field = _amount_field(spec, key)
            fix = f"raise {field}" if field.startswith("quota.custom") else "choose a larger tier or a custom quota"
            problems.append(
                (
                    field,
                    f"namespace {namespace_name(spec.name, environment)} gets {hard[key]} of {key} but the "
                    f"platform itself places {_shown(key, need)} there ({what}); {fix} so that {environment} "
                    f"gets at least {_shown(key, need)} (its share under tenancy:quotaSplit), or place less there",
                )
            )
    return problems


# The compute amounts a custom quota is held to the stack's largest tier on, by field below quota.custom.
_CEILING_FIELDS = {
    "requests.cpu": "requests.cpu",
    "limits.cpu": "limits.cpu",
    "requests.memory": "requests.memory",
    "limits.memory": "limits.memory",
}


def _amount_words(key: str, value: Decimal) -> str:
    """An amount as a person says it: `500 CPU cores`, `2 cores (2000m)`, `64Gi of memory`."""
    if key.endswith(".cpu"):
        cores = f"{value:.0f}" if value % 1 == 0 else f"{value:g}"
        return f"{cores} CPU cores"
    return f"{_shown(key, value)} of memory"


def quota_ceiling_problems(spec: TenantSpec, settings: StackSettings) -> list[tuple[str, str]]:
    """(field, message) for each custom quota amount above what the stack's largest quota tier gives."""
    if spec.quota is None or spec.quota.custom is None or not settings.quota_tiers:
        return []
    custom = spec.quota.custom.hard()
    problems: list[tuple[str, str]] = []
    for key, field in _CEILING_FIELDS.items():
        if key not in custom:
            continue
        tiers = {name: tier.hard()[key] for name, tier in settings.quota_tiers.items() if key in tier.hard()}
        if not tiers:
            continue
        largest = max(tiers, key=lambda name: quantity_value(tiers[name]))
        asked, ceiling = quantity_value(custom[key]), quantity_value(tiers[largest])
        if asked <= ceiling:
            continue
        hint = ""
        if key.endswith(".cpu") and custom[key].isdigit():
            hint = f"; for millicores write '{custom[key]}m' ({_amount_words(key, asked / 1000)})"
        problems.append(
            (
                f"quota.custom.{field}",
                f"{custom[key]!r} is {_amount_words(key, asked)}, more than this stack's largest quota tier gives "
                f"({largest}: {_amount_words(key, ceiling)}){hint}; a tenant that needs more gets a tier of its own "
                f"in tenancy:quotaTiers ({settings.source})",
            )
        )
    return problems
