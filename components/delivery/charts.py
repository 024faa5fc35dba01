"""Chart apps: a Flux HelmRelease per app and the source it installs from.

Why Flux objects rather than Pulumi's Helm support:
- a `HelmRelease` is one small object whose spec holds the pinned version, so a version bump is a
  one-field diff in `pulumi preview`, and the preview downloads no chart and needs no cluster;
  `helm.v3.Release` shows an opaque diff and `helm.v4.Chart` fetches and renders the chart at
  preview time (every tenant, every pull request);
- helm-controller corrects drift continuously, not only when someone runs `pulumi up`;
- helm-controller impersonates the tenant's `deployer` ServiceAccount, so a chart can only ever
  write what the tenant itself may write, in its own namespace. Pulumi's own credentials (cluster
  admin) never render a tenant's chart.

Sources: an OCIRepository per OCI chart, a HelmRepository per distinct HTTPS repository.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import urlparse

import pulumi_kubernetes as k8s

from components.delivery.objects import SOURCE_API, DeliveryTarget, flux_object, secret_ref, suspension
from components.delivery.pod_patch import pod_patches
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.model.settings.delivery import DeliverySettings
from components.model.tenant_file.apps import AppSpec, ChartSource
from components.model.tenant_file.data import credentials_secret_name
from components.model.tenant_file.hostnames import resolve_values

HELM_RELEASE_API = "helm.toolkit.fluxcd.io/v2"
# The media type of a Helm chart's layer in an OCI artifact; Flux extracts it as the chart.
_HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


def chart_url(chart: ChartSource) -> str:
    """Where the chart comes from: the repository, plus the chart name for OCI (one artifact)."""
    return f"{chart.repository.rstrip('/')}/{chart.name}" if is_oci(chart) else chart.repository


def is_oci(chart: ChartSource) -> bool:
    return chart.repository.startswith("oci://")


def helm_repository_name(url: str) -> str:
    """A stable, readable name per repository URL: `charts-<host>-<hash>`, within a DNS label."""
    host = re.sub(r"[^a-z0-9-]", "-", (urlparse(url).hostname or "repo").lower()).strip("-")
    digest = hashlib.sha256(url.encode()).hexdigest()[:8]
    return f"charts-{host[:44].strip('-')}-{digest}"


def database_values_from(app: AppSpec) -> list[dict[str, Any]]:
    """Each referenced database's credentials as Helm values (Flux `valuesFrom`).

    helm-controller reads the `db-<name>` Secret at every reconcile, so the values never pass
    through Pulumi or the HelmRelease; not optional, so a release waits for its credentials
    rather than installing without them.
    """
    return [
        {"kind": "Secret", "name": credentials_secret_name(ref.name), "valuesKey": key, "targetPath": path}
        for ref in app.databases
        for key, path in ref.value_paths().items()
    ]


def register_chart_source(
    target: DeliveryTarget,
    *,
    app: AppSpec,
    chart: ChartSource,
    interval: str,
    repositories: dict[str, str],
) -> dict[str, Any]:
    """Register the chart's source if needed; return the HelmRelease fields that point at it.

    OCI: an OCIRepository per app, pinned by tag (Flux's recommended way for OCI charts; the
    version bump is a change of that one field). HTTPS: one HelmRepository per repository and
    credentials in the namespace, shared by every app from it (`repositories`, key -> name, is
    what this environment registered so far); the HelmRelease pins the version.
    """
    if is_oci(chart):
        k8s.apiextensions.CustomResource(
            f"{target.prefix}-app-{app.name}-chart",
            **flux_object(SOURCE_API, "OCIRepository", app.name, target=target),
            spec={
                "interval": interval,
                "url": chart_url(chart),
                "ref": {"tag": chart.version},
                "layerSelector": {"mediaType": _HELM_CHART_LAYER, "operation": "copy"},
                **secret_ref(chart.secret),
                **suspension(target),
            },
            opts=target.opts,
        )
        return {"chartRef": {"kind": "OCIRepository", "name": app.name}}
    key = f"{chart.repository} {chart.secret or ''}"
    if key not in repositories:
        repositories[key] = helm_repository_name(key)
        k8s.apiextensions.CustomResource(
            f"{target.prefix}-{repositories[key]}",
            **flux_object(SOURCE_API, "HelmRepository", repositories[key], target=target),
            spec={"interval": interval, "url": chart.repository, **secret_ref(chart.secret), **suspension(target)},
            opts=target.opts,
        )
    return {
        "chart": {
            "spec": {
                "chart": chart.name,
                "version": chart.version,
                "sourceRef": {"kind": "HelmRepository", "name": repositories[key]},
                "interval": interval,
            }
        }
    }


def register_chart_app(
    target: DeliveryTarget,
    *,
    app: AppSpec,
    chart: ChartSource,
    settings: DeliverySettings,
    repositories: dict[str, str],
) -> None:
    """A HelmRelease (and its source) that helm-controller reconciles as the tenant's deployer."""
    spec: dict[str, Any] = {
        "interval": settings.interval,
        "releaseName": app.name,
        # Impersonation: the release can only do what the tenant's deployer may, in this namespace.
        "serviceAccountName": DEPLOYER_ACCOUNT,
        **register_chart_source(target, app=app, chart=chart, interval=settings.interval, repositories=repositories),
        "install": {"remediation": {"retries": 3}},
        "upgrade": {"remediation": {"retries": 3, "remediateLastFailure": True}, "cleanupOnFail": True},
        # Autoscalers own replica counts; everything else the chart renders is kept as declared.
        "driftDetection": {"mode": settings.drift_detection, "ignore": [{"paths": ["/spec/replicas"]}]},
    }
    if app.databases:
        spec["valuesFrom"] = database_values_from(app)
    if app.values:
        spec["values"] = resolve_values(app.values, suffix=target.domain_suffix, environment=target.environment)
    spec.update(suspension(target))
    # Pods run as the tenant's workload identity; the release itself is applied as the deployer.
    patches = pod_patches(target.pool, service_account=target.workload_account)
    if patches:
        spec["postRenderers"] = [{"kustomize": {"patches": patches}}]
    k8s.apiextensions.CustomResource(
        f"{target.prefix}-app-{app.name}",
        **flux_object(HELM_RELEASE_API, "HelmRelease", app.name, target=target),
        spec=spec,
        opts=target.opts,
    )
