"""What a tenant's team needs to know about its data, collected while it is registered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.clouds.base import WORKLOAD_ACCOUNT


@dataclass
class TenantData:
    """What the tenant's team needs to know about its data (no secret values)."""

    databases: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    secrets: dict[str, list[str]] = field(default_factory=dict)
    # environment -> its own cloud principal (one identity per environment).
    identity: dict[str, pulumi.Output[str]] = field(default_factory=dict)
    # environment -> its `workload` ServiceAccount, where one exists: apps run as it, after it.
    workload_accounts: dict[str, pulumi.Resource] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {"databases": self.databases, "secrets": self.secrets}
        if self.identity:
            summary["identity"] = {"principal": self.identity, "serviceAccount": WORKLOAD_ACCOUNT}
        return summary
