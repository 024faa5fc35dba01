"""Stack config for what the platform installs into a bare cluster: `tenancy:installs`.

A managed cluster arrives with its add-ons installed by its own bootstrap; a fresh kind cluster has
nothing, and the dev stack must converge on it with no manual step. So a stack may list Helm charts
the platform installs before anything that needs them (the database operators the local cloud's
databases are made of), each at an exact version from a named repository: an upgrade is a reviewed
change to stack config, never whatever `latest` is that day.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from components.model.core.fields import DnsLabel, StrictModel

# Exact chart versions only (`0.29.1`, `26.6.0`, or `v1.21.1` where the chart's own versions carry
# the `v`, as cert-manager's and Envoy Gateway's do): no ranges, no `latest`, no pre-releases.
ChartVersion = Annotated[str, Field(pattern=r"^v?\d+\.\d+\.\d+$")]
# A Helm repository over HTTPS, or an OCI registry path (`oci://ghcr.io/<org>/charts`).
ChartRepository = Annotated[str, Field(pattern=r"^(https|oci)://[^\s]+[^\s/]$")]


class ChartInstall(StrictModel):
    """One Helm chart the platform installs (a Helm release named after its key)."""

    # A Helm repository over HTTPS, or an OCI registry path (`oci://ghcr.io/<org>/charts`).
    repository: ChartRepository
    # The chart's name in that repository.
    chart: DnsLabel
    # The exact chart version: no ranges, no `latest`.
    version: ChartVersion
    # The release's namespace, created with it.
    namespace: DnsLabel
    # Helm values for the release.
    values: dict[str, Any] = {}
    # Other charts of `installs.charts` this one needs first (CRDs before the operator using them).
    after: list[DnsLabel] = []


class InstallSettings(StrictModel):
    """What this stack installs into the cluster before the platform and tenants."""

    # Helm releases by name, installed in the order their `after` gives; tenants wait for them.
    charts: dict[DnsLabel, ChartInstall] = {}
    # Local clouds read shared secrets from Secrets in `data.sharedSecretsNamespace`; with this on,
    # the platform creates each with placeholder content (an empty registry login, a random value)
    # so a fresh cluster converges. The platform team may replace the content: Pulumi ignores it.
    shared_secret_placeholders: bool = False
    # Every chart this stack would install (`charts` above, the edge's controllers and cert-manager,
    # Flux with `delivery.installFlux`) is installed and upgraded by someone else: a cluster
    # bootstrap, a GitOps repository, the real run (docs/real-run.md). The platform registers no
    # Helm release, and the cluster must serve their CRDs, and have their namespaces, before the
    # first `up` (docs/first-run.md#crds-the-cluster-must-serve; the real run found the edge's CA
    # certificate waiting for cert-manager's namespace). The stack's settings for those charts still
    # decide what the platform renders around them (namespaces opened to their pods, issuers).
    managed_elsewhere: bool = False

    @model_validator(mode="after")
    def _order_is_known(self) -> InstallSettings:
        for name, chart in self.charts.items():
            unknown = sorted(set(chart.after) - set(self.charts))
            if unknown:
                raise ValueError(f"charts.{name}.after names charts not in installs.charts: {', '.join(unknown)}")
        install_order(self.charts)  # raises on a cycle
        return self


def install_order(charts: dict[str, ChartInstall]) -> list[str]:
    """Chart names so that every chart comes after the charts in its `after` (sorted otherwise)."""
    done: list[str] = []
    pending = sorted(charts)
    while pending:
        ready = [name for name in pending if set(charts[name].after) <= set(done)]
        if not ready:
            raise ValueError(f"installs.charts.after has a cycle among: {', '.join(pending)}")
        done.extend(ready)
        pending = [name for name in pending if name not in ready]
    return done
