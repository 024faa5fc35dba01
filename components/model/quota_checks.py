"""Refuse a quota split that leaves an environment with nothing (before anything is registered).

Shares are rounded down so a tenant's environments never add up to more than its tier; with a
small amount and several environments (or a light `tenancy:quotaSplit` weight) that rounding can
reach zero, and the environment could then create none of that kind, or start no pod. That is a
configuration mistake, so it is reported against the tenant file with the amount to raise.
"""

from __future__ import annotations

from components.model.quota_budget import emptied_by_split, environment_share, tenant_total
from components.model.stack import StackSettings
from components.model.tenant_file import TenantSpec


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
