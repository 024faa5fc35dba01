"""Where one tenant environment's data goes and how it is registered, decided once per environment."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.clouds.base import DeliveryTarget, Guard, TenantIdentity


@dataclass(frozen=True)
class EnvironmentScope:
    """One tenant environment, as every data builder needs it."""

    tenant: str
    environment: str
    # Child resource name prefix, e.g. `acme-prod`.
    prefix: str
    namespace: str
    # The namespace resource when it is registered (in-cluster data goes with it); else None.
    namespace_resource: pulumi.Resource | None
    # Cost labels for cloud resources, Kubernetes labels for objects in the cluster.
    labels: dict[str, str]
    kubernetes_labels: dict[str, str]
    identity: TenantIdentity
    guard: Guard
    # The namespace secrets are delivered into; None once the environment is gone (released data).
    delivery: DeliveryTarget | None
