"""The host-side objects of one tenant environment's virtual cluster (9 per environment).

Registered as children of the Tenant inside its namespace, like the guard rails (no component per
environment): the syncer's, workload and installer ServiceAccounts, the syncer's and installer's
bindings, the tenant admins' access binding, the control plane's NetworkPolicy (a
ClusterNetworkPolicy in that network mode), and the chart's source and HelmRelease, which
helm-controller applies as the installer (ADR 0011, issue 43). The accounts, bindings and the
NetworkPolicy carry the platform-owned label, so only the platform may change them (admission rule
5). The HelmRelease, its source, the chart's objects and Helm's release records are the installer's:
admission keeps every tenant identity off them (components/admission/rules/vcluster_release.py), so
the control plane's pod template is the platform's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.delivery.objects import SKIP_AWAIT
from components.guardrails.cluster_network import control_plane_spec, namespace_control_plane
from components.model.checks.storage import STORAGE_CLASS_OUTPUT, STORAGE_OUTPUT
from components.model.core.labels import PLATFORM_OWNED_KEY
from components.model.settings.network import CLUSTER_MODE, EgressTarget
from components.model.tenant_file.isolation import VirtualClusterSettings
from components.vcluster.rbac import ACCESS_ROLE, INSTALLER_ROLE, SYNCER_ROLE
from components.vcluster.values import (
    CONTROL_PLANE_PORT,
    INSTALLER_ACCOUNT,
    KUBECONFIG_SECRET,
    RELEASE_NAME,
    SYNCER_ACCOUNT,
    WORKLOAD_ACCOUNT,
    chart_values,
)

HELM_RELEASE_API = "helm.toolkit.fluxcd.io/v2"
SOURCE_API = "source.toolkit.fluxcd.io/v1"
CHART_SOURCE = "vcluster-charts"
NETWORK_POLICY = "tenancy-vcluster"
# Label of the control plane pod: what its NetworkPolicy selects.
CONTROL_PLANE_KEY = "tenancy.io/vcluster-control-plane"
_RBAC = "rbac.authorization.k8s.io"
_SYNCER_REF: k8s.rbac.v1.RoleRefArgsDict = {"api_group": _RBAC, "kind": "ClusterRole", "name": SYNCER_ROLE}
_ACCESS_REF: k8s.rbac.v1.RoleRefArgsDict = {"api_group": _RBAC, "kind": "ClusterRole", "name": ACCESS_ROLE}
_INSTALLER_REF: k8s.rbac.v1.RoleRefArgsDict = {"api_group": _RBAC, "kind": "ClusterRole", "name": INSTALLER_ROLE}
_METADATA_NAME = "kubernetes.io/metadata.name"


@dataclass
class VirtualClusterTarget:
    """Where one virtual cluster goes and what its objects share."""

    prefix: str
    namespace: str
    labels: dict[str, str]
    pool: str | None
    admin_groups: list[str]
    # The bindings inside the virtual cluster (inside.py), as YAML.
    inside_manifests: str
    flux_namespace: str
    interval: str
    # helm-controller drift detection (`delivery.driftDetection`), as for chart apps.
    drift_detection: str
    # The platform StorageClass the state volume claims (tenant claims may name no other).
    storage_class: str
    opts: pulumi.ResourceOptions
    # `tenancy:network.mode`: the control plane's holes as a NetworkPolicy or a ClusterNetworkPolicy.
    network_mode: str = "networkPolicy"
    # The tenant is suspended: the chart's source and release stop reconciling, like every Flux
    # object of the tenant (components/lifecycle.py); the running control plane is left alone.
    suspended: bool = False


def _metadata(target: VirtualClusterTarget, name: str, *, owned: bool = False) -> k8s.meta.v1.ObjectMetaArgsDict:
    """`owned`: the platform-owned label, on the kinds admission rule 5 locks (bindings, policies)."""
    labels = {**target.labels, PLATFORM_OWNED_KEY: "true"} if owned else target.labels
    return {"name": name, "namespace": target.namespace, "labels": labels}


def _group(name: str) -> k8s.rbac.v1.SubjectArgsDict:
    return {"kind": "Group", "api_group": _RBAC, "name": name}


def _bindings(target: VirtualClusterTarget) -> list[pulumi.Resource]:
    """The accounts and bindings; returns the installer's, which the release waits for."""
    # The syncer's account is the platform's (issue 43): no writer of the namespace may annotate it
    # (a cloud identity) or replace it.
    k8s.core.v1.ServiceAccount(
        f"{target.prefix}-vcluster-account", metadata=_metadata(target, SYNCER_ACCOUNT, owned=True), opts=target.opts
    )
    # The identity of every synced pod (issue 43): the platform's, so the host rule on the syncer's pods
    # (rules/syncer_account.py) names an account that exists from the first `up`, holds no token by
    # default and no binding, and no writer of the namespace can annotate it with a cloud identity.
    k8s.core.v1.ServiceAccount(
        f"{target.prefix}-vcluster-workload-account",
        metadata=_metadata(target, WORKLOAD_ACCOUNT, owned=True),
        automount_service_account_token=False,
        opts=target.opts,
    )
    installer = register_installer(target)
    k8s.rbac.v1.RoleBinding(
        f"{target.prefix}-vcluster-syncer",
        metadata=_metadata(target, SYNCER_ROLE, owned=True),
        role_ref=_SYNCER_REF,
        subjects=[{"kind": "ServiceAccount", "name": SYNCER_ACCOUNT, "namespace": target.namespace}],
        opts=target.opts,
    )
    if target.admin_groups:
        k8s.rbac.v1.RoleBinding(
            f"{target.prefix}-vcluster-access",
            metadata=_metadata(target, ACCESS_ROLE, owned=True),
            role_ref=_ACCESS_REF,
            subjects=[_group(group) for group in target.admin_groups],
            opts=target.opts,
        )
    return installer


