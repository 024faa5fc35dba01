"""Where one tenant environment's data goes and how it is registered, decided once per environment."""

from __future__ import annotations

from dataclasses import dataclass

from components.clouds.base import DeliveryTarget, Guard, InNamespace, TenantIdentity


@dataclass(frozen=True)
class EnvironmentScope:
    """One tenant environment, as every data builder needs it."""

    tenant: str
    environment: str
    # Child resource name prefix, e.g. `acme-prod`.
    prefix: str
    namespace: str
    # The namespace, as objects inside it are registered, when it is registered; else None.
    namespace_resource: InNamespace | None
    # Cost labels for cloud resources, Kubernetes labels for objects in the cluster.
    labels: dict[str, str]
    kubernetes_labels: dict[str, str]
    identity: TenantIdentity
    guard: Guard
    # The namespace secrets are delivered into; None once the environment is gone (released data).
    delivery: DeliveryTarget | None
