"""tenancy: every tenant file under tenants/ becomes namespaces, access, quotas and isolation.

Read this as a wiring diagram: settings and tenants are validated first (nothing is registered if
either is wrong), then the cluster-wide platform (stack roles `all` and `platform`), then one Tenant
per tenant of this stack (roles `all` and `tenants`), then the outputs.
"""

from pathlib import Path

import pulumi

from components.admission.bundle import PolicyBundle, PolicyBundleArgs
from components.clouds.registry import cloud_for
from components.data.platform import build_platform_data
from components.delivery.flux import install_flux
from components.guardrails.cluster_network import ClusterIsolation, cluster_isolation_args
from components.model.catalog import load_catalog, project_stacks
from components.model.isolation_checks import uses_virtual_clusters
from components.model.stack import read_stack_settings
from components.model.storage import tenant_storage_classes
from components.platform.installs import after_installs, install_platform
from components.platform.link import PLATFORM_OUTPUT, local_platform, referenced_platform
from components.platform.providers import providers
from components.platform.roles import PlatformRoles, PlatformRolesArgs
from components.platform.storage import PlatformStorage, PlatformStorageArgs
from components.pools.component import NodePool, NodePoolArgs, tenants_on
from components.tenant import Tenant, TenantArgs
from components.vcluster.previous import previous_virtual_clusters
from components.vcluster.roles import VirtualClusterRoles

PROJECT_ROOT = Path(__file__).resolve().parent

stack = pulumi.get_stack()
settings = read_stack_settings(stack)
# The stack's cloud (components/clouds/registry.py): what it can run, its provider, its data.
cloud = cloud_for(settings)
# Split stacks (`prod-shard-3`) read tenant files as their base stack (`prod`) would. What this stack
# deployed last guards virtual clusters against a silent switch back (components/vcluster/previous.py).
catalog = load_catalog(
    PROJECT_ROOT / settings.tenants_dir,
    settings,
    settings.base_stack or stack,
    cloud=cloud,
    root=PROJECT_ROOT,
    previous_virtual_clusters=previous_virtual_clusters(),
    known_stacks=project_stacks(PROJECT_ROOT),
)
cluster = providers(cluster=settings.cluster, cloud=cloud)

# --- Cluster-wide platform: once per cluster -------------------------------------------------
flux = None
installs = None
if settings.stack_role in ("all", "platform"):
    # Charts a bare cluster lacks (the local cloud's database operators), pinned; what needs them waits.
    installs = install_platform(settings.installs, cluster.options())
    # The cluster's Flux with the multi-tenancy lockdown, when this stack installs it.
    flux = install_flux(settings.delivery, cluster.options())
    # Tenants write HelmReleases only where Flux runs in lockdown (installed here or confirmed).
    roles = PlatformRoles(
        "platform-roles", PlatformRolesArgs(flux_writes=settings.delivery.flux_locked_down), opts=cluster.options()
    )
    # The StorageClasses tenants claim, with reclaim policy Delete, on the cloud's default driver.
    storage = PlatformStorage(
        "platform-storage",
        PlatformStorageArgs(
            classes=tenant_storage_classes(
                settings.storage, cloud.capabilities.storage_provisioner, cloud.capabilities.storage_parameters
            ),
            mark_default=settings.storage.mark_default,
        ),
        opts=cluster.options(),
    )
    # The syncer and access roles of virtual clusters, once per cluster, only where a tenant has one.
    if any(uses_virtual_clusters(e.spec) for e in catalog.tenants):
        VirtualClusterRoles("virtual-cluster-roles", opts=cluster.options())
    # Admission policies for every tenant namespace (tenant data lives on the namespaces).
    PolicyBundle(
        "policy-bundle",
        PolicyBundleArgs(settings.policy, settings.kubernetes_version, storage.class_names),
        cluster.options(),
    )
    if settings.network.mode == "clusterNetworkPolicy":
        # Tenant isolation's cluster-wide ClusterNetworkPolicies (docs/network.md).
        ClusterIsolation("cluster-isolation", cluster_isolation_args(settings, cloud.network), cluster.options())
    # Node pools span every shard, so they list all tenants of the stack, not one shard's.
    pools = {
        name: NodePool(
            name,
            NodePoolArgs(
                pool=pool,
                cluster_name=settings.cluster.name,
                gcp=settings.gcp,
                tenants=tenants_on(name, (e.spec for e in catalog.tenants)),
            ),
            opts=cluster.options(),
        )
        for name, pool in settings.node_pools.items()
    }
    pulumi.export("nodePools", {name: pool.summary() for name, pool in pools.items()})
    platform_values = {"roles": roles.role_names}
    # Key ring, shared database instances, the ClusterSecretStore for shared secrets (admitting
    # the entitled namespaces of every tenant of the stack, not one shard's).
    platform_values["data"] = build_platform_data(
        cloud=cloud,
        protect=settings.protection.protect_data,
        opts=after_installs(cluster.options(), installs),
        tenants=[e.spec for e in catalog.tenants],
    )
    pulumi.export(PLATFORM_OUTPUT, platform_values)
    platform = local_platform(platform_values)
else:
    platform = referenced_platform(platform_stack=settings.platform_stack)

# --- Tenants: all of them, or this shard's ------------------------------------------------------
data = cloud.data_backend(values=platform.get("data"), opts=cluster.options())
tenants = {
    entry.spec.name: Tenant(
        entry.spec.name,
        TenantArgs(spec=entry.spec, settings=settings, flux=flux, data=data, network=cloud.network),
        opts=after_installs(cluster.options(), installs),
    )
    for entry in catalog.for_stack_role(settings)
}
if settings.stack_role != "platform":
    pulumi.export("tenants", {name: tenant.summary() for name, tenant in tenants.items()})
