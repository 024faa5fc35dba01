"""The control plane's claims `data-vcluster-<n>` in `tenancy-vcluster-control-plane`: who writes
them, and that no claim is made from them (rules/vcluster_release.py says why they are the platform's).

A claim whose `dataSource` or `dataSourceRef` names one of them is a copy of the control plane's
volume: its datastore (every Secret of the virtual cluster) and /data/pki (the CA and the keys it
signs with, from which anyone can mint the virtual cluster's admin). The outside red team of round 8
made one through the syncer: a virtual claim annotated `vcluster.loft.sh/skip-translate` keeps its
`dataSource` untranslated on the host (vCluster v0.20.0 pkg/controllers/resources/
persistentvolumeclaims/translate.go), and any virtual pod mounting it then reads the keys. So no
identity but the platform creates such a claim, whoever it is: the syncer, the deployer, or the
StatefulSet controller following a template of the tenant's that names the source.
"""

from __future__ import annotations

from components.admission.base import Validation, literal, literal_list
from components.admission.rules.syncer_account import STATEFULSET_CONTROLLER
from components.vcluster.values import DATA_CLAIM_PREFIX, RELEASE_NAME

# kube-controller-manager's volume binder, with --use-service-account-credentials: it sets a claim's
# spec.volumeName when it binds it (without the flag it is system:kube-controller-manager).
VOLUME_BINDER = "system:serviceaccount:kube-system:persistent-volume-binder"
# The control plane's claims: `data-vcluster-<ordinal>` (the prefix holds letters and `-` only, no
# regular-expression syntax).
DATA_CLAIM = f"^{DATA_CLAIM_PREFIX}[0-9]+$"


def clones_data_claim(var: str) -> str:
    """CEL: `var` is a claim made from one of the control plane's claims: its `dataSource` or
    `dataSourceRef` names `data-vcluster-<n>`, whatever group it gives (the two fields mirror each
    other after defaulting, both are read). The group is not compared: the API server serves an unset
    one as `apiGroup: null` (TypedLocalObjectReference's APIGroup has no omitempty), which a rule
    comparing it with '' read as another group and admitted live (the real run, 2026-11-29); a source
    of another group under that name is refused too, at no cost. The source is set at creation
    only: a claim's spec is immutable but for its size, volume name and attributes class
    (ValidatePersistentVolumeClaimUpdate), so a CREATE is the only request that can make a clone."""

    def names(field: str) -> str:
        ref = f"{var}.spec.{field}"
        return f"(has({ref}) && has({ref}.name) && {ref}.name.matches({literal(DATA_CLAIM)}))"

    return (
        f"({var} != null && request.resource.resource == 'persistentvolumeclaims' && has({var}.spec)"
        f" && ({names('dataSource')} || {names('dataSourceRef')}))"
    )


def _claim_writers() -> str:
    """CEL: who writes the control plane's claims beyond the platform and the collectors.

    The StatefulSet controller creates them from the template and sets their owner references for
    the retention policy (k8s.io/kubernetes v1.36.3 pkg/controller/statefulset stateful_pod_control.go:
    CreateClaim, UpdateClaim; it deletes none, the garbage collector does); the volume binder sets
    `spec.volumeName` when it binds. Any other update must leave the spec and the owner references
    as they were: the binder's, the scheduler's and the provisioner's bookkeeping annotations (whose
    identities vary per cloud) pass, a dangling owner (the garbage collector would delete the claim)
    or another volume does not.
    """
    spec_new = "(has(object.spec) ? object.spec : {})"
    spec_old = "(has(oldObject.spec) ? oldObject.spec : {})"
    owners_new = "(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : [])"
    owners_old = "(has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : [])"
    # It creates the claim without owners (stateful_set_utils.go getPersistentVolumeClaims) and adds
    # the retention owners by an update. The same user without --use-service-account-credentials
    # (system:kube-controller-manager) is the ephemeral volume controller too, whose claim of a pod
    # `data` with a volume `vcluster-0` would carry that pod as its controller: refused.
    statefulset_controller = (
        f"request.userInfo.username in {literal_list(STATEFULSET_CONTROLLER)}"
        " && (request.operation == 'UPDATE' || (request.operation == 'CREATE'"
        " && (!has(object.metadata.ownerReferences) || size(object.metadata.ownerReferences) == 0)))"
    )
    binder = f"request.userInfo.username == {literal(VOLUME_BINDER)} && request.operation == 'UPDATE'"
    bookkeeping = f"request.operation == 'UPDATE' && {spec_new} == {spec_old} && {owners_new} == {owners_old}"
    return f"({statefulset_controller}) || ({binder}) || ({bookkeeping})"


def claim_validations() -> list[Validation]:
    """The data claims' own writers (variables.claim), and no clone of them but the platform's
    (variables.clone)."""
    return [
        {
            # The collectors delete the claim and orphan it; only the StatefulSet controller creates it.
            "expression": "!variables.claim || variables.platform"
            f" || (variables.collectors && request.operation != 'CREATE') || ({_claim_writers()})",
            "message_expression": (
                "'PersistentVolumeClaim ' + request.name + ' is the virtual cluster\\'s control plane"
                f" volume (release {RELEASE_NAME}): only the StatefulSet controller creates it (with no owner"
                " references), and only the platform and the collectors delete it or change its spec or owners"
                " (' + request.userInfo.username + ' may not ' + request.operation.lowerAscii() + ' it); the name"
                " is reserved in tenant namespaces'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "!variables.clone || variables.platform",
            "message_expression": (
                "'PersistentVolumeClaim ' + request.name + ' would be made from the virtual cluster\\'s control"
                f" plane volume ({DATA_CLAIM_PREFIX}<n>, release {RELEASE_NAME}): a copy of its datastore and of"
                " the keys it signs with; only the platform clones it (' + request.userInfo.username + ' may not)'"
            ),
            "reason": "Forbidden",
        },
    ]
