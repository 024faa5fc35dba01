"""The admission rules of the policy bundle, one module per rule (see components/admission/bundle.py)."""

from __future__ import annotations

from components.admission.base import PolicyDefinition
from components.admission.rules import (
    certificates,
    flux,
    gateway_parents,
    hostnames,
    ingress_annotations,
    network_policies,
    node_pool,
    platform_owned,
    rbac,
    scheduling,
    secret_stores,
    services,
    side_doors,
    suspension,
    vcluster_kubeconfig,
    workloads,
)
from components.model.admission import PolicySettings


def validating_policies(
    settings: PolicySettings,
    tenant_roles: list[str],
    storage_classes: list[str],
    gateway: tuple[str, str] | None = None,
) -> list[PolicyDefinition]:
    """Every validating rule for a stack's policy settings, tenant storage classes and platform Gateway
    (namespace, name; None without one), in a stable order."""
    identities = settings.platform_identities
    return [
        *hostnames.policies(),
        *gateway_parents.policies(gateway),
        *certificates.policies(),
        *ingress_annotations.policies(settings.ingress_annotations),
        *services.policies(),
        *node_pool.policies(),
        *workloads.policies(settings.allowed_registries, settings.require_always_pull),
        *platform_owned.policies(identities.users, identities.groups, settings.secrets_operator_identity),
        *rbac.policies(tenant_roles, settings.operator_identities, identities.users, identities.groups),
        *scheduling.policies(settings.allowed_priority_classes),
        *side_doors.policies(storage_classes),
        *network_policies.policies(),
        *secret_stores.policies(identities.users, identities.groups),
        *flux.policies(identities.users, identities.groups),
        *suspension.policies(identities.users, identities.groups),
        *vcluster_kubeconfig.policies(identities.users, identities.groups),
    ]


__all__ = ["PolicyDefinition", "validating_policies"]
