"""One tenant environment: its namespace and the guard rails the platform keeps inside it.

These are plain functions that register children of the Tenant component rather than a component
of their own: a component per environment would add a registered resource per namespace for no
behaviour, and resources per tenant decide how far the platform scales.

Per environment (9 resources at most): Namespace, ResourceQuota, LimitRange, one NetworkPolicy,
up to three group RoleBindings, the deployer ServiceAccount and its RoleBinding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.lifecycle import namespace_options, state_of
from components.model.fields import QuotaSpec
from components.model.labels import (
    ALLOW_LOAD_BALANCER_KEY,
    AUTHORIZED_DOMAINS_KEY,
    COST_CENTER_KEY,
    GROUPS_KEY,
    NODE_POOL_KEY,
    PLATFORM_OWNED_KEY,
    default_domain,
    kubernetes_labels,
    namespace_name,
)
from components.model.stack import StackSettings
from components.model.tenant_file import TenantSpec
from components.platform.roles import ROLE_NAMES

DEPLOYER_ACCOUNT = "deployer"
ISOLATION_POLICY = "tenancy-isolation"
QUOTA_NAME = "tenancy-quota"
LIMITS_NAME = "tenancy-limits"
DATABASES_POLICY = "tenancy-databases"
_METADATA_NAME = "kubernetes.io/metadata.name"


@dataclass
class EnvironmentResources:
    """What other parts of the tenant (data, delivery) attach to in one environment."""

    environment: str
    namespace_name: str
    namespace: k8s.core.v1.Namespace
    deployer: k8s.core.v1.ServiceAccount
    read_only: bool


def resolve_quota(spec: TenantSpec, settings: StackSettings) -> QuotaSpec:
    """The tenant's quota: its explicit amounts, its tier, or the stack's default tier."""
    if spec.quota is not None and spec.quota.custom is not None:
        return spec.quota.custom
    tier = spec.quota.tier if spec.quota is not None and spec.quota.tier is not None else settings.default_quota_tier
    return settings.quota_tiers[tier]


def namespace_labels(spec: TenantSpec, environment: str, settings: StackSettings) -> dict[str, str]:
    """Namespace labels: ownership, cost, node pool, and Pod Security Admission at `restricted`."""
    psa_version = f"v{settings.kubernetes_version}"
    labels = {
        **kubernetes_labels(spec.name, environment),
        COST_CENTER_KEY: spec.cost_center,
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": psa_version,
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": psa_version,
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": psa_version,
    }
    if spec.node_pool is not None:
        labels[NODE_POOL_KEY] = spec.node_pool
    return labels


def namespace_annotations(spec: TenantSpec, settings: StackSettings) -> dict[str, str]:
    """Who the tenant is, plus the per-tenant data the admission policies read from the namespace.

    Keeping authorized domains, the load balancer switch and the access groups here (rather than
    in a parameter object per tenant) costs no extra resource and keeps every policy identical
    whatever the tenants: adding a tenant changes data, never a policy.
    """
    own = default_domain(spec.name, settings.domain_suffix)
    groups = dict.fromkeys(spec.access.admin + spec.access.operator + spec.access.viewer)
    return {
        "tenancy.io/display-name": spec.display_name,
        "tenancy.io/contact": str(spec.contact),
        AUTHORIZED_DOMAINS_KEY: ",".join([own, f"*.{own}", *spec.domains]),
        ALLOW_LOAD_BALANCER_KEY: "true" if spec.allow_load_balancer else "false",
        GROUPS_KEY: ",".join(groups),
    }


def _quota_hard(spec: TenantSpec, settings: StackSettings) -> dict[str, str]:
    hard = resolve_quota(spec, settings).hard()
    if not state_of(spec.lifecycle).admits_pods:
        # Suspended: no pod may be admitted; controllers keep their objects and data stays.
        hard["pods"] = "0"
    if not spec.allow_load_balancer:
        hard["services.loadbalancers"] = "0"
    hard["services.nodeports"] = "0"
    return hard


def _isolation_policy_spec(settings: StackSettings) -> k8s.networking.v1.NetworkPolicySpecArgsDict:
    """Deny all ingress and egress, then allow: same namespace, DNS, and platform namespaces in.

    One policy instead of four: NetworkPolicies are additive, so a single object with both policy
    types and these rules is exactly equivalent and costs a quarter of the resources.
    """
    same_namespace: k8s.networking.v1.NetworkPolicyPeerArgsDict = {"pod_selector": {}}
    ingress: list[k8s.networking.v1.NetworkPolicyIngressRuleArgsDict] = [{"from_": [same_namespace]}]
    for platform in settings.platform_namespaces:
        rule: k8s.networking.v1.NetworkPolicyIngressRuleArgsDict = {
            "from_": [{"namespace_selector": {"match_labels": {_METADATA_NAME: platform.name}}}]
        }
        if platform.ports:
            rule["ports"] = [{"protocol": "TCP", "port": port} for port in platform.ports]
        ingress.append(rule)
    dns_peer: k8s.networking.v1.NetworkPolicyPeerArgsDict = {
        "namespace_selector": {"match_labels": {_METADATA_NAME: settings.dns.namespace}},
        "pod_selector": {"match_labels": dict(settings.dns.pod_labels)},
    }
    egress: list[k8s.networking.v1.NetworkPolicyEgressRuleArgsDict] = [
        {"to": [same_namespace]},
        {"to": [dns_peer], "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
    ]
    return {"pod_selector": {}, "policy_types": ["Ingress", "Egress"], "ingress": ingress, "egress": egress}


def _group_bindings(spec: TenantSpec, read_only: bool) -> dict[str, list[str]]:
    """Role key -> groups. In read-only environments every group gets viewer, nothing more."""
    access = spec.access
    if read_only:
        everyone = list(dict.fromkeys(access.admin + access.operator + access.viewer))
        return {"viewer": everyone} if everyone else {}
    bindings = {"admin": access.admin, "operator": access.operator, "viewer": access.viewer}
    return {role: groups for role, groups in bindings.items() if groups}


def register_namespace(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environment: str,
    settings: StackSettings,
    *,
    holds_data: bool,
) -> k8s.core.v1.Namespace:
    """The environment's Namespace; where it holds data (`holds_data`), kept like the data in
    each lifecycle state (components/lifecycle.py)."""
    return k8s.core.v1.Namespace(
        f"{name}-{environment}-namespace",
        metadata={
            "name": namespace_name(spec.name, environment),
            "labels": namespace_labels(spec, environment, settings),
            "annotations": namespace_annotations(spec, settings),
        },
        opts=namespace_options(
            parent=parent,
            lifecycle=spec.lifecycle,
            protect=settings.protection.protect_data,
            holds_data=holds_data,
        ),
    )


def database_egress_policy(
    prefix: str,
    ns_name: str,
    labels: dict[str, str],
    cidrs: Sequence[pulumi.Input[str]],
    ports: list[int],
    opts: pulumi.ResourceOptions,
    namespaces: Sequence[str] = (),
) -> k8s.networking.v1.NetworkPolicy:
    """Egress from the tenant's pods to its own database endpoints, and nowhere else.

    Only for namespaces with databases outside them: cloud databases (by address) and in-cluster
    shared instances (by namespace); in-namespace databases need no rule. Policies are additive,
    so this opens exactly these destinations and ports on top of the isolation policy.
    """
    peers: list[k8s.networking.v1.NetworkPolicyPeerArgsDict] = [{"ip_block": {"cidr": cidr}} for cidr in cidrs]
    peers += [{"namespace_selector": {"match_labels": {_METADATA_NAME: namespace}}} for namespace in namespaces]
    return k8s.networking.v1.NetworkPolicy(
        f"{prefix}-databases",
        metadata={"name": DATABASES_POLICY, "namespace": ns_name, "labels": labels},
        spec={
            "pod_selector": {},
            "policy_types": ["Egress"],
            "egress": [
                {
                    "to": peers,
                    "ports": [{"protocol": "TCP", "port": port} for port in ports],
                }
            ],
        },
        opts=opts,
    )


def build_environment(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environment: str,
    settings: StackSettings,
    *,
    holds_data: bool,
) -> EnvironmentResources:
    """Register one environment's namespace and guard rails as children of `parent`; `holds_data`:
    tenant data lives in the namespace (components/lifecycle.py)."""
    ns_name = namespace_name(spec.name, environment)
    read_only = environment in settings.read_only_environments
    labels = kubernetes_labels(spec.name, environment)
    owned_labels = {**labels, PLATFORM_OWNED_KEY: "true"}
    prefix = f"{name}-{environment}"

    namespace = register_namespace(parent, name, spec, environment, settings, holds_data=holds_data)
    # Everything inside the namespace goes with it: deleting each object first would only slow
    # the engine down, and the namespace deletion removes them anyway.
    inside = pulumi.ResourceOptions(parent=parent, deleted_with=namespace, depends_on=[namespace])

    def metadata(object_name: str, object_labels: dict[str, str]) -> k8s.meta.v1.ObjectMetaArgsDict:
        return {"name": object_name, "namespace": ns_name, "labels": object_labels}

    limits = settings.limit_defaults
    k8s.core.v1.ResourceQuota(
        f"{prefix}-quota",
        metadata=metadata(QUOTA_NAME, owned_labels),
        spec={"hard": _quota_hard(spec, settings)},
        opts=inside,
    )
    k8s.core.v1.LimitRange(
        f"{prefix}-limits",
        metadata=metadata(LIMITS_NAME, owned_labels),
        spec={
            "limits": [
                {
                    "type": "Container",
                    "default_request": limits.default_request.model_dump(exclude_none=True),
                    "default": limits.default_limit.model_dump(exclude_none=True),
                    "max": limits.max_limit.model_dump(exclude_none=True),
                }
            ]
        },
        opts=inside,
    )
    k8s.networking.v1.NetworkPolicy(
        f"{prefix}-isolation",
        metadata=metadata(ISOLATION_POLICY, owned_labels),
        spec=_isolation_policy_spec(settings),
        opts=inside,
    )
    for role, groups in _group_bindings(spec, read_only).items():
        k8s.rbac.v1.RoleBinding(
            f"{prefix}-{role}",
            metadata=metadata(f"tenancy-{role}", owned_labels),
            role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE_NAMES[role]},
            subjects=[{"kind": "Group", "api_group": "rbac.authorization.k8s.io", "name": group} for group in groups],
            opts=inside,
        )
    deployer = k8s.core.v1.ServiceAccount(
        f"{prefix}-deployer",
        metadata=metadata(DEPLOYER_ACCOUNT, labels),
        # No token in every pod that runs as this account; GitOps impersonates it instead.
        automount_service_account_token=False,
        opts=inside,
    )
    k8s.rbac.v1.RoleBinding(
        f"{prefix}-deployer-binding",
        metadata=metadata("tenancy-deployer", owned_labels),
        role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE_NAMES["deployer"]},
        subjects=[{"kind": "ServiceAccount", "name": DEPLOYER_ACCOUNT, "namespace": ns_name}],
        opts=inside,
    )
    return EnvironmentResources(environment, ns_name, namespace, deployer, read_only)
