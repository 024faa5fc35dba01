"""Image apps: a Deployment that passes Pod Security `restricted`, on the tenant's pool, plus a
Service when the app has a port.

Pulumi applies these directly (there is no chart to render): the container image, env, mounted
secrets and database credentials are fields of the Deployment, never objects of their own.
"""

from __future__ import annotations

from typing import Any, cast

import pulumi_kubernetes as k8s

from components.delivery.objects import SKIP_AWAIT, DeliveryTarget
from components.model.core.labels import APP_NAME_KEY, NODE_POOL_KEY, NODE_POOL_TAINT_EFFECT
from components.model.tenant_file.apps import AppSpec, ImageSource
from components.model.tenant_file.data import credentials_secret_name

SECRET_MOUNT_ROOT = "/var/run/secrets/tenancy"
# pulumi-kubernetes: force a server-side apply over field-manager conflicts for this object.
_PATCH_FORCE = "pulumi.com/patchForce"


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


def database_env(app: AppSpec) -> list[dict[str, Any]]:
    """Each referenced database's credentials as `DB_<NAME>_<KEY>` variables.

    One `secretKeyRef` per key rather than `envFrom` with a prefix: the names stay upper case
    (`envFrom` keeps the Secret's lower-case keys), and only these five keys reach the app
    (a local MySQL credentials Secret also holds the root password).
    """
    return [
        {"name": env_name, "value_from": {"secret_key_ref": {"name": credentials_secret_name(ref.name), "key": key}}}
        for ref in app.databases
        for key, env_name in ref.env_names().items()
    ]


def container(app: AppSpec, image: ImageSource) -> dict[str, Any]:
    """The app's one container: restricted security context, env, secret mounts and resources."""
    spec: dict[str, Any] = {
        "name": app.name,
        "image": image_reference(image),
        # Always, so the registry checks the pull secret on every start (the workloads rule
        # requires it by default; see docs/multi-tenancy-benchmark.md, MTB-PL1-CC-DI-1).
        "image_pull_policy": "Always",
        "security_context": {
            "allow_privilege_escalation": False,
            "capabilities": {"drop": ["ALL"]},
            "run_as_non_root": True,
            "seccomp_profile": {"type": "RuntimeDefault"},
        },
    }
    if image.port is not None:
        spec["ports"] = [{"name": "http", "container_port": image.port, "protocol": "TCP"}]
    env_vars = [{"name": key, "value": value} for key, value in sorted(app.env.items())] + database_env(app)
    if env_vars:
        spec["env"] = env_vars
    if app.secrets:
        spec["volume_mounts"] = [
            {"name": f"secret-{index}", "mount_path": f"{SECRET_MOUNT_ROOT}/{secret}", "read_only": True}
            for index, secret in enumerate(app.secrets)
        ]
    if app.resources is not None:
        spec["resources"] = app.resources.model_dump(exclude_none=True)
    return spec


def pod_spec(target: DeliveryTarget, *, app: AppSpec, image: ImageSource) -> dict[str, Any]:
    """The pod: the tenant's identity (if any), its pool, pull secret and secret volumes."""
    pod: dict[str, Any] = {
        # With the tenant's identity the pod runs as `workload` and mounts its token: GKE
        # workload identity is reported to fail for pods without it (EKS injects a token of its
        # own either way), and `workload` holds no RBAC binding, so the token opens nothing in
        # the Kubernetes API. Without an identity: no token at all.
        "automount_service_account_token": target.workload_account is not None,
        "security_context": {"run_as_non_root": True, "seccomp_profile": {"type": "RuntimeDefault"}},
        "containers": [container(app, image)],
    }
    if target.workload_account is not None:
        pod["service_account_name"] = target.workload_account
    if target.pool is not None:
        pod["node_selector"] = {NODE_POOL_KEY: target.pool}
        pod["tolerations"] = [
            {"key": NODE_POOL_KEY, "operator": "Equal", "value": target.pool, "effect": NODE_POOL_TAINT_EFFECT}
        ]
    if image.pull_secret is not None:
        pod["image_pull_secrets"] = [{"name": image.pull_secret}]
    if app.secrets:
        pod["volumes"] = [
            {"name": f"secret-{index}", "secret": {"secret_name": secret}} for index, secret in enumerate(app.secrets)
        ]
    return pod


def suspended_replicas(target: DeliveryTarget) -> dict[str, Any]:
    """`replicas: 0` while the tenant is suspended; no replica count otherwise.

    Without a count the API server starts at 1 and autoscalers own the field from there: with
    server-side apply (components/platform/providers.py) Pulumi never owns a field it does not
    declare, so `pulumi up` never reverts what they set. That is also why there is no
    `ignore_changes` on it: Pulumi would copy the suspended 0 into every later update and a resumed
    app would stay at zero. Resuming drops the field again, the API server resets it to its default
    of 1, and autoscalers take over as after a first deployment.
    """
    return {"replicas": 0} if target.suspended else {}


def deployment_metadata(
    target: DeliveryTarget, metadata: k8s.meta.v1.ObjectMetaArgsDict
) -> k8s.meta.v1.ObjectMetaArgsDict:
    """While suspended, the Deployment's apply takes `replicas` over from an autoscaler that owns it
    (`pulumi.com/patchForce`), instead of failing on the field-manager conflict."""
    if not target.suspended:
        return metadata
    # Not awaited either way (objects.py); the apply may also take the replica count over.
    return {**metadata, "annotations": {**SKIP_AWAIT, _PATCH_FORCE: "true"}}


def register_image_app(target: DeliveryTarget, *, app: AppSpec, image: ImageSource) -> None:
    """Register the app's Deployment, and its ClusterIP Service when the image has a port."""
    labels = {**target.labels, APP_NAME_KEY: app.name}
    # Not awaited (objects.py): a broken app leaves the other tenants' `up` applied.
    metadata: k8s.meta.v1.ObjectMetaArgsDict = {
        "name": app.name,
        "namespace": target.namespace,
        "labels": labels,
        "annotations": SKIP_AWAIT,
    }
    pod = pod_spec(target, app=app, image=image)
    k8s.apps.v1.Deployment(
        f"{target.prefix}-app-{app.name}",
        metadata=deployment_metadata(target, metadata),
        spec=cast(
            k8s.apps.v1.DeploymentSpecArgsDict,
            {
                "selector": {"match_labels": {APP_NAME_KEY: app.name}},
                "template": {"metadata": {"labels": labels}, "spec": cast(k8s.core.v1.PodSpecArgsDict, pod)},
                **suspended_replicas(target),
            },
        ),
        opts=target.opts,
    )
    if image.port is not None:
        k8s.core.v1.Service(
            f"{target.prefix}-app-{app.name}-service",
            metadata=metadata,
            spec={
                "selector": {APP_NAME_KEY: app.name},
                "ports": [{"name": "http", "port": image.port, "target_port": "http", "protocol": "TCP"}],
                "type": "ClusterIP",
            },
            opts=target.opts,
        )
