"""Rule 5, platform-owned objects: only the platform changes what it manages in tenant namespaces.

Whatever the platform creates in tenant namespaces with `tenancy.io/platform-owned: "true"` (quota,
limit range, network policies, role bindings, shared-secret ExternalSecrets, SecurityGroupPolicies,
FQDNNetworkPolicies, a virtual cluster's bindings, and any kind rendered with the label later) is
locked by that label alone: the policy matches every resource of every group and the label is the
match condition, so no list of kinds can fall behind what is rendered. The tenant Namespace itself
(whose labels and annotations feed every other policy) is covered too. RBAC already keeps tenant
roles away from them; this is the second lock, against any identity that was granted more than it should (a cluster-wide
operator, a future role). Creating an object with the label is guarded as well, so nobody can
dress up an object as the platform's.

Allowed: the configured platform identities, plus the Kubernetes controllers that empty a
namespace being deleted and collect garbage (they must delete everything in it).

And one narrow door for External Secrets Operator (issue 24): from 0.20.1 on, its ExternalSecret
controller patches a cleanup finalizer onto every ExternalSecret before it syncs, and takes it off
when the object is deleted (external-secrets v2.9.0,
pkg/controllers/externalsecret/externalsecret_controller.go: `ExternalSecretFinalizer`,
`controllerutil.AddFinalizer` then `r.Patch`). Denying that patch keeps the platform's
shared-secret copies from ever syncing, and a namespace being deleted waits forever on the
finalizer. So the controller's own service account (`tenancy:policy.secretsOperatorIdentity`, which
no tenant can act as) may add or remove exactly that finalizer, changing nothing else.

The same door for Flux (red team round 8): the platform's GitOps GitRepository and Kustomization
`tenant-gitops` are platform-owned (a stray grant could repoint the source, or delete the
Kustomization and have Flux prune everything it applied), and the Flux controller of each object's
group (source-controller, kustomize-controller, helm-controller, in the stack's Flux namespace) may
add or remove `finalizers.fluxcd.io` on it, changing nothing else.
"""

from __future__ import annotations

from dataclasses import replace

from components.admission.base import PolicyDefinition, Validation, Variable, literal, literal_list, resource_rule
from components.model.core.labels import PLATFORM_OWNED_KEY, TENANT_KEY

_ALL = ["CREATE", "UPDATE", "DELETE"]
# external-secrets v2.9.0, pkg/controllers/externalsecret/externalsecret_controller.go.
ESO_FINALIZER = "externalsecrets.external-secrets.io/externalsecret-cleanup"

# Flux's finalizer, and the controller of each Flux group that adds and removes it (in the Flux namespace).
FLUX_FINALIZER = "finalizers.fluxcd.io"
FLUX_CONTROLLERS = {
    "source.toolkit.fluxcd.io": "source-controller",
    "kustomize.toolkit.fluxcd.io": "kustomize-controller",
    "helm.toolkit.fluxcd.io": "helm-controller",
}

# kube-controller-manager's namespace and garbage collectors, with and without
# --use-service-account-credentials.
KUBERNETES_CONTROLLERS = [
    "system:serviceaccount:kube-system:namespace-controller",
    "system:serviceaccount:kube-system:generic-garbage-collector",
    "system:kube-controller-manager",
]


# Every resource of every group (the label is the lock's only criterion). `*` names resources, not
# subresources (k8s.io/apiserver admission/plugin/policy/matching, rules.Matcher.resource: `*`
# matches a resource only, `*/*` a subresource too).
OWNED_KINDS = resource_rule("*", ["*"], _ALL)
# Issue 43: and every subresource UPDATE. Several registry strategies keep the labels and
# annotations a subresource request carries (k8s.io/kubernetes v1.36.3 pkg/registry/*/*/strategy.go,
# the status strategies' PrepareForUpdate: `resourcequotas/status` restores only the spec, and so do
# services, claims, workloads, budgets, ingresses; `namespaces/finalize` restores only the status).
# Validating admission sees the object after PrepareForUpdate (k8s.io/apiserver registry/generic/
# registry/store.go Update: BeforeUpdate, then the validating chain), so a subresource whose
# strategy resets metadata (custom resources' status, pods/ephemeralcontainers, pods/resize)
# arrives with the old labels and passes untouched.
OWNED_SUBRESOURCES = resource_rule("*", ["*/*"], ["UPDATE"])
# Who computes a ResourceQuota's status: kube-controller-manager's quota controller (with and without
# --use-service-account-credentials) and the API server's quota admission (its loopback user,
# k8s.io/apiserver pkg/authentication/user APIServerUser). `status.hard` is what quota admission
# enforces (k8s.io/apiserver pkg/admission/plugin/resourcequota/controller.go checkRequest reads
# `Status.Hard`), so a status written by anyone else raises the quota until the next resync.
QUOTA_STATUS_WRITERS = [
    "system:serviceaccount:kube-system:resourcequota-controller",
    "system:kube-controller-manager",
    "system:apiserver",
]


def _labelled(var: str) -> str:
    key = literal(PLATFORM_OWNED_KEY)
    return f"({var} != null && has({var}.metadata.labels) && {key} in {var}.metadata.labels)"


