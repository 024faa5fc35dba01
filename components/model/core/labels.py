"""Label keys, taint keys and naming rules, kept in one place.

The Tenant component, the policy bundle and the node pools must agree on these strings exactly:
a policy that selects `tenancy.io/tenant` while namespaces carry another key would silently match
nothing. So every key and every derived name comes from here.
"""

from __future__ import annotations

import re

MANAGED_BY_KEY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "tenancy"
TENANT_KEY = "tenancy.io/tenant"
ENVIRONMENT_KEY = "tenancy.io/environment"
COST_CENTER_KEY = "tenancy.io/cost-center"
# A node pool's node label and taint share one key: `tenancy.io/pool=<pool>` (label) and
# `tenancy.io/pool=<pool>:NoSchedule` (taint). Namespaces carry it too so policies can read it.
NODE_POOL_KEY = "tenancy.io/pool"
NODE_POOL_TAINT_EFFECT = "NoSchedule"
# Node label with the pool's cost code, for in-cluster cost tools (OpenCost groups by node label).
COST_CODE_KEY = "tenancy.io/cost-code"
# Marks platform-owned objects inside tenant namespaces (quota, limits, network policy, bindings).
PLATFORM_OWNED_KEY = "tenancy.io/platform-owned"
# AWS: the pods a tenant marks as its database clients; only they join the environment's database
# security groups (a SecurityGroupPolicy selects them, docs/adr/0016), the rest never get a branch ENI.
DATABASE_CLIENT_KEY = "tenancy.io/database-client"
# On the Namespaces of a suspended tenant (components/lifecycle.py): admission and people read it.
SUSPENDED_KEY = "tenancy.io/suspended"
# On the ResourceQuota: the quota tier it comes from (`custom` for explicit amounts), so a plan diff
# can say "tier small -> medium" rather than only list the amounts (tools/plan/diff.py).
QUOTA_TIER_KEY = "tenancy.io/quota-tier"
# Tenant Namespace annotations the admission policy bundle reads (per-tenant data without a
# resource per tenant): comma-separated hostname patterns, "true"/"false", comma-separated groups.
AUTHORIZED_DOMAINS_KEY = "tenancy.io/authorized-domains"
ALLOW_LOAD_BALANCER_KEY = "tenancy.io/allow-load-balancer"
GROUPS_KEY = "tenancy.io/groups"
# The group bindings the platform renders in this namespace, `<ClusterRole>=<group>` comma-separated
# (components/guardrails/access.py group_bindings): read-only environments hold viewer pairs only.
GROUP_ROLES_KEY = "tenancy.io/group-roles"
# The ipBlocks a tenant's own NetworkPolicies may name, with protocol and ports
# (`cidr!except!...@TCP/443`, comma-separated; components/guardrails/network.py:granted_cidrs).
EGRESS_CIDRS_KEY = "tenancy.io/egress-cidrs"
# Paths the platform opens to the namespace that a tenant's own NetworkPolicies may name too
# (components/guardrails/network.py platform_paths): platform namespaces that reach its pods
# (`name` for every port, `name@TCP/port/port`), and cluster DNS (`namespace,label=value,...`).
PLATFORM_INGRESS_KEY = "tenancy.io/platform-ingress"
DNS_KEY = "tenancy.io/dns"
# Which app component of the tenant spec an object belongs to (selector of its pods and Service).
APP_NAME_KEY = "app.kubernetes.io/name"
# The one label a tenant PodDisruptionBudget selects pods by, its value the budget's name
# (components/admission/rules/scheduling.py disruption_budgets_policy): a pod carries one value of a
# label, so no pod is under two budgets (the eviction API refuses to evict such a pod at all).
DISRUPTION_BUDGET_KEY = "tenancy.io/disruption-budget"

NAMESPACE_PREFIX = "tenant-"
MAX_DNS_LABEL = 63
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# GCP resource labels: lowercase letters, digits, '_' and '-', at most 63 characters.
_CLOUD_LABEL_INVALID = re.compile(r"[^a-z0-9_-]")


def namespace_name(tenant: str, environment: str) -> str:
    """The namespace of one tenant environment, `tenant-<name>-<env>` (seed convention)."""
    return f"{NAMESPACE_PREFIX}{tenant}-{environment}"


def max_tenant_name_length(environments: list[str]) -> int:
    """The longest tenant name whose namespaces stay within a DNS label for these environments."""
    longest_env = max((len(e) for e in environments), default=0)
    return MAX_DNS_LABEL - len(NAMESPACE_PREFIX) - 1 - longest_env


def default_domain(tenant: str, suffix: str) -> str:
    """The hostname every tenant owns without asking: `<tenant>.<suffix>`."""
    return f"{tenant}.{suffix}"


def kubernetes_labels(tenant: str, environment: str | None = None) -> dict[str, str]:
    """Labels every Kubernetes object of a tenant carries."""
    labels = {MANAGED_BY_KEY: MANAGED_BY_VALUE, TENANT_KEY: tenant}
    if environment is not None:
        labels[ENVIRONMENT_KEY] = environment
    return labels


def platform_labels() -> dict[str, str]:
    """Labels of cluster-wide objects the platform owns (not tied to a tenant)."""
    return {MANAGED_BY_KEY: MANAGED_BY_VALUE}


def cloud_label_value(value: str) -> str:
    """Squeeze a value into the strictest cloud label format (GCP) so cost labels always apply."""
    return _CLOUD_LABEL_INVALID.sub("-", value.lower())[:63]


def cost_labels(tenant: str, cost_center: str, environment: str | None = None) -> dict[str, str]:
    """Labels or tags on cloud resources; they reach billing exports for cost allocation."""
    labels = {
        "managed-by": MANAGED_BY_VALUE,
        "tenant": cloud_label_value(tenant),
        "cost-center": cloud_label_value(cost_center),
    }
    if environment is not None:
        labels["environment"] = cloud_label_value(environment)
    return labels


def pool_node_labels(pool: str, cost_code: str) -> dict[str, str]:
    """Kubernetes labels on every node of a pool: the pool (what pods select) and its cost code."""
    return {NODE_POOL_KEY: pool, COST_CODE_KEY: cost_code}


def pool_taint(pool: str) -> dict[str, str]:
    """The taint on every node of a pool, `tenancy.io/pool=<pool>:NoSchedule`, in Kubernetes form.

    Only pods that tolerate it land on the pool; the policy bundle requires a tenant's pods to
    tolerate their own pool's taint and no other.
    """
    return {"key": NODE_POOL_KEY, "value": pool, "effect": NODE_POOL_TAINT_EFFECT}


def pool_cost_labels(pool: str, cost_code: str) -> dict[str, str]:
    """Labels or tags on a pool's cloud resources (VMs, disks); they reach billing exports."""
    return {
        "managed-by": MANAGED_BY_VALUE,
        "node-pool": cloud_label_value(pool),
        "cost-code": cloud_label_value(cost_code),
    }