def register_installer(target: VirtualClusterTarget) -> list[pulumi.Resource]:
    """The account helm-controller applies the release as (issue 43), and its binding: impersonated,
    never mounted (no pod may run as it, rules/syncer_account.py), and only the platform's HelmRelease
    may name it.

    Also registered, alone, for an environment that switched back to a namespace while
    `virtualCluster.discardState` still lists it (components/vcluster/environments.py): Pulumi does not
    wait for a HelmRelease's deletion (it is not awaited), and helm-controller skips the uninstall when
    the account it would impersonate is gone (helm-controller v1.4.5
    internal/controller/helmrelease_controller.go reconcileDelete), so the account outlives the release
    by one `up` and goes when the acknowledgement does."""
    account = k8s.core.v1.ServiceAccount(
        f"{target.prefix}-vcluster-installer-account",
        metadata=_metadata(target, INSTALLER_ACCOUNT, owned=True),
        automount_service_account_token=False,
        opts=target.opts,
    )
    binding = k8s.rbac.v1.RoleBinding(
        f"{target.prefix}-vcluster-installer",
        metadata=_metadata(target, INSTALLER_ROLE, owned=True),
        role_ref=_INSTALLER_REF,
        subjects=[{"kind": "ServiceAccount", "name": INSTALLER_ACCOUNT, "namespace": target.namespace}],
        opts=target.opts,
    )
    return [account, binding]


def control_plane_policy_spec(
    *, api_server: EgressTarget, flux_namespace: str
) -> k8s.networking.v1.NetworkPolicySpecArgsDict:
    """What the control plane needs beyond the namespace's isolation policy, and nothing more:
    egress to the host API server (the syncer), ingress from Flux on the control plane's port (a
    Kustomization that targets the virtual cluster). DNS and traffic inside the namespace (synced
    pods to the virtual API server, the virtual CoreDNS) are already open."""
    return {
        "pod_selector": {"match_labels": {CONTROL_PLANE_KEY: "true"}},
        "policy_types": ["Ingress", "Egress"],
        "egress": [
            {
                "to": [{"ip_block": {"cidr": cidr}} for cidr in api_server.cidrs],
                "ports": [{"protocol": api_server.protocol, "port": port} for port in api_server.ports],
            }
        ],
        "ingress": [
            {
                "from_": [{"namespace_selector": {"match_labels": {_METADATA_NAME: flux_namespace}}}],
                "ports": [{"protocol": "TCP", "port": CONTROL_PLANE_PORT}],
            }
        ],
    }