def _lock(name: str, users: list[str], groups: list[str]) -> PolicyDefinition:
    """A policy that only platform identities pass; resources and matching are set by the caller."""
    allowed_users = literal_list([*users, *KUBERNETES_CONTROLLERS])
    allowed_groups = literal_list(groups)
    return PolicyDefinition(
        name=name,
        rule="platform_owned",
        resource_rules=[],
        variables=[
            {
                "name": "platform",
                "expression": f"request.userInfo.username in {allowed_users} || (has(request.userInfo.groups)"
                f" && request.userInfo.groups.exists(g, g in {allowed_groups}))",
            }
        ],
        validations=[
            {
                "expression": "variables.platform",
                "message_expression": (
                    "request.kind.kind + ' ' + request.name + ' is managed by the tenancy platform; "
                    "change the tenant file instead (' + request.userInfo.username + ' may not ' "
                    "+ request.operation.lowerAscii() + ' it)'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def _same(field: str) -> str:
    """The metadata field is the same in the old and the new object (absent counts as empty)."""
    empty = "[]" if field in ("finalizers", "ownerReferences") else "{}"
    return (
        f"(has(object.metadata.{field}) ? object.metadata.{field} : {empty})"
        f" == (has(oldObject.metadata.{field}) ? oldObject.metadata.{field} : {empty})"
    )


def _finalizer_only(group: str, identity: str, finalizer: str) -> str:
    """An object of `group` whose finalizer `finalizer` the controller `identity` adds or removes, by a
    main-resource UPDATE that changes nothing else."""
    new = "(has(object.metadata.finalizers) ? object.metadata.finalizers : [])"
    old = "(has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : [])"
    own = literal(finalizer)
    return (
        f"request.operation == 'UPDATE' && request.resource.group == {literal(group)}"
        " && (!has(request.subResource) || request.subResource == '')"
        f" && request.userInfo.username == {literal(identity)}"
        " && (has(object.spec) ? object.spec : {}) == (has(oldObject.spec) ? oldObject.spec : {})"
        f" && {_same('labels')} && {_same('annotations')} && {_same('ownerReferences')}"
        f" && {new}.all(f, f in {old} || f == {own})"
        f" && {old}.all(f, f in {new} || f == {own})"
    )


def _flux_finalizers(flux_namespace: str) -> str:
    """Flux's controllers adding or removing `finalizers.fluxcd.io` on a platform-owned object of their
    own group (the GitOps GitRepository and Kustomization, components/delivery/gitops.py), changing
    nothing else. Each adds it before its first reconcile and removes it when the object is deleted,
    after kustomize-controller's prune (source-controller v1.8.5 gitrepository_controller.go,
    kustomize-controller v1.7.3 kustomization_controller.go: `controllerutil.AddFinalizer` and
    `RemoveFinalizer`, patched onto the object; their status goes to the `status` subresource, whose
    custom-resource strategy keeps the stored metadata). Refused, a Flux object never reconciles."""
    return " || ".join(
        f"({_finalizer_only(group, f'system:serviceaccount:{flux_namespace}:{controller}', FLUX_FINALIZER)})"
        for group, controller in sorted(FLUX_CONTROLLERS.items())
    )


def _status_write() -> str:
    """A subresource UPDATE that changes no label or annotation (the controllers' status writes),
    and on a ResourceQuota only from those who compute its status."""
    quota = literal_list(QUOTA_STATUS_WRITERS)
    return (
        f"has(request.subResource) && request.subResource != '' && {_same('labels')} && {_same('annotations')}"
        " && !(request.resource.group == '' && request.resource.resource == 'resourcequotas'"
        f" && !(request.userInfo.username in {quota}))"
    )


def policies(
    users: list[str], groups: list[str], secrets_operator: str | None = None, flux_namespace: str = "flux-system"
) -> list[PolicyDefinition]:
    objects = _lock("tenancy-platform-owned", users, groups)
    doors: list[Variable] = [
        {"name": "statusWrite", "expression": _status_write()},
        {"name": "fluxFinalizer", "expression": _flux_finalizers(flux_namespace)},
    ]
    if secrets_operator is not None:
        # ESO's finalizer patch (see the module docstring): one more way to pass, nothing else.
        doors.append(
            {
                "name": "esoFinalizer",
                "expression": _finalizer_only("external-secrets.io", secrets_operator, ESO_FINALIZER),
            }
        )
    validation: Validation = {
        **objects.validations[0],
        "expression": " || ".join(["variables.platform", *(f"variables.{d['name']}" for d in doors)]),
    }
    objects = replace(objects, variables=[*objects.variables, *doors], validations=[validation])
    objects = replace(
        objects,
        # Every kind: the label decides, not a list of kinds that falls behind what the platform
        # renders with it (issue 33: SecurityGroupPolicy and FQDNNetworkPolicy were missed); and
        # every subresource through which a label can change (issue 43).
        resource_rules=[OWNED_KINDS, OWNED_SUBRESOURCES],
        match_conditions=[
            {"name": "platform-owned", "expression": f"{_labelled('object')} || {_labelled('oldObject')}"}
        ],
    )
    # Tenant Namespaces are matched by their own tenant label through objectSelector, which the
    # API server applies to the old object as well: an UPDATE removing the label still matches.
    # (A namespaceSelector would not: for Namespace CREATE/UPDATE it reads the new object only.)
    # Its subresources too (issue 43): `namespaces/finalize` keeps the labels and annotations of the
    # request (its strategy restores only the status) and `namespaces/status` keeps them (only the
    # spec is restored), so a stray grant on either could drop the tenant label. The namespace
    # controller, the only legitimate writer of both, is among the Kubernetes controllers allowed.
    namespaces = replace(
        _lock("tenancy-platform-owned-namespaces", users, groups),
        resource_rules=[resource_rule("", ["namespaces", "namespaces/*"], _ALL)],
        object_selector={"match_expressions": [{"key": TENANT_KEY, "operator": "Exists"}]},
    )
    return [objects, namespaces]
