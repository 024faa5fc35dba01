"""One tenant environment: its namespace, composed with the guard rails inside it (quota, network, access).

These are plain functions that register children of the Tenant component rather than a component
of their own: a component per environment would add a registered resource per namespace for no
behaviour, and resources per tenant decide how far the platform scales.

Per environment (9 resources at most): Namespace, ResourceQuota, LimitRange (quota.py), one
NetworkPolicy (network.py), up to three group RoleBindings, the deployer ServiceAccount and its
RoleBinding (access.py). This module composes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import InNamespace
from components.guardrails.access import group_role_pairs, register_access
from components.guardrails.cluster_network import namespace_isolation
from components.guardrails.fqdn import hosts_policy
from components.guardrails.network import (
    ISOLATION_POLICY,
    NetworkRules,
    dns_entries,
    granted_cidrs,
    isolation_policy,
    namespace_paths,
    network_labels,
    network_rules,
    platform_paths,
    route_ports,
)
from components.guardrails.quota import (
    LIMITS_NAME,
    QUOTA_NAME,
    environment_hard,
    quota_tier,
    register_limits,
    register_quota,
)
from components.lifecycle import namespace_options, people_read_only, state_of, suspension_labels
from components.model.core.labels import (
    ALLOW_LOAD_BALANCER_KEY,
    AUTHORIZED_DOMAINS_KEY,
    COST_CENTER_KEY,
    DNS_KEY,
    EGRESS_CIDRS_KEY,
    GROUP_ROLES_KEY,
    GROUPS_KEY,
    NODE_POOL_KEY,
    PLATFORM_INGRESS_KEY,
    PLATFORM_OWNED_KEY,
    QUOTA_TIER_KEY,
    kubernetes_labels,
    namespace_name,
)
from components.model.settings.network import CLUSTER_MODE, CloudNetworkFacts, NetworkSettings
from components.model.settings.stack import StackSettings
from components.model.tenant_file.hostnames import served_hostnames
from components.model.tenant_file.spec import TenantSpec
from components.vcluster.rbac import ACCESS_ROLE as VCLUSTER_ACCESS_ROLE


@dataclass
class EnvironmentResources:
    """What other parts of the tenant (data, delivery) attach to in one environment."""

    environment: str
    namespace_name: str
    namespace: k8s.core.v1.Namespace
    deployer: k8s.core.v1.ServiceAccount
    read_only: bool
    # The namespace's quota, created awaited (guardrails/quota.py): what is counted against it
    # waits for it, or the API server refuses it ("status unknown for quota").
    quota: k8s.core.v1.ResourceQuota
    # How objects inside the namespace are registered (InNamespace): after its isolation, and
    # deleted with it only where it holds no data.
    inside: InNamespace

    @property
    def holds_data(self) -> bool:
        """Tenant data lives in the namespace (components/lifecycle.py `holds_cluster_data`)."""
        return self.inside.holds_data

    @property
    def ready(self) -> list[pulumi.Resource]:
        """What an object created in the namespace waits for: the namespace and its isolation
        (quota, limits, isolation policy). Waiting for the quota keeps the API server from refusing
        what it counts; waiting for the isolation policy means no pod starts unisolated, and, as
        the engine deletes dependents first, that the isolation goes last."""
        return list(self.inside.ready)

    def options(self, parent: pulumi.Resource, *after: pulumi.Resource | None) -> pulumi.ResourceOptions:
        """Options for an object inside the namespace, child of `parent`, that also waits for `after`."""
        return pulumi.ResourceOptions(parent=parent, **self.inside.options(*after))


def namespace_labels(spec: TenantSpec, environment: str, *, kubernetes_version: str) -> dict[str, str]:
    """Namespace labels: ownership, cost, node pool, and Pod Security Admission at `restricted`.

    The PSA version is pinned to the cluster's own minor version, so a cluster upgrade changes
    which checks apply only when the stack's `kubernetesVersion` is bumped with it.
    """
    psa_version = f"v{kubernetes_version}"
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
    # A suspended tenant's namespaces say so: the suspension admission rule reads it.
    labels.update(suspension_labels(spec.lifecycle))
    return labels


def namespace_annotations(
    spec: TenantSpec,
    *,
    environment: str,
    domain_suffix: str,
    egress_cidrs: Sequence[str],
    group_roles: Sequence[str] = (),
    platform_ingress: Sequence[str] = (),
    dns: Sequence[str] = (),
) -> dict[str, str]:
    """Who the tenant is, plus the per-tenant data the admission policies read from the namespace.

    Keeping authorized domains, the load balancer switch and the access groups here (rather than
    in a parameter object per tenant) costs no extra resource and keeps every policy identical
    whatever the tenants: adding a tenant changes data, never a policy. The authorized domains are
    the environment's own (components/model/tenant_file/hostnames.py): dev never holds prod's names.
    """
    groups = dict.fromkeys(spec.access.admin + spec.access.operator + spec.access.viewer)
    return {
        "tenancy.io/display-name": spec.display_name,
        "tenancy.io/contact": str(spec.contact),
        AUTHORIZED_DOMAINS_KEY: ",".join(served_hostnames(spec, environment, domain_suffix)),
        ALLOW_LOAD_BALANCER_KEY: "true" if spec.allow_load_balancer else "false",
        GROUPS_KEY: ",".join(groups),
        EGRESS_CIDRS_KEY: ",".join(egress_cidrs),
        GROUP_ROLES_KEY: ",".join(group_roles),
        PLATFORM_INGRESS_KEY: ",".join(platform_ingress),
        DNS_KEY: ",".join(dns),
    }


def people_read_only_in(spec: TenantSpec, environment: str, settings: StackSettings) -> bool:
    """Whether the tenant's groups only view this namespace: read-only environments, a suspended
    tenant, and a virtual cluster's host namespace (its groups work inside the virtual cluster,
    components/vcluster/rbac.py)."""
    read_only = people_read_only(spec.lifecycle, environment_read_only=environment in settings.read_only_environments)
    return read_only or spec.isolation_in(environment) == "virtual-cluster"


def _platform_ingress(spec: TenantSpec, settings: StackSettings, environment: str) -> Sequence[str]:
    """The platform namespaces whose pods reach the tenant's, as `network_rules` opens them, for the
    namespace annotation PLATFORM_INGRESS_KEY that tenant NetworkPolicies may repeat. Suspended:
    none, so ingress controllers and gateways no longer reach its pods and its hostnames stop being
    served; operators still reach its databases. The Gateway's proxies are opened on the
    environment's route ports only and by their pod labels (never as a whole namespace), so they are
    listed with both, or not at all when the environment has no route ports."""
    if not state_of(spec.lifecycle).serves_traffic:
        return ()
    return namespace_paths(*platform_paths(settings, route_ports(spec, environment)))


def _group_roles(spec: TenantSpec, environment: str, settings: StackSettings) -> list[str]:
    """The `<role>=<group>` pairs bound in this namespace: the persona bindings, and in a virtual
    cluster's host namespace where people write, the admins' access role (components/vcluster)."""
    pairs = group_role_pairs(spec.access, people_read_only_in(spec, environment, settings))
    writes = not people_read_only(spec.lifecycle, environment_read_only=environment in settings.read_only_environments)
    if spec.isolation_in(environment) == "virtual-cluster" and writes:
        pairs += [f"{VCLUSTER_ACCESS_ROLE}={group}" for group in spec.access.admin]
    return pairs


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
            "labels": {
                **namespace_labels(spec, environment, kubernetes_version=settings.kubernetes_version),
                **network_labels(settings, spec.egress),
            },
            "annotations": namespace_annotations(
                spec,
                environment=environment,
                domain_suffix=settings.domain_suffix,
                egress_cidrs=granted_cidrs(settings, spec.egress),
                group_roles=_group_roles(spec, environment, settings),
                platform_ingress=_platform_ingress(spec, settings, environment),
                dns=dns_entries(settings.dns),
            ),
        },
        opts=namespace_options(
            parent=parent,
            lifecycle=spec.lifecycle,
            protect=settings.protection.protect_data,
            holds_data=holds_data,
        ),
    )


def _register_isolation(
    prefix: str,
    ns_name: str,
    owned_labels: dict[str, str],
    rules: NetworkRules,
    network: NetworkSettings,
    egress: Sequence[str],
    namespace: pulumi.Resource,
    inside: pulumi.ResourceOptions,
) -> pulumi.Resource:
    """The namespace's isolation: one NetworkPolicy, or its ClusterNetworkPolicy in that mode
    (returned); and its FQDN policy for the tenant's `egress` entries by host name (GKE only: the
    stack checks refuse them elsewhere and in the ClusterNetworkPolicy mode), an allow-list that
    waits for the isolation like everything else in the namespace."""
    if network.mode == CLUSTER_MODE:
        # Cluster-scoped, so not deleted with the namespace: no deleted_with. Retained where the
        # namespace's guard rails are (a kept namespace's).
        cluster_opts = pulumi.ResourceOptions(
            parent=inside.parent, depends_on=[namespace], retain_on_delete=inside.retain_on_delete
        )
        return namespace_isolation(prefix, ns_name, owned_labels, rules, cluster_opts)
    metadata: k8s.meta.v1.ObjectMetaArgsDict = {
        "name": ISOLATION_POLICY,
        "namespace": ns_name,
        "labels": owned_labels,
    }
    policy = isolation_policy(f"{prefix}-isolation", metadata=metadata, rules=rules, opts=inside)
    hosts_policy(
        prefix,
        ns_name=ns_name,
        labels=owned_labels,
        entries=[network.egress[e] for e in egress],
        opts=pulumi.ResourceOptions.merge(inside, pulumi.ResourceOptions(depends_on=[policy])),
    )
    return policy


def _register_guards(
    prefix: str,
    spec: TenantSpec,
    environment: str,
    settings: StackSettings,
    rules: NetworkRules,
    egress: Sequence[str],
    namespace: pulumi.Resource,
    inside: pulumi.ResourceOptions,
) -> tuple[k8s.core.v1.ResourceQuota, list[pulumi.Resource]]:
    """The namespace's quota, limits and isolation policy: what every tenant namespace has, whatever
    the lifecycle state, for as long as it exists. Returns the quota and the three of them."""
    ns_name = namespace_name(spec.name, environment)
    owned_labels = {**kubernetes_labels(spec.name, environment), PLATFORM_OWNED_KEY: "true"}

    def metadata(object_name: str) -> k8s.meta.v1.ObjectMetaArgsDict:
        return {"name": object_name, "namespace": ns_name, "labels": owned_labels}

    hard = environment_hard(
        spec,
        environment,
        quota_tiers=settings.quota_tiers,
        default_tier=settings.default_quota_tier,
        quota_split=settings.quota_split,
    )
    quota_metadata = metadata(QUOTA_NAME)
    quota_metadata["annotations"] = {QUOTA_TIER_KEY: quota_tier(spec, settings.default_quota_tier)}
    quota = register_quota(prefix, metadata=quota_metadata, spec=spec, hard=hard, opts=inside)
    limits = register_limits(prefix, metadata=metadata(LIMITS_NAME), limits=settings.limit_defaults, opts=inside)
    isolation = _register_isolation(prefix, ns_name, owned_labels, rules, settings.network, egress, namespace, inside)
    return quota, [quota, limits, isolation]


def _guard_options(
    parent: pulumi.Resource, namespace: pulumi.Resource, *, holds_data: bool, retain: bool = False
) -> pulumi.ResourceOptions:
    """Options for the guard rails themselves: they wait for the namespace only (InNamespace)."""
    inside = InNamespace(namespace, holds_data=holds_data)
    return pulumi.ResourceOptions(parent=parent, retain_on_delete=retain or None, **inside.options())


def build_kept_namespace(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environment: str,
    settings: StackSettings,
    *,
    network: CloudNetworkFacts,
) -> InNamespace:
    """A namespace kept only because it holds released data (a decommissioned tenant on a cloud that
    keeps data in namespaces, components/lifecycle.py), with the guard rails it keeps while it holds
    it: the quota (no new pod), the limits, and an isolation policy that admits the platform's
    operators and nothing else: no tenant egress grants, no peers, no ingress controller or Gateway.
    Nobody but the platform gets access: no people's bindings, no deployer. The guard rails are
    retained with the namespace, so removing the tenant file afterwards leaves them in place too.
    Returns the namespace as the data kept in it is registered (InNamespace)."""
    namespace = register_namespace(parent, name, spec, environment, settings, holds_data=True)
    inside = _guard_options(parent, namespace, holds_data=True, retain=True)
    rules = network_rules(settings=settings, facts=network, tenant_egress=())
    rules = replace(rules, platform_namespaces=(), edge=None)
    _, guards = _register_guards(f"{name}-{environment}", spec, environment, settings, rules, (), namespace, inside)
    return InNamespace(namespace, holds_data=True, ready=(namespace, *guards))


def build_environment(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environment: str,
    settings: StackSettings,
    *,
    holds_data: bool,
    network: CloudNetworkFacts,
) -> EnvironmentResources:
    """Register one environment's namespace and guard rails as children of `parent`; `holds_data`:
    tenant data lives in the namespace (components/lifecycle.py)."""
    ns_name = namespace_name(spec.name, environment)
    # People are viewers in read-only environments and while the tenant is suspended.
    read_only = people_read_only(spec.lifecycle, environment_read_only=environment in settings.read_only_environments)
    labels = kubernetes_labels(spec.name, environment)
    owned_labels = {**labels, PLATFORM_OWNED_KEY: "true"}
    prefix = f"{name}-{environment}"

    namespace = register_namespace(parent, name, spec, environment, settings, holds_data=holds_data)
    # Where the namespace holds no data, everything inside goes with it: deleting each object first
    # would only slow the engine down, and the namespace deletion removes them anyway. Where it
    # holds data, each object gets its own delete (InNamespace).
    guard_opts = _guard_options(parent, namespace, holds_data=holds_data)

    def metadata(object_name: str, object_labels: dict[str, str]) -> k8s.meta.v1.ObjectMetaArgsDict:
        return {"name": object_name, "namespace": ns_name, "labels": object_labels}

    rules = network_rules(
        settings=settings,
        facts=network,
        tenant_egress=spec.egress,
        peers=(environment, spec.accepts_from, spec.connects_to),
        ports_for_routes=route_ports(spec, environment),
    )
    if not state_of(spec.lifecycle).serves_traffic:
        # Suspended: ingress controllers and gateways (platform namespaces) no longer reach the
        # tenant's pods, so its hostnames stop being served; operators still reach its databases.
        rules = replace(rules, platform_namespaces=(), edge=None)
    quota, guards = _register_guards(prefix, spec, environment, settings, rules, spec.egress, namespace, guard_opts)
    inside = InNamespace(namespace, holds_data=holds_data, ready=(namespace, *guards))
    deployer = register_access(
        prefix,
        access=spec.access,
        # In a virtual cluster the tenant's groups work inside it; on the host they view (components/vcluster/rbac.py).
        read_only=people_read_only_in(spec, environment, settings),
        ns_name=ns_name,
        metadata=metadata,
        labels=labels,
        owned_labels=owned_labels,
        opts=pulumi.ResourceOptions(parent=parent, **inside.options()),
    )
    return EnvironmentResources(environment, ns_name, namespace, deployer, read_only, quota, inside)
