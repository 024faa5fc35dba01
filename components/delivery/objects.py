"""What every Flux object and workload of one tenant environment shares.

The chart, image and GitOps parts (charts.py, images.py, gitops.py) each register a few objects
into the same namespace with the same labels, placement and options; this module is that shared
shape, so the parts never import each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.model.core.labels import PLATFORM_OWNED_KEY

SOURCE_API = "source.toolkit.fluxcd.io/v1"
# Tenant workloads and the Flux objects whose readiness depends on the tenant's own sources are not
# awaited by `pulumi up`: one tenant's broken image, chart or repository must not fail (or hold for
# ten minutes) the update of every other tenant. The platform's own objects (namespaces, guard
# rails, admission policy, the Helm releases of Flux and the operators) stay awaited.
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}


@dataclass
class DeliveryTarget:
    """Where one environment's delivery objects go and what they all carry."""

    # `<tenant resource name>-<environment>`: every child's Pulumi name starts with it.
    prefix: str
    namespace: str
    labels: dict[str, str]
    # The tenant's node pool (None: the tenant has no dedicated pool).
    pool: str | None
    opts: pulumi.ResourceOptions
    # The tenant's workload identity account in this namespace, when it has one.
    workload_account: str | None = None
    # The Secret (name, key) holding the kubeconfig of the environment's virtual cluster, when GitOps
    # applies there instead of into the namespace (components/vcluster/).
    gitops_kubeconfig: tuple[str, str] | None = None
    # The tenant is suspended (components/lifecycle.py): Flux objects stop, image apps scale to zero.
    suspended: bool = False
    # The environment and the stack's domain suffix: hostname templates in chart values resolve to them.
    environment: str = ""
    domain_suffix: str = ""


def flux_object(
    api_version: str, kind: str, name: str, *, target: DeliveryTarget, owned: bool = False
) -> dict[str, Any]:
    """The `api_version`, `kind` and `metadata` arguments of a Flux custom resource in the namespace;
    `owned` labels it platform-owned (the platform-owned lock, components/admission/rules/platform_owned.py)."""
    labels = {**target.labels, PLATFORM_OWNED_KEY: "true"} if owned else target.labels
    return {
        "api_version": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": target.namespace, "labels": labels, "annotations": SKIP_AWAIT},
    }


def suspension(target: DeliveryTarget) -> dict[str, Any]:
    """`suspend: true` for a Flux object's spec while the tenant is suspended; nothing otherwise,
    so resuming renders exactly the spec the object had before (Flux resumes from there)."""
    return {"suspend": True} if target.suspended else {}


def secret_ref(secret: str | None) -> dict[str, Any]:
    """A source's `secretRef` when it names credentials; nothing when it is public."""
    return {"secretRef": {"name": secret}} if secret is not None else {}
