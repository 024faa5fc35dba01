"""The virtual clusters of one tenant: one per environment whose isolation is `virtual-cluster`.

Called by the Tenant (components/tenant.py) after its environments exist; returns, per environment,
what the tenant's outputs show and what its GitOps needs (the kubeconfig Secret).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi

from components.guardrails.namespace import EnvironmentResources
from components.lifecycle import state_of
from components.model.core.labels import kubernetes_labels
from components.model.settings.stack import StackSettings
from components.model.settings.storage import data_storage_class
from components.model.tenant_file.spec import TenantSpec
from components.vcluster.inside import inside_manifests
from components.vcluster.objects import VirtualClusterTarget, register_installer, register_virtual_cluster
from components.vcluster.values import KUBECONFIG_KEY, KUBECONFIG_SECRET


@dataclass
class VirtualClusters:
    """Per environment with a virtual cluster: its summary, and the GitOps kubeconfig if GitOps goes there."""

    summaries: dict[str, dict[str, str]] = field(default_factory=dict)
    gitops_kubeconfigs: dict[str, tuple[str, str]] = field(default_factory=dict)


def build_virtual_clusters(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environments: Mapping[str, EnvironmentResources],
    settings: StackSettings,
    *,
    depends_on: list[pulumi.Resource],
) -> VirtualClusters:
    """Register a virtual cluster in each environment that asks for one (`isolation`)."""
    result = VirtualClusters()
    vc_settings = settings.virtual_clusters
    api_server = vc_settings.api_server or settings.network.api_server
    for env, resources in environments.items():
        virtual = spec.isolation_in(env) == "virtual-cluster"
        if not virtual and env not in spec.virtual_cluster.discard_state:
            continue
        target = VirtualClusterTarget(
            prefix=f"{name}-{env}",
            namespace=resources.namespace_name,
            labels=kubernetes_labels(spec.name, env),
            pool=spec.node_pool,
            # Read-only environments (prod) are written by GitOps only: no human gets the kubeconfig.
            admin_groups=[] if resources.read_only else list(spec.access.admin),
            inside_manifests=inside_manifests(
                spec.access, namespace=resources.namespace_name, read_only=resources.read_only
            ),
            flux_namespace=settings.delivery.flux_namespace,
            interval=settings.delivery.interval,
            drift_detection=settings.delivery.drift_detection,
            storage_class=data_storage_class(settings.storage),
            network_mode=settings.network.mode,
            suspended=not state_of(spec.lifecycle).reconciles,
            opts=resources.options(parent, resources.deployer, *depends_on),
        )
        if not virtual:
            # Switched back with the acknowledgement still listed: the release is being removed, and
            # helm-controller uninstalls it as the installer, which must still exist (objects.py).
            register_installer(target)
            continue
        if api_server is None:  # refused by the catalog (isolation_checks.py); kept for the type checker
            raise ValueError("virtual clusters need an API server address")
        # Acknowledged environments are registered unprotected, so the switch back can delete them.
        protect = settings.protection.protect_data and env not in spec.virtual_cluster.discard_state
        result.summaries[env] = register_virtual_cluster(
            target, settings=vc_settings, api_server=api_server, protect=protect
        )
        if spec.virtual_cluster.gitops_target == "virtual-cluster":
            result.gitops_kubeconfigs[env] = (KUBECONFIG_SECRET, KUBECONFIG_KEY)
    return result
