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
    pod_binding,
    preview_dry_run,
    rbac,
    scheduling,
    secret_stores,
    services,
    side_doors,
    suspension,
    syncer_account,
    vcluster_kubeconfig,
    vcluster_release,
    vcluster_selector,
    workloads,
)
from components.model.settings.admission import PolicySettings


def validating_policies(
    settings: PolicySettings,
    tenant_roles: list[str],
    storage_classes: list[str],
    gateway: tuple[str, str] | None = None,
    flux_namespace: str = "flux-system",
) -> list[PolicyDefinition]:
    """Every validating rule for a stack's policy settings, tenant storage classes, platform Gateway
    (namespace, name; None without one) and Flux namespace (whose helm-controller writes the virtual
    cluster's HelmChart), in a stable order.

    The rules the platform identities pass are not applied to a preview identity's dry runs
    (`preview_dry_run.as_platform`), so a preview is judged like the `pulumi up` it previews;
    `tenancy-preview-dry-run` refuses the preview identities every write that is not a dry run.
    """
    identities = settings.platform_identities
    preview = settings.preview_identities

    def as_platform(definitions: list[PolicyDefinition]) -> list[PolicyDefinition]:
        return preview_dry_run.as_platform(definitions, preview.users, preview.groups)

    def platform_passes(definition: PolicyDefinition) -> bool:
        # Of the suspension rule, only the Flux part exempts the platform (which renders the tenant file).
        return definition.name == suspension.FLUX_POLICY

    return [
        *hostnames.policies(),
        *gateway_parents.policies(gateway),
        *certificates.policies(),
        *ingress_annotations.policies(settings.ingress_annotations),
        *services.policies(),
        *node_pool.policies(),
        *workloads.policies(settings.allowed_registries, settings.require_always_pull),
        *as_platform(
            platform_owned.policies(
                identities.users, identities.groups, settings.secrets_operator_identity, flux_namespace
            )
        ),
        *as_platform(rbac.policies(tenant_roles, settings.operator_identities, identities.users, identities.groups)),
        *scheduling.policies(settings.allowed_priority_classes, settings.operator_identities),
        *side_doors.policies(storage_classes),
        *as_platform(pod_binding.policies(identities.users, identities.groups)),
        *network_policies.policies(),
        *as_platform(secret_stores.policies(identities.users, identities.groups)),
        *as_platform(flux.policies(identities.users, identities.groups)),
        *[
            as_platform([d])[0] if platform_passes(d) else d
            for d in suspension.policies(identities.users, identities.groups)
        ],
        *as_platform(vcluster_kubeconfig.policies(identities.users, identities.groups)),
        *as_platform(vcluster_release.policies(identities.users, identities.groups, flux_namespace)),
        *as_platform(syncer_account.policies(identities.users, identities.groups)),
        *as_platform(vcluster_selector.policies(identities.users, identities.groups)),
        *preview_dry_run.policies(preview.users, preview.groups),
    ]


__all__ = ["PolicyDefinition", "validating_policies"]
