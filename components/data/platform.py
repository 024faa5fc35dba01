"""The cluster-wide data parts every tenant refers to, registered once by the platform stack."""

from __future__ import annotations

from typing import Any

import pulumi

from components.clouds.base import Guard
from components.clouds.protocol import Cloud
from components.model.labels import MANAGED_BY_VALUE


def build_platform_data(*, cloud: Cloud, protect: bool, opts: pulumi.ResourceOptions) -> dict[str, Any]:
    """Register what the cloud needs once per cluster (key ring, platform key, shared instances,
    the shared-secrets store) and return what tenants need from it, for the platform output."""
    guard = Guard(base=opts, protect=protect)
    # The platform's own cloud resources are costed to the platform, never to a tenant.
    labels = {"managed-by": MANAGED_BY_VALUE, "tenant": "platform", "cost-center": "platform"}
    return cloud.platform_data(guard=guard, labels=labels)