def _control_plane_network(target: VirtualClusterTarget, api_server: EgressTarget) -> None:
    """The control plane's holes: a NetworkPolicy beside the namespace's isolation, or in the
    ClusterNetworkPolicy mode an Admin-tier object (docs/adr/0010-cluster-network-policy-mode.md)."""
    if target.network_mode == CLUSTER_MODE:
        spec = control_plane_spec(
            target.namespace, {CONTROL_PLANE_KEY: "true"}, target.flux_namespace, CONTROL_PLANE_PORT, api_server
        )
        # Cluster-scoped: not deleted with the namespace, so the options keep no deleted_with.
        cluster_opts = pulumi.ResourceOptions(parent=target.opts.parent, depends_on=target.opts.depends_on)
        owned = {**target.labels, PLATFORM_OWNED_KEY: "true"}
        namespace_control_plane(target.prefix, target.namespace, owned, spec, cluster_opts)
        return
    k8s.networking.v1.NetworkPolicy(
        f"{target.prefix}-vcluster-network",
        metadata=_metadata(target, NETWORK_POLICY, owned=True),
        spec=control_plane_policy_spec(api_server=api_server, flux_namespace=target.flux_namespace),
        opts=target.opts,
    )


def register_virtual_cluster(
    target: VirtualClusterTarget, *, settings: VirtualClusterSettings, api_server: EgressTarget, protect: bool
) -> dict[str, str]:
    """Register one virtual cluster; returns what the tenant's outputs show (names, never the kubeconfig).

    `protect`: the HelmRelease holds the virtual cluster's state; Pulumi refuses to delete it while
    protected, the backstop behind the catalog's switch-back check (components/vcluster/previous.py).
    """
    installer = _bindings(target)
    _control_plane_network(target, api_server)
    chart = settings.chart
    k8s.apiextensions.CustomResource(
        f"{target.prefix}-vcluster-source",
        api_version=SOURCE_API,
        kind="HelmRepository",
        # Not awaited, like every tenant workload: one tenant's broken source never holds `pulumi up`.
        metadata={**_metadata(target, CHART_SOURCE), "annotations": SKIP_AWAIT},
        spec={"interval": target.interval, "url": chart.repository, **_suspend(target)},
        opts=target.opts,
    )
    values = chart_values(
        namespace=target.namespace,
        pool=target.pool,
        settings=settings,
        labels={CONTROL_PLANE_KEY: "true"},
        manifests=target.inside_manifests,
        storage_class=target.storage_class,
    )
    k8s.apiextensions.CustomResource(
        f"{target.prefix}-vcluster",
        api_version=HELM_RELEASE_API,
        kind="HelmRelease",
        metadata={**_metadata(target, RELEASE_NAME), "annotations": SKIP_AWAIT},
        spec=release_spec(target, settings=settings, values=values),
        # helm-controller impersonates the installer: its account and rights exist first, so the first
        # reconcile (or the upgrade that moves a release from the deployer) is not refused by RBAC.
        opts=pulumi.ResourceOptions.merge(target.opts, pulumi.ResourceOptions(protect=protect, depends_on=installer)),
    )
    # The volume it was made with: its claim template cannot change (components/model/checks/storage.py).
    return {
        "kubeconfigSecret": KUBECONFIG_SECRET,
        "chartVersion": chart.version,
        "release": RELEASE_NAME,
        STORAGE_OUTPUT: settings.storage,
        STORAGE_CLASS_OUTPUT: target.storage_class,
    }


def _suspend(target: VirtualClusterTarget) -> dict[str, Any]:
    return {"suspend": True} if target.suspended else {}


def release_spec(
    target: VirtualClusterTarget, *, settings: VirtualClusterSettings, values: dict[str, Any]
) -> dict[str, Any]:
    """The HelmRelease spec: the pinned chart from the namespace's own source, applied as the installer."""
    return {
        "interval": target.interval,
        "releaseName": RELEASE_NAME,
        "serviceAccountName": INSTALLER_ACCOUNT,
        "chart": {
            "spec": {
                "chart": settings.chart.name,
                "version": settings.chart.version,
                "sourceRef": {"kind": "HelmRepository", "name": CHART_SOURCE},
                "interval": target.interval,
            }
        },
        "install": {"remediation": {"retries": 3}},
        "upgrade": {"remediation": {"retries": 3}},
        "driftDetection": {"mode": target.drift_detection},
        "values": values,
        **_suspend(target),
    }
