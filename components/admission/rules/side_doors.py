"""Rule 8, side doors to credentials, data and traffic: token Secrets, pod addresses, pre-bound volumes.

A Secret of type `kubernetes.io/service-account-token` makes the token controller write a token
that never expires for the named ServiceAccount (the deployer's, say) into a Secret the tenant
can read: a credential that outlives every rotation and removal. Workloads get short-lived
projected tokens without it, so tenants may not create such Secrets.

A PersistentVolumeClaim with `spec.volumeName` binds a PersistentVolume chosen by name, possibly
one released by another tenant (reclaim policy Retain) still holding its data; the PV controller
binds claims to volumes, so tenants may not set it (MTB "block use of existing PVs"). Unbound
claims may have `volumeName` set by UPDATE, so a newly set name is refused unless the PV binder
sets it. `dataSourceRef.namespace` (cross-namespace volume sources) would clone another
namespace's volume and is refused as well.

A pod's addresses in `status` are where Services send its traffic: the EndpointSlice controller
builds endpoints from `status.podIPs`. Whoever may update `pods/status` (the vCluster syncer's
account, which the deployer can run a pod as) could set another tenant's pod address there and
have the shared ingress controller, which every tenant admits, carry a tenant's Ingress to it (the
CVE-2021-25740 pattern through pod status). Only kubelets (`system:node:<name>`) may set or change
`podIP`, `podIPs`, `hostIP` and `hostIPs`; other status writes (conditions) stay possible.

A claim must also name one of the StorageClasses the platform renders with reclaim policy Delete
(components/platform/storage.py): a class with `Retain` would keep a released volume and its data
for anyone to bind, and a claim with no class at all binds any free PersistentVolume without one.
The DefaultStorageClass plugin (mutating, before this rule) fills in the default class first, so
a claim naming none passes where the stack makes a platform class the default.
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, Validation, literal_list, resource_rule

_WRITE = ["CREATE", "UPDATE"]
# kube-controller-manager's PV binder, with and without --use-service-account-credentials.
VOLUME_BINDERS = ["system:serviceaccount:kube-system:persistent-volume-binder", "system:kube-controller-manager"]


def token_secrets_policy() -> PolicyDefinition:
    return PolicyDefinition(
        name="tenancy-service-account-token-secrets",
        rule="side_doors",
        resource_rules=[resource_rule("", ["secrets"], _WRITE)],
        variables=[TENANT_VARIABLE],
        validations=[
            {
                "expression": "!has(object.type) || object.type != 'kubernetes.io/service-account-token'",
                "message_expression": (
                    "'Secret ' + object.metadata.name + ' is of type kubernetes.io/service-account-token, a token "
                    "that never expires; tenant ' + variables.tenant + ' uses projected (short-lived) tokens instead'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def _status_field(name: str, empty: str) -> tuple[str, str]:
    """CEL for one pod status field in the new and the old object, `empty` when absent."""
    return (
        f"has(object.status.{name}) ? object.status.{name} : {empty}",
        f"has(oldObject.status.{name}) ? oldObject.status.{name} : {empty}",
    )


def pod_status_policy() -> PolicyDefinition:
    fields = [("podIP", "''"), ("podIPs", "[]"), ("hostIP", "''"), ("hostIPs", "[]")]
    unchanged = " && ".join(
        f"(({new}) == ({old}))" for new, old in (_status_field(name, empty) for name, empty in fields)
    )
    return PolicyDefinition(
        name="tenancy-pod-status",
        rule="side_doors",
        resource_rules=[resource_rule("", ["pods/status"], ["UPDATE"])],
        variables=[TENANT_VARIABLE],
        validations=[
            {
                "expression": f"request.userInfo.username.startsWith('system:node:') || ({unchanged})",
                "message_expression": (
                    "'the addresses in the status of pod ' + object.metadata.name + ' (podIP, podIPs, hostIP, "
                    "hostIPs) are set by its kubelet only; tenant ' + variables.tenant + ' may not change them'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def _storage_class_check(classes: list[str]) -> Validation:
    """The claim's class is a platform class, or unchanged by an UPDATE (the field is immutable
    once set, so only claims older than the rule can carry another one)."""
    binders = literal_list(VOLUME_BINDERS)
    return {
        "expression": f"variables.storageClass in {literal_list(classes)}"
        " || (request.operation == 'UPDATE' && variables.storageClass == variables.oldStorageClass)"
        f" || request.userInfo.username in {binders}",
        "message_expression": (
            "'PersistentVolumeClaim ' + object.metadata.name + ' must set spec.storageClassName to a platform "
            f"class ({', '.join(classes)}), whose volumes are deleted with their claim; it names '"
            " + (variables.storageClass == '' ? 'none' : variables.storageClass)"
        ),
        "reason": "Forbidden",
    }


def volume_claims_policy(classes: list[str]) -> PolicyDefinition:
    old_name = "(oldObject != null && has(oldObject.spec.volumeName) ? oldObject.spec.volumeName : '')"
    return PolicyDefinition(
        name="tenancy-volume-claims",
        rule="side_doors",
        resource_rules=[resource_rule("", ["persistentvolumeclaims"], _WRITE)],
        variables=[
            TENANT_VARIABLE,
            {"name": "volumeName", "expression": "has(object.spec.volumeName) ? object.spec.volumeName : ''"},
            {
                "name": "storageClass",
                "expression": "has(object.spec.storageClassName) ? object.spec.storageClassName : ''",
            },
            {
                "name": "oldStorageClass",
                "expression": "oldObject != null && has(oldObject.spec.storageClassName)"
                " ? oldObject.spec.storageClassName : ''",
            },
        ],
        validations=[
            {
                "expression": f"variables.volumeName == '' || variables.volumeName == {old_name}"
                f" || request.userInfo.username in {literal_list(VOLUME_BINDERS)}",
                "message_expression": (
                    "'PersistentVolumeClaim ' + object.metadata.name + ' may not set spec.volumeName ('"
                    " + variables.volumeName + '): tenants get volumes through a StorageClass, never an existing "
                    "PersistentVolume'"
                ),
                "reason": "Forbidden",
            },
            {
                "expression": "!has(object.spec.dataSourceRef) || !has(object.spec.dataSourceRef.namespace)"
                " || object.spec.dataSourceRef.namespace == object.metadata.namespace",
                "message": "PersistentVolumeClaim spec.dataSourceRef may not name another namespace",
                "reason": "Forbidden",
            },
            _storage_class_check(classes),
        ],
    )


def policies(storage_classes: list[str]) -> list[PolicyDefinition]:
    return [token_secrets_policy(), pod_status_policy(), volume_claims_policy(storage_classes)]
