"""Stack config model for the cluster admission policy bundle (`tenancy:policy`).

Everything here is cluster-wide: per-tenant data (authorized domains, node pool, groups) reaches
the policies through labels and annotations on each tenant Namespace, so adding a tenant never
changes a policy. What a stack decides is how hard each rule bites (the rollout switch), which
image registries are allowed, and who the platform itself is.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from components.model.core.fields import StrictModel
from components.model.settings.ingress_annotations import IngressAnnotationPolicy

# One action per rule, mapped to the binding's validationActions (Deny and Warn may not be
# combined there): Deny -> [Deny], Warn -> [Warn, Audit], Audit -> [Audit].
RuleAction = Literal["Deny", "Warn", "Audit"]

# `registry.example.com`, `registry.example.com:5000`, `ghcr.io/example`: a host with optional
# port and path prefix; no scheme, tag, digest or trailing slash.
_REGISTRY = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*$")


def _registry(value: str) -> str:
    if not _REGISTRY.match(value):
        raise ValueError(
            f"{value!r} is not an image registry prefix (for example registry.example.com, ghcr.io/example; "
            "no scheme, tag or trailing '/')"
        )
    return value


Registry = Annotated[str, AfterValidator(_registry)]
Identity = Annotated[str, Field(min_length=1, pattern=r"^[^\s',]+$")]
# A PriorityClass name: a DNS subdomain (written without `](` so the generated reference renders).
PriorityClassName = Annotated[str, Field(pattern=r"^[a-z0-9]+([.-]+[a-z0-9]+)*$", max_length=253)]


class RuleActions(StrictModel):
    """The rollout switch: what a violation of each rule does (Deny, Warn or Audit)."""

    # Hostnames of Ingresses, Gateway API routes and Certificates stay inside the tenant's domains, and Ingress
    # annotations inside the allow-list (rules/hostnames.py, certificates.py, ingress_annotations.py). `Deny`
    # refuses a violation, `Warn` admits it with a warning and an audit event, `Audit` only records it: roll a
    # rule out with Warn, then Deny.
    hostnames: RuleAction = "Deny"
    # No NodePort, ExternalName or externalIPs; LoadBalancer only for tenants with `allowLoadBalancer`
    # (rules/services.py).
    services: RuleAction = "Deny"
    # A tenant's pods select its node pool and tolerate no other pool's taint (rules/node_pool.py).
    node_pool: RuleAction = "Deny"
    # Workload hardening beside Pod Security `restricted`: no privileged or host access, memory limits,
    # `imagePullPolicy: Always`, allowed registries (rules/workloads.py).
    workloads: RuleAction = "Deny"
    # Only the platform's identities change the objects it manages in tenant namespaces
    # (rules/platform_owned.py).
    platform_owned: RuleAction = "Deny"
    # Bindings in tenant namespaces grant only the tenant roles, to the tenant's own groups (rules/rbac.py).
    rbac: RuleAction = "Deny"
    # No `spec.nodeName`, only allowed PriorityClasses, and PodDisruptionBudgets that let a pod go and
    # never overlap (rules/scheduling.py).
    scheduling: RuleAction = "Deny"
    # No service-account token Secrets, pod addresses, pre-bound volumes or writes to a virtual cluster's
    # kubeconfig Secret (rules/side_doors.py, vcluster_kubeconfig.py).
    side_doors: RuleAction = "Deny"
    # Tenant NetworkPolicies open paths only inside the namespace and to the egress granted
    # (rules/network_policies.py).
    network_policies: RuleAction = "Deny"
    # ExternalSecrets and PushSecrets in tenant namespaces use only a namespaced SecretStore
    # (rules/secret_stores.py).
    secret_stores: RuleAction = "Deny"
    # A suspended tenant's namespaces take nothing new that serves or reconciles (rules/suspension.py).
    suspension: RuleAction = "Deny"
    # A tenant's Flux objects act as its deployer, in its own namespace (rules/flux.py).
    flux: RuleAction = "Deny"
    # The preview identities write dry runs only (rules/preview_dry_run.py); Warn or Audit turn the guard off.
    preview_dry_run: RuleAction = "Deny"


class PlatformIdentities(StrictModel):
    """Who may change or delete the objects the platform owns in tenant namespaces.

    The identity `pulumi up` runs as must be here, or the platform locks itself out of its own
    quotas and bindings. The Kubernetes controllers that clean up a deleted namespace are always
    allowed (components/admission/rules/platform_owned.py), so they need not be listed.
    """

    # User names (as the API server sees them: `system:serviceaccount:<ns>:<name>`, or a cloud principal) that
    # may change platform-owned objects; the identity `pulumi up` runs as belongs here.
    users: list[Identity] = []
    # kind and kubeadm clusters give the admin kubeconfig `kubeadm:cluster-admins` (1.29+) or
    # `system:masters`; membership in system:masters skips authorization but not admission.
    groups: list[Identity] = ["system:masters", "kubeadm:cluster-admins"]


# The Kubernetes group of the CI preview identity's EKS access entry, bound to the preview ClusterRole
# (tools/ci/preview_identity.py PREVIEW_GROUP; tests/tools/test_preview_identity.py keeps them equal).
PREVIEW_GROUP = "tenancy-preview"


class PreviewIdentities(StrictModel):
    """Who runs `pulumi preview` and the drift check: dry runs only (docs/bootstrap.md#4-ci-identities).

    The preview ClusterRole grants `patch` because the Kubernetes provider previews with a
    server-side-apply dry run, and RBAC cannot tell a dry run from a real write. The
    `tenancy-preview-dry-run` policy (components/admission/rules/preview_dry_run.py) denies these
    identities every write that is not a dry run, and the rules that let the platform write its own
    objects let these identities dry-run the same writes.
    """

    # On GKE the preview service account is a user (its e-mail); EKS maps the preview role to the group.
    users: list[Identity] = []
    # Groups the preview identities carry (EKS: the group the preview role's access entry maps to);
    # the generated ClusterRoleBinding of deploy/identities binds the default.
    groups: list[Identity] = [PREVIEW_GROUP]


class PolicySettings(StrictModel):
    """How the admission policy bundle is rolled out in this stack."""

    # Render the admission policy bundle (ValidatingAdmissionPolicies and their bindings). Off only for a
    # throwaway stack or while debugging: tenants are then held by RBAC, quotas, Pod Security and network
    # policies alone.
    enabled: bool = True
    actions: RuleActions = RuleActions()
    # Image prefixes pods may pull from; empty allows any registry.
    allowed_registries: list[Registry] = []
    platform_identities: PlatformIdentities = PlatformIdentities()
    preview_identities: PreviewIdentities = PreviewIdentities()
    # Service accounts of data operators that bind a Role of their own in tenant namespaces
    # (CloudNativePG binds one to each Postgres cluster's instances), as request user names
    # (`system:serviceaccount:<namespace>:<name>`). Exempt from the RBAC rule and the
    # PodDisruptionBudget rule only (CloudNativePG writes a budget over each cluster's primary): no
    # tenant can act as them, and their own RBAC comes from their chart, not from a tenant.
    operator_identities: list[Identity] = []
    # External Secrets Operator's controller (its chart's service account, release
    # `external-secrets` in `tenancy:data.secretsOperatorNamespace`): the platform-owned rule lets it
    # add and remove its cleanup finalizer on the platform's ExternalSecrets, and nothing else
    # (components/admission/rules/platform_owned.py).
    secrets_operator_identity: Identity = "system:serviceaccount:external-secrets:external-secrets"
    # PriorityClasses tenant pods may name. Empty (the default): none, so every tenant pod runs at
    # the cluster default and none can preempt another tenant's pods on a shared pool. A class the
    # cluster marks globalDefault must be listed, because the Priority admission plugin writes its
    # name into pods that name none (before validating policies run).
    allowed_priority_classes: list[PriorityClassName] = []
    # Which ingress-controller annotations tenants may set (components/model/settings/ingress_annotations.py).
    ingress_annotations: IngressAnnotationPolicy = IngressAnnotationPolicy()
    # Where the cluster has MutatingAdmissionPolicy v1 (1.36+), inject each pod's node pool.
    inject_node_pool: bool = True
    # Every container must pull with `imagePullPolicy: Always`, so a pod cannot start a private
    # image another tenant's pull left on a shared node without the registry checking its
    # credentials (MTB-PL1-CC-DI-1). Turn off only where the nodes check credentials of cached
    # images themselves (kubelet KubeletEnsureSecretPulledImages) or every pool is a tenant's own.
    require_always_pull: bool = True

    @model_validator(mode="after")
    def _preview_is_not_the_platform(self) -> PolicySettings:
        """An identity in both lists could never write: the dry-run-only policy would deny `pulumi up`."""
        platform, preview = self.platform_identities, self.preview_identities
        shared = sorted({*platform.users} & {*preview.users}) + sorted({*platform.groups} & {*preview.groups})
        if shared:
            raise ValueError(
                f"previewIdentities and platformIdentities both name {', '.join(shared)}: preview identities "
                "may only dry-run (tenancy-preview-dry-run denies their writes), the platform must write"
            )
        return self
