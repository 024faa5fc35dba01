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
    # environment -> its key (KMS key id or ARN) on the clouds; empty on local.
    keys: dict[str, pulumi.Output[str]] = field(default_factory=dict)
    # environment -> its `workload` ServiceAccount, where one exists: apps run as it, after it.
    workload_accounts: dict[str, pulumi.Resource] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Databases (where to connect), secrets by environment and the workload identity."""
        summary: dict[str, Any] = {"databases": self.databases, "secrets": self.secrets}
        if self.identity:
            summary["identity"] = {"principal": self.identity, "serviceAccount": WORKLOAD_ACCOUNT}
        return summary

    def retained(self, namespaces: list[str]) -> dict[str, Any]:
        """What a decommissioned tenant leaves in the cloud and cluster until it is deleted by hand
        (docs/operations.md): its databases with their instances, secrets, key and the namespaces
        kept for the data in them. The cloud's names of instances and keys are known only once
        created, so they come from here rather than from the plan (`tenancy offboard`)."""
        retained: dict[str, Any] = {}
        if self.databases:
            retained["databases"] = self.databases
        if self.secrets:
            retained["secrets"] = self.secrets
        if self.keys:
            retained["keys"] = self.keys
        if namespaces:
            retained["namespaces"] = namespaces
        return retained
