"""tenancy: every tenant file under tenants/ becomes namespaces, access, quotas and isolation.

Read this as a wiring diagram: settings and tenants are validated first (nothing is registered if
either is wrong), then the cluster-wide platform (stack roles `all` and `platform`), then one Tenant
per tenant of this stack (roles `all` and `tenants`), then the outputs.
"""

from pathlib import Path

import pulumi

from components.clouds.registry import cloud_for
from components.collector import tune_for_registrations
from components.model.catalog.load import load_catalog, project_stacks
from components.model.catalog.stack_config import read_stack_settings
from components.model.checks.stack_references import committed_settings
from components.platform.cluster import build_cluster_platform
from components.platform.installs import after_installs
from components.platform.link import PLATFORM_OUTPUT, local_platform, referenced_platform
from components.platform.providers import providers
from components.released import export_record, previous_outputs
from components.tenant import Tenant, TenantArgs
from components.vcluster.previous import previous_virtual_clusters

PROJECT_ROOT = Path(__file__).resolve().parent

stack = pulumi.get_stack()
settings = read_stack_settings(stack)
# The stack's cloud (components/clouds/registry.py): what it can run, its provider, its data.
cloud = cloud_for(settings)
# What this stack deployed last: tenant names whose retained data may still exist (components/released.py).
previous = previous_outputs()
# Split stacks (`prod-shard-3`) read tenant files as their base stack (`prod`) would. What this stack
# deployed last guards virtual clusters against a silent switch back (components/vcluster/previous.py).
# Every tenant file is also checked against the other stacks it targets (stack_references.py).
project = project_stacks(PROJECT_ROOT)
catalog = load_catalog(
    PROJECT_ROOT / settings.tenants_dir,
    settings,
    settings.base_stack or stack,
    cloud=cloud,
    root=PROJECT_ROOT,
    previous_virtual_clusters=previous_virtual_clusters(),
    known_stacks=project,
    previous_outputs=previous,
    other_settings=committed_settings(PROJECT_ROOT, project - {settings.base_stack or stack}),
)
cluster = providers(cluster=settings.cluster, cloud=cloud, source=settings.source)
# Everything above lives for the whole run: keep the garbage collector from rescanning it while
# thousands of registrations allocate (components/collector.py).
tune_for_registrations()

# --- Cluster-wide platform: once per cluster (components/platform/cluster.py) -----------------
flux = None
installs = None
edge_ready: list[pulumi.Resource] = []
if settings.stack_role in ("all", "platform"):
    cluster_platform = build_cluster_platform(settings, cloud, catalog, cluster.options())
    flux, installs = cluster_platform.flux, cluster_platform.installs
    edge_ready = cluster_platform.edge.ready() if cluster_platform.edge is not None else []
    pulumi.export("nodePools", {name: pool.summary() for name, pool in cluster_platform.pools.items()})
    pulumi.export(PLATFORM_OUTPUT, cluster_platform.values)
    if cluster_platform.edge is not None and cluster_platform.edge.dns_authorizations:
        # GKE: the `_acme-challenge` CNAME each tenant domain's owner publishes (docs/edge.md).
        pulumi.export("certificateDnsAuthorizations", cluster_platform.edge.dns_authorizations)
    platform = local_platform(cluster_platform.values)
else:
    platform = referenced_platform(platform_stack=settings.platform_stack)

# --- Tenants: all of them, or this shard's ------------------------------------------------------
data = cloud.data_backend(values=platform.part("data"), opts=cluster.options())
tenants = {
    entry.spec.name: Tenant(
        entry.spec.name,
        TenantArgs(spec=entry.spec, settings=settings, flux=flux, data=data, network=cloud.network),
        opts=pulumi.ResourceOptions.merge(
            after_installs(cluster.options(), installs), pulumi.ResourceOptions(depends_on=edge_ready)
        ),
    )
    for entry in catalog.for_stack_role(settings)
}
if settings.stack_role != "platform":
    pulumi.export("tenants", {name: tenant.summary() for name, tenant in tenants.items()})
    export_record(
        previous, [entry.spec for entry in catalog.for_stack_role(settings)], settings.data.reused_tenant_names
    )
