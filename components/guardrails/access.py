"""Who may do what in a tenant namespace: group bindings to the shared roles, and the deployer.

Every binding points at a ClusterRole the platform creates once (components/platform/roles.py), so
a tenant costs bindings, never copies of roles. In read-only environments every group is a viewer;
only the deployer (GitOps) writes there.
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_kubernetes as k8s

from components.model.tenant_file.spec import AccessSpec
from components.platform.roles import ROLE_NAMES

DEPLOYER_ACCOUNT = "deployer"
_RBAC_GROUP = "rbac.authorization.k8s.io"

Metadata = Callable[[str, dict[str, str]], k8s.meta.v1.ObjectMetaArgsDict]


def group_bindings(access: AccessSpec, read_only: bool) -> dict[str, list[str]]:
    """Role key -> groups. In read-only environments every group gets viewer, nothing more."""
    if read_only:
        everyone = list(dict.fromkeys(access.admin + access.operator + access.viewer))
        return {"viewer": everyone} if everyone else {}
    bindings = {"admin": access.admin, "operator": access.operator, "viewer": access.viewer}
    return {role: groups for role, groups in bindings.items() if groups}


def group_role_pairs(access: AccessSpec, read_only: bool) -> list[str]:
    """`<ClusterRole>=<group>` for every group binding rendered here; `tenancy-rbac` admits no other
    group binding in the namespace, so a stray writer cannot hand people more than the platform does
    (a write role in a read-only environment in particular). Role names hold no `=`, so the pair
    reads unambiguously whatever the group name."""
    bindings = group_bindings(access, read_only)
    return [f"{ROLE_NAMES[role]}={group}" for role, groups in bindings.items() for group in groups]


def register_access(
    prefix: str,
    *,
    access: AccessSpec,
    read_only: bool,
    ns_name: str,
    metadata: Metadata,
    labels: dict[str, str],
    owned_labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.ServiceAccount:
    """The group RoleBindings, the deployer ServiceAccount and its binding; returns the deployer."""
    for role, groups in group_bindings(access, read_only).items():
        k8s.rbac.v1.RoleBinding(
            f"{prefix}-{role}",
            metadata=metadata(f"tenancy-{role}", owned_labels),
            role_ref={"api_group": _RBAC_GROUP, "kind": "ClusterRole", "name": ROLE_NAMES[role]},
            subjects=[{"kind": "Group", "api_group": _RBAC_GROUP, "name": group} for group in groups],
            opts=opts,
        )
    deployer = k8s.core.v1.ServiceAccount(
        f"{prefix}-deployer",
        metadata=metadata(DEPLOYER_ACCOUNT, labels),
        # No token in every pod that runs as this account; GitOps impersonates it instead.
        automount_service_account_token=False,
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        f"{prefix}-deployer-binding",
        metadata=metadata("tenancy-deployer", owned_labels),
        role_ref={"api_group": _RBAC_GROUP, "kind": "ClusterRole", "name": ROLE_NAMES["deployer"]},
        subjects=[{"kind": "ServiceAccount", "name": DEPLOYER_ACCOUNT, "namespace": ns_name}],
        opts=opts,
    )
    return deployer
