"""What the platform installs into a bare cluster before anything that needs it (`tenancy:installs`).

The dev stack runs on a fresh kind cluster with no add-ons: the local cloud's databases are
CloudNativePG and MariaDB operator objects, so the operators must be running (CRDs served,
webhooks ready) before the first tenant's database is registered. Each chart is a Helm release at
a pinned version, installed in the order its `after` gives. Unlike tenant workloads, these stay
awaited: Helm waits for every release to be ready, and everything registered after the installs
depends on them, so a broken operator fails `up` at the operator, not at a hundred databases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.model.settings.installs import ChartInstall, InstallSettings, install_order

# How long Helm waits for one release to become ready (seconds); an operator image pull on a cold
# kind node takes a few minutes.
RELEASE_TIMEOUT = 600


def helm_release(
    resource_name: str, release_name: str, chart: ChartInstall, values: dict[str, Any], opts: pulumi.ResourceOptions
) -> k8s.helm.v3.Release:
    """One pinned chart as an awaited Helm release that Pulumi never uninstalls (the platform's style
    for every chart it installs: these installs, and the edge's controllers, components/edge/)."""
    return k8s.helm.v3.Release(
        resource_name,
        name=release_name,
        # An OCI chart is addressed by its full reference; a classic repository by name.
        chart=f"{chart.repository}/{chart.chart}" if chart.repository.startswith("oci://") else chart.chart,
        repository_opts=None if chart.repository.startswith("oci://") else {"repo": chart.repository},
        version=chart.version,
        namespace=chart.namespace,
        create_namespace=True,
        values=values,
        # A failed install is rolled back rather than left half-applied for the next run.
        atomic=True,
        cleanup_on_fail=True,
        timeout=RELEASE_TIMEOUT,
        # Never uninstalled by Pulumi: removing a chart that serves CRDs would delete every object of
        # them with it (tenants' databases, routes, certificates). Uninstall deliberately, with helm.
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True)),
    )


@dataclass
class PlatformInstallsArgs:
    """The stack's `tenancy:installs`."""

    settings: InstallSettings


class PlatformInstalls(pulumi.ComponentResource):
    """The charts a stack installs (`tenancy:index:PlatformInstalls`), once per cluster."""

    releases: dict[str, k8s.helm.v3.Release]

    def __init__(self, name: str, args: PlatformInstallsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:PlatformInstalls", name, None, opts)
        charts = args.settings.charts
        self.releases = {}
        for chart_name in install_order(charts):
            chart = charts[chart_name]
            self.releases[chart_name] = helm_release(
                f"{name}-{chart_name}",
                chart_name,
                chart,
                chart.values,
                pulumi.ResourceOptions(parent=self, depends_on=[self.releases[before] for before in chart.after]),
            )
        self.register_outputs({"charts": {n: f"{charts[n].chart}@{charts[n].version}" for n in self.releases}})


def install_platform(settings: InstallSettings, opts: pulumi.ResourceOptions) -> PlatformInstalls | None:
    """The stack's installs when it lists any charts, else None (a managed cluster's bootstrap did
    it, or `managedElsewhere`: someone else installs them)."""
    if not settings.charts or settings.managed_elsewhere:
        return None
    return PlatformInstalls("platform-installs", PlatformInstallsArgs(settings), opts=opts)


def after_installs(opts: pulumi.ResourceOptions, installs: PlatformInstalls | None) -> pulumi.ResourceOptions:
    """`opts` that also wait for the installs (CRDs and webhooks served) when there are any."""
    if installs is None:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=list(installs.releases.values())))
