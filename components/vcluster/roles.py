"""The three ClusterRoles every virtual cluster binds in its host namespace, created once per cluster.

Shared roles rather than a Role per namespace (ADR 0006): three objects per cluster instead of three per
virtual cluster, and the RoleBinding that grants them is what scopes them to one namespace.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.model.core.labels import platform_labels
from components.vcluster.rbac import ROLE_RULES


class VirtualClusterRoles(pulumi.ComponentResource):
    """The syncer, access and installer ClusterRoles (`tenancy:index:VirtualClusterRoles`)."""

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:VirtualClusterRoles", name, None, opts)
        for role, rules in ROLE_RULES.items():
            k8s.rbac.v1.ClusterRole(
                f"{name}-{role.removeprefix('tenancy-vcluster-')}",
                metadata={"name": role, "labels": platform_labels()},
                rules=rules(),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({"roles": sorted(ROLE_RULES)})
