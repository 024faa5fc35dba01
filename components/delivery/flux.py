"""The cluster's Flux, installed by the platform with the multi-tenancy lockdown (optional).

One Flux per cluster serves every tenant (Flux's maintainers advise against an instance per
namespace). What makes one shared instance safe for tenants is the lockdown, always on here:
- `--no-cross-namespace-refs=true`: a tenant's HelmRelease or Kustomization can only use sources
  in its own namespace, never another tenant's repository or credentials;
- `--default-service-account=default`: a Flux object without `serviceAccountName` runs as the
  namespace's `default` account, which has no rights, instead of as the controller;
- `--no-remote-bases=true`: kustomizations cannot pull bases from arbitrary remote URLs, only
  from the tenant's own declared source;
- `multitenancy.privileged: false`: kustomize- and helm-controller get the right to impersonate
  service accounts instead of cluster-admin, so no service in the cluster holds cluster-admin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.model.settings.delivery import DeliverySettings

LOCKDOWN_ARGS = ["--no-remote-bases=true"]


def flux_values(settings: DeliverySettings) -> dict[str, Any]:
    """Values of the flux2 chart: the lockdown flags and no cluster-admin binding."""
    return {
        "multitenancy": {"enabled": True, "defaultServiceAccount": "default", "privileged": False},
        "kustomizeController": {"container": {"additionalArgs": LOCKDOWN_ARGS}},
    }


@dataclass
class ClusterFluxArgs:
    """The stack's delivery settings (namespace, chart version)."""

    settings: DeliverySettings


class ClusterFlux(pulumi.ComponentResource):
    """Flux for the whole cluster (`tenancy:index:ClusterFlux`), created once per stack."""

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: ClusterFluxArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:ClusterFlux", name, None, opts)
        settings = args.settings
        # A Helm release rather than rendered manifests: Flux upgrades are one version field, and
        # the chart brings the CRDs the tenants' HelmReleases and Kustomizations need.
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name="flux",
            chart="flux2",
            version=settings.flux_chart.version,
            repository_opts={"repo": settings.flux_chart.repository},
            namespace=settings.flux_namespace,
            create_namespace=True,
            values=flux_values(settings),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"namespace": settings.flux_namespace, "chartVersion": settings.flux_chart.version})


def install_flux(settings: DeliverySettings, opts: pulumi.ResourceOptions) -> ClusterFlux | None:
    """The cluster's Flux when this stack installs it (`delivery.installFlux`), else None."""
    return ClusterFlux("flux", ClusterFluxArgs(settings), opts=opts) if settings.install_flux else None
