"""tenancy: every tenant file under tenants/ becomes namespaces, access, quotas and isolation.

Read this as a wiring diagram: settings and tenants are validated first (nothing is registered if
either is wrong), then the cluster-wide parts, then one Tenant per tenant, then the outputs.
"""

from pathlib import Path

import pulumi

from components.catalog import load_catalog
from components.cluster import providers
from components.node_pool import NodePool, NodePoolArgs, tenants_on
from components.platform_roles import PlatformRoles, PlatformRolesArgs
from components.policy_bundle import PolicyBundle, PolicyBundleArgs
from components.settings import read_stack_settings
from components.tenant import Tenant, TenantArgs

PROJECT_ROOT = Path(__file__).resolve().parent

stack = pulumi.get_stack()
settings = read_stack_settings(stack)
catalog = load_catalog(PROJECT_ROOT / settings.tenants_dir, settings, stack, root=PROJECT_ROOT)

cluster = providers(settings)
roles = PlatformRoles("platform-roles", PlatformRolesArgs(), opts=cluster.options())
pools = {
    name: NodePool(
        name,
        NodePoolArgs(pool=pool, settings=settings, tenants=tenants_on(name, (e.spec for e in catalog.tenants))),
        opts=cluster.options(),
    )
    for name, pool in settings.node_pools.items()
}
# Admission policies for every tenant namespace (tenant data lives on the namespaces).
PolicyBundle("policy-bundle", PolicyBundleArgs(settings.policy, settings.kubernetes_version), cluster.options())

tenants = {
    entry.spec.name: Tenant(entry.spec.name, TenantArgs(spec=entry.spec, settings=settings), opts=cluster.options())
    for entry in catalog.tenants
}

pulumi.export("tenants", {name: tenant.summary() for name, tenant in tenants.items()})
pulumi.export("nodePools", {name: pool.summary() for name, pool in pools.items()})
