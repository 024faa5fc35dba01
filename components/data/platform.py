"""The cluster-wide data parts every tenant refers to, registered once by the platform stack."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pulumi

from components.clouds.base import Guard
from components.clouds.protocol import Cloud
from components.lifecycle import state_of
from components.model.core.labels import MANAGED_BY_VALUE, namespace_name
from components.model.tenant_file.spec import TenantSpec


def shared_secret_namespaces(specs: Iterable[TenantSpec]) -> list[str]:
    """The namespaces entitled to shared secrets: every environment namespace of each tenant whose
    file lists `sharedSecrets` and whose lifecycle keeps its namespaces. Computed from all tenants
    of the stack (the catalog), so a platform stack of a split deployment knows them too."""
    return sorted(
        namespace_name(spec.name, environment)
        for spec in specs
        if spec.shared_secrets and state_of(spec.lifecycle).environments
        for environment in spec.environments
    )


def build_platform_data(
    *, cloud: Cloud, protect: bool, opts: pulumi.ResourceOptions, tenants: Iterable[TenantSpec]
) -> dict[str, Any]:
    """Register what the cloud needs once per cluster (key ring, platform key, shared instances,
    the shared-secrets store admitting only the entitled namespaces of `tenants`) and return what
    tenants need from it, for the platform output."""
    guard = Guard(base=opts, protect=protect)
    # The platform's own cloud resources are costed to the platform, never to a tenant.
    labels = {"managed-by": MANAGED_BY_VALUE, "tenant": "platform", "cost-center": "platform"}
    return cloud.platform_data(guard=guard, labels=labels, shared_namespaces=shared_secret_namespaces(tenants))
