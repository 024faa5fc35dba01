"""The cluster-wide platform: what exists once per cluster, whatever the number of tenants.

Registered by stack roles `all` and `platform` (a `tenants` shard reads the result through the
platform link instead): pinned installs, Flux in lockdown, the shared tenant roles, the tenant
StorageClasses, the admission policy bundle, the ClusterNetworkPolicies of that network mode, the
node pools and the platform's data (key ring, shared instances, the shared-secret store). Kept
out of `__main__.py` so the program's entry point stays a wiring diagram.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.admission.bundle import PolicyBundle, PolicyBundleArgs
from components.clouds.protocol import Cloud
from components.data.platform import build_platform_data
from components.delivery.flux import ClusterFlux, install_flux
from components.edge.platform import PlatformEdge, build_edge
from components.guardrails.cluster_network import ClusterIsolation, cluster_isolation_args
from components.model.catalog.load import Catalog
from components.model.checks.isolation import uses_virtual_clusters
from components.model.settings.network import CLUSTER_MODE
from components.model.settings.stack import StackSettings
from components.model.settings.storage import tenant_storage_classes
from components.platform.installs import PlatformInstalls, after_installs, install_platform
from components.platform.roles import PlatformRoles, PlatformRolesArgs
from components.platform.storage import PlatformStorage, PlatformStorageArgs
from components.pools.component import NodePool, NodePoolArgs, tenants_on
from components.vcluster.roles import VirtualClusterRoles


@dataclass
class ClusterPlatform:
    """What tenants of this stack need from the cluster-wide platform."""

    flux: ClusterFlux | None
    installs: PlatformInstalls | None
    # The platform output tenant shards read (roles, data), and the node pools' summaries.
    values: dict[str, Any]
    pools: dict[str, NodePool]
    # The edge (Gateway API, TLS, DNS; components/edge/): tenants' routes and certificates wait for it.
    edge: PlatformEdge | None = None


def _storage(settings: StackSettings, cloud: Cloud, opts: pulumi.ResourceOptions) -> PlatformStorage:
    """The StorageClasses tenants claim, with reclaim policy Delete, on the cloud's default driver."""
    capabilities = cloud.capabilities
    classes = tenant_storage_classes(
        settings.storage, capabilities.storage_provisioner, capabilities.storage_parameters
    )
    args = PlatformStorageArgs(classes=classes, mark_default=settings.storage.mark_default)
    return PlatformStorage("platform-storage", args, opts=opts)


def _node_pools(settings: StackSettings, catalog: Catalog, opts: pulumi.ResourceOptions) -> dict[str, NodePool]:
    """Node pools span every shard, so they list all tenants of the stack, not one shard's."""
    return {
        name: NodePool(
            name,
            NodePoolArgs(
                pool=pool,
                cluster_name=settings.cluster.name,
                gcp=settings.gcp,
                tenants=tenants_on(name, (e.spec for e in catalog.tenants)),
            ),
            opts=opts,
        )
        for name, pool in settings.node_pools.items()
    }


def build_cluster_platform(
    settings: StackSettings, cloud: Cloud, catalog: Catalog, opts: pulumi.ResourceOptions
) -> ClusterPlatform:
    """Register the cluster-wide platform; `opts` carries the cluster's providers."""
    # Charts a bare cluster lacks (the local cloud's database operators), pinned; what needs them waits.
    installs = install_platform(settings.installs, opts)
    # The cluster's Flux with the multi-tenancy lockdown, when this stack installs it.
    flux = None if settings.installs.managed_elsewhere else install_flux(settings.delivery, opts)
    # Tenants write HelmReleases only where Flux runs in lockdown (installed here or confirmed).
    roles = PlatformRoles(
        "platform-roles", PlatformRolesArgs(flux_writes=settings.delivery.flux_locked_down), opts=opts
    )
    storage = _storage(settings, cloud, opts)
    # The syncer and access roles of virtual clusters, once per cluster, only where a tenant has one.
    # (An environment switched back keeps its installer's binding while `discardState` lists it.)
    if any(uses_virtual_clusters(e.spec) or e.spec.virtual_cluster.discard_state for e in catalog.tenants):
        VirtualClusterRoles("virtual-cluster-roles", opts=opts)
    # Admission policies for every tenant namespace (tenant data lives on the namespaces).
    gateway = settings.edge.gateway
    PolicyBundle(
        "policy-bundle",
        PolicyBundleArgs(
            settings.policy,
            settings.kubernetes_version,
            storage.class_names,
            (gateway.namespace, gateway.name) if gateway.enabled else None,
            settings.delivery.flux_namespace,
        ),
        opts,
    )
    if settings.network.mode == CLUSTER_MODE:
        # Tenant isolation's cluster-wide ClusterNetworkPolicies (docs/network.md).
        ClusterIsolation("cluster-isolation", cluster_isolation_args(settings, cloud.network), opts)
    pools = _node_pools(settings, catalog, opts)
    # Gateway controller, cert-manager and the stack's issuer, external-dns, the platform Gateway.
    edge = build_edge(
        settings,
        settings.base_stack or pulumi.get_stack(),
        [e.spec for e in catalog.tenants],
        after_installs(opts, installs),
    )
    # Key ring, shared database instances, the ClusterSecretStore for shared secrets (admitting
    # the entitled namespaces of every tenant of the stack, not one shard's).
    data = build_platform_data(
        cloud=cloud,
        protect=settings.protection.protect_data,
        opts=after_installs(opts, installs),
        tenants=[e.spec for e in catalog.tenants],
    )
    return ClusterPlatform(flux, installs, {"roles": roles.role_names, "data": data}, pools, edge)
