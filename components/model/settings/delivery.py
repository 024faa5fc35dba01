"""Stack config for app delivery and GitOps: `tenancy:delivery` in `Pulumi.<stack>.yaml`.

One cluster Flux reconciles every tenant's HelmReleases and GitOps Kustomizations. Whether the
platform installs that Flux itself (a local kind cluster has none) or finds it installed by the
cluster's bootstrap (a managed cluster) differs per stack, so it is config; the multi-tenancy
lockdown flags are not: an installation without them would let one tenant's repository reach
another tenant's namespace, so the platform never installs Flux without them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from components.model.core.fields import DnsLabel, StrictModel

Interval = Annotated[str, Field(pattern=r"^\d+(s|m|h)$")]


class FluxChartSettings(StrictModel):
    """The flux2 Helm chart (fluxcd-community) the platform installs, at a pinned version."""

    # Helm repository the flux2 chart is installed from (HTTPS), when `installFlux` is on.
    repository: Annotated[str, Field(pattern=r"^https://[^\s]+$")] = "https://fluxcd-community.github.io/helm-charts"
    # Exact version: a Flux upgrade is a reviewed change to stack config, never a side effect.
    version: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")] = "2.17.2"


class DeliverySettings(StrictModel):
    """How tenant apps and GitOps repositories reach the cluster."""

    # Install Flux (flux2 chart, multi-tenancy lockdown) as part of this stack. Off by default:
    # most managed clusters get Flux from their bootstrap; the dev stack (kind) turns it on.
    install_flux: bool = False
    # Where installFlux is false but tenants get HelmReleases or Kustomizations, the platform team
    # must confirm the cluster's own Flux runs with the lockdown flags (--no-cross-namespace-refs,
    # --default-service-account, --no-remote-bases); see components/model/stack_checks.py.
    flux_lockdown_acknowledged: bool = False
    # Namespace the cluster's Flux controllers run in: installed there with `installFlux`; a virtual
    # cluster's control plane admits connections from it, so Flux can apply into the virtual cluster.
    flux_namespace: DnsLabel = "flux-system"
    flux_chart: FluxChartSettings = FluxChartSettings()
    # How often Flux re-reads chart and Git sources and re-checks releases for drift.
    interval: Interval = "10m"
    # helm-controller drift detection: `enabled` corrects changes made behind Flux's back,
    # `warn` only reports them, `disabled` does neither. Replica counts are always ignored (autoscalers own them).
    drift_detection: Literal["enabled", "warn", "disabled"] = "enabled"

    @property
    def flux_locked_down(self) -> bool:
        """Whether the cluster's Flux is known to run with the lockdown (installed here or confirmed).

        Only then do tenant roles get HelmRelease and Flux source writes: on a default Flux a
        HelmRelease naming no service account runs as cluster-admin (components/platform/roles.py).
        """
        return self.install_flux or self.flux_lockdown_acknowledged
