"""App components and GitOps for one tenant environment, reconciled by the cluster's Flux.

Plain functions that register children of the Tenant component (like guardrails/namespace.py)
rather than a component of their own: a component per environment would be one more registered
resource per namespace for no behaviour, and resources per tenant decide how far the platform scales.

This module composes the parts, each one purpose: charts.py (HelmRelease + its source),
images.py (Deployment + Service), gitops.py (GitRepository + Kustomization), pod_patch.py (the
pool and identity patches charts and repositories share) and objects.py (the shared target). An
app's identity (the tenant's `workload` account) and its database credentials are fields of those
objects, never objects of their own: resources per tenant stay what they were.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from components.clouds.base import WORKLOAD_ACCOUNT
from components.delivery.charts import chart_url, register_chart_app
from components.delivery.gitops import register_gitops
from components.delivery.images import image_version, register_image_app
from components.delivery.objects import DeliveryTarget
from components.guardrails.namespace import EnvironmentResources
from components.lifecycle import state_of
from components.model.core.labels import kubernetes_labels
from components.model.settings.delivery import DeliverySettings
from components.model.tenant_file.apps import AppSpec
from components.model.tenant_file.spec import TenantSpec


@dataclass
class DeliveryResources:
    """What one environment runs: app name -> (source, version), and its GitOps source if any."""

    environment: str
    apps: dict[str, dict[str, str]] = field(default_factory=dict)
    gitops: dict[str, str] | None = None


def delivery_target(
    parent: pulumi.Resource,
    name: str,
    *,
    spec: TenantSpec,
    environment: EnvironmentResources,
    workload_account: pulumi.Resource | None,
    depends_on: list[pulumi.Resource],
    domain_suffix: str = "",
) -> DeliveryTarget:
    """Namespace, labels, placement and options every delivery object of the environment shares."""
    env_name = environment.environment
    return DeliveryTarget(
        prefix=f"{name}-{env_name}",
        namespace=environment.namespace_name,
        labels=kubernetes_labels(spec.name, env_name),
        pool=spec.node_pool,
        workload_account=WORKLOAD_ACCOUNT if workload_account is not None else None,
        suspended=not state_of(spec.lifecycle).reconciles,
        environment=env_name,
        domain_suffix=domain_suffix,
        # Pods that run as the workload account are created after it, not retried until it exists.
        opts=environment.options(parent, environment.deployer, workload_account, *depends_on),
    )


def register_app(
    target: DeliveryTarget, *, app: AppSpec, settings: DeliverySettings, repositories: dict[str, str]
) -> dict[str, str] | None:
    """Register one app (chart or image); return what the outputs show about it."""
    if app.chart is not None:
        register_chart_app(target, app=app, chart=app.chart, settings=settings, repositories=repositories)
        return {"type": "chart", "source": chart_url(app.chart), "version": app.chart.version}
    if app.image is not None:
        register_image_app(target, app=app, image=app.image)
        return {"type": "image", "source": app.image.repository, "version": image_version(app.image)}
    return None


def build_delivery(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environment: EnvironmentResources,
    settings: DeliverySettings,
    *,
    workload_account: pulumi.Resource | None = None,
    depends_on: list[pulumi.Resource] | None = None,
    gitops_kubeconfig: tuple[str, str] | None = None,
    domain_suffix: str = "",
) -> DeliveryResources:
    """Register one environment's apps and GitOps objects as children of `parent` (the Tenant).

    `workload_account` is the tenant's workload identity ServiceAccount in this namespace (None:
    the environment has none); app pods run as it. `depends_on` is the cluster's Flux
    installation when the stack installs it: Flux objects can only be created once its CRDs exist.
    `gitops_kubeconfig`: the virtual cluster's kubeconfig Secret (name, key) when GitOps applies there.
    """
    env_name = environment.environment
    target = delivery_target(
        parent,
        name,
        spec=spec,
        environment=environment,
        workload_account=workload_account,
        depends_on=depends_on or [],
        domain_suffix=domain_suffix,
    )
    target.gitops_kubeconfig = gitops_kubeconfig
    result = DeliveryResources(env_name)
    # HTTPS chart repositories registered in this namespace so far: one HelmRepository each.
    repositories: dict[str, str] = {}
    for app in spec.in_environment(spec.apps, env_name):
        shown = register_app(target, app=app, settings=settings, repositories=repositories)
        if shown is not None:
            result.apps[app.name] = shown
    gitops = spec.gitops
    if gitops is not None and env_name in (gitops.environments or spec.environments):
        result.gitops = register_gitops(target, environment=env_name, gitops=gitops)
    return result
