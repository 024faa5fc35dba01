"""How much of the cluster a tenant environment may use: its ResourceQuota and LimitRange.

The quota caps the namespace's total; the LimitRange gives containers that state nothing a request
and a limit, so the quota (which needs both) never rejects an ordinary pod for leaving them out.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from components.lifecycle import state_of
from components.model.checks.quota_budget import environment_share, split_hard, tenant_total
from components.model.core.await_rules import WAIT_FOR
from components.model.core.fields import QuotaSpec
from components.model.settings.stack import LimitDefaults
from components.model.tenant_file.spec import TenantSpec

QUOTA_NAME = "tenancy-quota"
LIMITS_NAME = "tenancy-limits"


def environment_hard(
    spec: TenantSpec,
    environment: str,
    *,
    quota_tiers: Mapping[str, QuotaSpec],
    default_tier: str,
    quota_split: Mapping[str, int],
) -> dict[str, str]:
    """One environment's share of the tenant's budget (components/model/checks/quota_budget.py).

    The tier or custom quota is the tenant's total; missing amounts come from the default tier and
    the platform caps first, so nothing a tenant can create is left unbounded.
    """
    total = tenant_total(spec, quota_tiers=quota_tiers, default_tier=default_tier)
    return split_hard(total, environment_share(environment, spec.environments, quota_split))


def quota_hard(spec: TenantSpec, hard_amounts: Mapping[str, str]) -> dict[str, str]:
    """The quota's `hard` amounts, with the switches the tenant file controls."""
    hard = dict(hard_amounts)
    if not state_of(spec.lifecycle).admits_pods:
        # Suspended: no pod may be admitted; controllers keep their objects and data stays.
        hard["pods"] = "0"
    if not spec.allow_load_balancer:
        hard["services.loadbalancers"] = "0"
    hard["services.nodeports"] = "0"
    return hard


def quota_tier(spec: TenantSpec, default_tier: str) -> str:
    """The tier the tenant's quota comes from: its own, `custom` for explicit amounts, else the stack default."""
    if spec.quota is None:
        return default_tier
    return spec.quota.tier if spec.quota.tier is not None else "custom"


def register_quota(
    prefix: str,
    *,
    metadata: k8s.meta.v1.ObjectMetaArgsDict,
    spec: TenantSpec,
    hard: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.ResourceQuota:
    """The namespace's ResourceQuota (`tenancy-quota`), from environment_hard's amounts.

    Awaited until the quota controller has written `status.used`: until then the API server's
    ResourceQuota admission refuses every object the quota counts ("forbidden: status unknown for
    quota"), so what the tenant's namespace receives waits for it (EnvironmentResources.ready). The
    real run found the race: acme's Certificate and ListenerSet refused in the first `up`.
    """
    existing: dict[str, str] = dict(metadata.get("annotations") or {})  # type: ignore[arg-type]
    annotations = {**existing, WAIT_FOR: "jsonpath={.status.used}"}
    return k8s.core.v1.ResourceQuota(
        f"{prefix}-quota",
        metadata={**metadata, "annotations": annotations},
        spec={"hard": quota_hard(spec, hard)},
        opts=opts,
    )


def register_limits(
    prefix: str, *, metadata: k8s.meta.v1.ObjectMetaArgsDict, limits: LimitDefaults, opts: pulumi.ResourceOptions
) -> k8s.core.v1.LimitRange:
    """The namespace's LimitRange (`tenancy-limits`): defaults and a ceiling per container."""
    return k8s.core.v1.LimitRange(
        f"{prefix}-limits",
        metadata=metadata,
        spec={
            "limits": [
                {
                    "type": "Container",
                    "default_request": limits.default_request.resources(),
                    "default": limits.default_limit.resources(),
                    "max": limits.max_limit.resources(),
                }
            ]
        },
        opts=opts,
    )
