"""Kustomize patches that hold every workload a chart or a repository renders to the tenant's pool.

The same patches serve HelmRelease post-renderers (charts.py) and GitOps Kustomizations
(gitops.py), so no chart or repository needs to know about node pools.
"""

from __future__ import annotations

import functools
from typing import Any

import yaml

from components.model.core.labels import NODE_POOL_KEY, NODE_POOL_TAINT_EFFECT


def pod_patches(pool: str | None, *, service_account: str | None = None) -> list[dict[str, Any]]:
    """Kustomize patches that put every workload of a chart or repository on the tenant's pool
    and, for charts, run it as the tenant's workload identity.

    Tolerations are replaced, not merged: a tenant's pods must tolerate their own pool's taint
    and no other (the policy bundle checks the same).

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
