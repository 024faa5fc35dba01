"""App components and GitOps for one tenant environment, reconciled by the cluster's Flux.

Plain functions that register children of the Tenant component (like namespace.py) rather than a
component of their own: a component per environment would be one more registered resource per
namespace for no behaviour, and resources per tenant decide how far the platform scales.

Why Flux objects rather than Pulumi's Helm support, for charts:
- a `HelmRelease` is one small object whose spec holds the pinned version, so a version bump is a
  one-field diff in `pulumi preview`, and the preview downloads no chart and needs no cluster;
  `helm.v3.Release` shows an opaque diff and `helm.v4.Chart` fetches and renders the chart at
  preview time (every tenant, every pull request);
- helm-controller corrects drift continuously, not only when someone runs `pulumi up`;
- helm-controller impersonates the tenant's `deployer` ServiceAccount, so a chart can only ever
  write what the tenant itself may write, in its own namespace. Pulumi's own credentials (cluster
  admin) never render a tenant's chart.

Per environment: per chart app a HelmRelease plus its source (an OCIRepository per OCI chart, a
HelmRepository per distinct HTTPS repository); per image app a Deployment (+ a Service when it
has a port); for GitOps a GitRepository and a Kustomization. An app's identity (the tenant's
`workload` account) and its database credentials are fields of those objects, never objects of
their own: resources per tenant stay what they were.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlparse

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.clouds.base import WORKLOAD_ACCOUNT
from components.clouds.local.data import credentials_secret_name
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.guardrails.namespace import EnvironmentResources
from components.model.delivery import DeliverySettings
from components.model.labels import APP_NAME_KEY, NODE_POOL_KEY, NODE_POOL_TAINT_EFFECT, kubernetes_labels
from components.model.tenant_apps import AppSpec, ChartSource, GitOpsSpec, ImageSource
from components.model.tenant_file import TenantSpec

HELM_RELEASE_API = "helm.toolkit.fluxcd.io/v2"
SOURCE_API = "source.toolkit.fluxcd.io/v1"
KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
# Name of the GitRepository and Kustomization in each tenant namespace (one repository per tenant).
GITOPS_NAME = "tenant-gitops"
SECRET_MOUNT_ROOT = "/var/run/secrets/tenancy"
# The media type of a Helm chart's layer in an OCI artifact; Flux extracts it as the chart.
_HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


@dataclass
class DeliveryResources:
    """What one environment runs: app name -> (source, version), and its GitOps source if any."""

    environment: str
    apps: dict[str, dict[str, str]] = field(default_factory=dict)
    gitops: dict[str, str] | None = None


def image_reference(image: ImageSource) -> str:
    """`repo:tag`, `repo@sha256:...` or `repo:tag@sha256:...` (the digest is what the node pulls)."""
    reference = image.repository
    if image.tag is not None:
        reference += f":{image.tag}"
    if image.digest is not None:
        reference += f"@{image.digest}"
    return reference


def image_version(image: ImageSource) -> str:
    """The version a person reads in outputs: the tag, else the digest."""
    return image.tag if image.tag is not None else str(image.digest)


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


def gitops_path(gitops: GitOpsSpec, environment: str) -> str:
    return gitops.path.replace("{environment}", environment)


def gitops_revision(gitops: GitOpsSpec) -> str:
    """`branch main`, `tag v1.2.0` or `commit <sha>`, for outputs."""
    ref = gitops.ref
    for kind in ("branch", "tag", "commit"):
        value = getattr(ref, kind)
        if value is not None:
            return f"{kind} {value}"
    raise AssertionError("GitRef validates exactly one of branch, tag or commit")


def pod_patches(pool: str | None, service_account: str | None = None) -> list[dict[str, Any]]:
    """Kustomize patches that put every workload of a chart or repository on the tenant's pool
    and, for charts, run it as the tenant's workload identity.

    The same patches serve HelmRelease post-renderers and GitOps Kustomizations, so no chart or
    repository needs to know about node pools. Tolerations are replaced, not merged: a tenant's
    pods must tolerate their own pool's taint and no other (the policy bundle checks the same).

    `service_account` overrides whatever account the chart's pod templates name. Nothing is lost
    by that: the only account in a tenant namespace that carries cloud identity is `workload` (the
    GCP binding and the AWS trust name no other), and no account there can hold Kubernetes rights
    (the deployer cannot write Roles or RoleBindings), so a chart's own account is an empty name.
    Setting it only where a chart names none is not expressible in a kustomize patch.
    """
    return [{"target": {"kind": kind}, "patch": text} for kind, text in _patch_texts(pool, service_account)]


# Every tenant on a pool gets the same patches: render each distinct pair once per run rather than
# once per app and environment (YAML rendering was a tenth of the program's own time at scale).
@functools.cache
def _patch_texts(pool: str | None, service_account: str | None) -> tuple[tuple[str, str], ...]:
    pod_spec: dict[str, Any] = {}
    if pool is not None:
        pod_spec["nodeSelector"] = {NODE_POOL_KEY: pool}
        pod_spec["tolerations"] = [
            {"key": NODE_POOL_KEY, "operator": "Equal", "value": pool, "effect": NODE_POOL_TAINT_EFFECT}
        ]
    if service_account is not None:
        pod_spec["serviceAccountName"] = service_account
    if not pod_spec:
        return ()
    template: dict[str, Any] = {"template": {"spec": pod_spec}}
    bodies: dict[tuple[str, str], dict[str, Any]] = {
        ("apps/v1", "Deployment"): {"spec": template},
        ("apps/v1", "StatefulSet"): {"spec": template},
        ("batch/v1", "Job"): {"spec": template},
        ("batch/v1", "CronJob"): {"spec": {"jobTemplate": {"spec": template}}},
    }
    # One strategic-merge patch per kind, each with its real apiVersion and kind (kustomize looks
    # up merge keys by kind); the target selects every object of that kind, whatever its name.
    return tuple(
        (kind, yaml.safe_dump({"apiVersion": api, "kind": kind, "metadata": {"name": "any"}, **body}, sort_keys=False))
        for (api, kind), body in bodies.items()
    )


def database_env(app: AppSpec) -> list[dict[str, Any]]:
    """Image apps: each referenced database's credentials as `DB_<NAME>_<KEY>` variables.

    One `secretKeyRef` per key rather than `envFrom` with a prefix: the names stay upper case
    (`envFrom` keeps the Secret's lower-case keys), and only these five keys reach the app
    (a local MySQL credentials Secret also holds the root password).
    """
    return [
        {"name": env_name, "value_from": {"secret_key_ref": {"name": credentials_secret_name(ref.name), "key": key}}}
        for ref in app.databases
        for key, env_name in ref.env_names().items()
    ]


def database_values_from(app: AppSpec) -> list[dict[str, Any]]:
    """Chart apps: each referenced database's credentials as Helm values (Flux `valuesFrom`).

    helm-controller reads the `db-<name>` Secret at every reconcile, so the values never pass
    through Pulumi or the HelmRelease; not optional, so a release waits for its credentials
    rather than installing without them.
    """
    return [
        {"kind": "Secret", "name": credentials_secret_name(ref.name), "valuesKey": key, "targetPath": path}
        for ref in app.databases
        for key, path in ref.value_paths().items()
    ]


def _flux_object(api_version: str, kind: str, name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "api_version": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
    }


def _secret_ref(secret: str | None) -> dict[str, Any]:
    return {"secretRef": {"name": secret}} if secret is not None else {}


@dataclass
class _Environment:
    """What every object of one tenant environment shares."""

    prefix: str
    namespace: str
    labels: dict[str, str]
    pool: str | None
    settings: DeliverySettings
    opts: pulumi.ResourceOptions
    # The tenant's workload identity account in this namespace, when it has one.
    workload_account: str | None = None


def _chart_source(env: _Environment, app: AppSpec, chart: ChartSource, repositories: dict[str, str]) -> dict[str, Any]:
    """Register the chart's source if needed; return the HelmRelease fields that point at it.

    OCI: an OCIRepository per app, pinned by tag (Flux's recommended way for OCI charts; the
    version bump is a change of that one field). HTTPS: one HelmRepository per repository and
    credentials in the namespace, shared by every app from it; the HelmRelease pins the version.
    """
    interval = env.settings.interval
    if is_oci(chart):
        k8s.apiextensions.CustomResource(
            f"{env.prefix}-app-{app.name}-chart",
            **_flux_object(SOURCE_API, "OCIRepository", app.name, env.namespace, env.labels),
            spec={
                "interval": interval,
                "url": chart_url(chart),
                "ref": {"tag": chart.version},
                "layerSelector": {"mediaType": _HELM_CHART_LAYER, "operation": "copy"},
                **_secret_ref(chart.secret),
            },
            opts=env.opts,
        )
        return {"chartRef": {"kind": "OCIRepository", "name": app.name}}
    key = f"{chart.repository} {chart.secret or ''}"
    if key not in repositories:
        repositories[key] = helm_repository_name(key)
        k8s.apiextensions.CustomResource(
            f"{env.prefix}-{repositories[key]}",
            **_flux_object(SOURCE_API, "HelmRepository", repositories[key], env.namespace, env.labels),
            spec={"interval": interval, "url": chart.repository, **_secret_ref(chart.secret)},
            opts=env.opts,
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


def _chart_app(env: _Environment, app: AppSpec, chart: ChartSource, repositories: dict[str, str]) -> None:
    """A HelmRelease that helm-controller reconciles as the tenant's deployer."""
    settings = env.settings
    spec: dict[str, Any] = {
        "interval": settings.interval,
        "releaseName": app.name,
        # Impersonation: the release can only do what the tenant's deployer may, in this namespace.
        "serviceAccountName": DEPLOYER_ACCOUNT,
        **_chart_source(env, app, chart, repositories),
        "install": {"remediation": {"retries": 3}},
        "upgrade": {"remediation": {"retries": 3, "remediateLastFailure": True}, "cleanupOnFail": True},
        # Autoscalers own replica counts; everything else the chart renders is kept as declared.
        "driftDetection": {"mode": settings.drift_detection, "ignore": [{"paths": ["/spec/replicas"]}]},
    }
    if app.databases:
        spec["valuesFrom"] = database_values_from(app)
    if app.values:
        spec["values"] = app.values
    # Pods run as the tenant's workload identity; the release itself is applied as the deployer.
    patches = pod_patches(env.pool, env.workload_account)
    if patches:
        spec["postRenderers"] = [{"kustomize": {"patches": patches}}]
    k8s.apiextensions.CustomResource(
        f"{env.prefix}-app-{app.name}",
        **_flux_object(HELM_RELEASE_API, "HelmRelease", app.name, env.namespace, env.labels),
        spec=spec,
        opts=env.opts,
    )


def _image_app(env: _Environment, app: AppSpec, image: ImageSource) -> None:
    """A Deployment that passes Pod Security `restricted`, on the tenant's pool (+ a Service)."""
    labels = {**env.labels, APP_NAME_KEY: app.name}
    container: dict[str, Any] = {
        "name": app.name,
        "image": image_reference(image),
        "security_context": {
            "allow_privilege_escalation": False,
            "capabilities": {"drop": ["ALL"]},
            "run_as_non_root": True,
            "seccomp_profile": {"type": "RuntimeDefault"},
        },
    }
    if image.port is not None:
        container["ports"] = [{"name": "http", "container_port": image.port, "protocol": "TCP"}]
    env_vars = [{"name": key, "value": value} for key, value in sorted(app.env.items())] + database_env(app)
    if env_vars:
        container["env"] = env_vars
    if app.secrets:
        container["volume_mounts"] = [
            {"name": f"secret-{index}", "mount_path": f"{SECRET_MOUNT_ROOT}/{secret}", "read_only": True}
            for index, secret in enumerate(app.secrets)
        ]
    if app.resources is not None:
        container["resources"] = app.resources.model_dump(exclude_none=True)
    pod: dict[str, Any] = {
        # With the tenant's identity the pod runs as `workload` and mounts its token: GKE
        # workload identity is reported to fail for pods without it (EKS injects a token of its
        # own either way), and `workload` holds no RBAC binding, so the token opens nothing in
        # the Kubernetes API. Without an identity: no token at all.
        "automount_service_account_token": env.workload_account is not None,
        "security_context": {"run_as_non_root": True, "seccomp_profile": {"type": "RuntimeDefault"}},
        "containers": [container],
    }
    if env.workload_account is not None:
        pod["service_account_name"] = env.workload_account
    if env.pool is not None:
        pod["node_selector"] = {NODE_POOL_KEY: env.pool}
        pod["tolerations"] = [
            {"key": NODE_POOL_KEY, "operator": "Equal", "value": env.pool, "effect": NODE_POOL_TAINT_EFFECT}
        ]
    if image.pull_secret is not None:
        pod["image_pull_secrets"] = [{"name": image.pull_secret}]
    if app.secrets:
        pod["volumes"] = [
            {"name": f"secret-{index}", "secret": {"secret_name": secret}} for index, secret in enumerate(app.secrets)
        ]
    metadata: k8s.meta.v1.ObjectMetaArgsDict = {"name": app.name, "namespace": env.namespace, "labels": labels}
    k8s.apps.v1.Deployment(
        f"{env.prefix}-app-{app.name}",
        metadata=metadata,
        spec={
            # No replica count: the API server starts at 1 and autoscalers own it from there;
            # ignore_changes keeps `pulumi up` from ever reverting what they set.
            "selector": {"match_labels": {APP_NAME_KEY: app.name}},
            "template": {"metadata": {"labels": labels}, "spec": cast(k8s.core.v1.PodSpecArgsDict, pod)},
        },
        opts=pulumi.ResourceOptions.merge(env.opts, pulumi.ResourceOptions(ignore_changes=["spec.replicas"])),
    )
    if image.port is not None:
        k8s.core.v1.Service(
            f"{env.prefix}-app-{app.name}-service",
            metadata=metadata,
            spec={
                "selector": {APP_NAME_KEY: app.name},
                "ports": [{"name": "http", "port": image.port, "target_port": "http", "protocol": "TCP"}],
                "type": "ClusterIP",
            },
            opts=env.opts,
        )


def _gitops(env: _Environment, environment: str, gitops: GitOpsSpec) -> dict[str, str]:
    """The tenant's repository and a Kustomization that applies one path of it as the deployer."""
    ref = {kind: value for kind in ("branch", "tag", "commit") if (value := getattr(gitops.ref, kind)) is not None}
    k8s.apiextensions.CustomResource(
        f"{env.prefix}-gitops-source",
        **_flux_object(SOURCE_API, "GitRepository", GITOPS_NAME, env.namespace, env.labels),
        spec={"interval": gitops.interval, "url": gitops.url, "ref": ref, **_secret_ref(gitops.secret)},
        opts=env.opts,
    )
    path = gitops_path(gitops, environment)
    spec: dict[str, Any] = {
        "interval": gitops.interval,
        "sourceRef": {"kind": "GitRepository", "name": GITOPS_NAME},
        "path": path,
        # Objects removed from the repository are removed from the namespace.
        "prune": True,
        # Impersonation: the repository can only change what the tenant's deployer may change.
        "serviceAccountName": DEPLOYER_ACCOUNT,
        # Every namespaced object lands in this namespace, whatever the repository says.
        "targetNamespace": env.namespace,
        "timeout": "5m",
    }
    # Placement only: the repository's own manifests choose their service account (`workload`).
    patches = pod_patches(env.pool)
    if patches:
        spec["patches"] = patches
    k8s.apiextensions.CustomResource(
        f"{env.prefix}-gitops",
        **_flux_object(KUSTOMIZE_API, "Kustomization", GITOPS_NAME, env.namespace, env.labels),
        spec=spec,
        opts=env.opts,
    )
    return {"url": gitops.url, "revision": gitops_revision(gitops), "path": path}


def build_delivery(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environment: EnvironmentResources,
    settings: DeliverySettings,
    workload_account: pulumi.Resource | None = None,
    depends_on: list[pulumi.Resource] | None = None,
) -> DeliveryResources:
    """Register one environment's apps and GitOps objects as children of `parent` (the Tenant).

    `workload_account` is the tenant's workload identity ServiceAccount in this namespace (None:
    the environment has none); app pods run as it. `depends_on` is the cluster's Flux
    installation when the stack installs it: Flux objects can only be created once its CRDs exist.
    """
    env_name = environment.environment
    env = _Environment(
        prefix=f"{name}-{env_name}",
        namespace=environment.namespace_name,
        labels=kubernetes_labels(spec.name, env_name),
        pool=spec.node_pool,
        settings=settings,
        workload_account=WORKLOAD_ACCOUNT if workload_account is not None else None,
        opts=pulumi.ResourceOptions(
            parent=parent,
            deleted_with=environment.namespace,
            # Pods that run as the workload account are created after it, not retried until it exists.
            depends_on=[
                environment.namespace,
                environment.deployer,
                *([workload_account] if workload_account is not None else []),
                *(depends_on or []),
            ],
        ),
    )
    result = DeliveryResources(env_name)
    repositories: dict[str, str] = {}
    for app in spec.in_environment(spec.apps, env_name):
        if app.chart is not None:
            _chart_app(env, app, app.chart, repositories)
            result.apps[app.name] = {"type": "chart", "source": chart_url(app.chart), "version": app.chart.version}
        elif app.image is not None:
            _image_app(env, app, app.image)
            result.apps[app.name] = {
                "type": "image",
                "source": app.image.repository,
                "version": image_version(app.image),
            }
    gitops = spec.gitops
    if gitops is not None and env_name in (gitops.environments or spec.environments):
        result.gitops = _gitops(env, env_name, gitops)
    return result
