"""Rule 8 (side doors), the virtual cluster's syncer account: only its own StatefulSet's pods run as it.

In a virtual-cluster environment the platform binds the syncer's Role (components/vcluster/rbac.py)
to the ServiceAccount `vcluster` of the host namespace: it writes pods, Services, Secrets (the
kubeconfig the Flux namespace trusts, rules/vcluster_kubeconfig.py) in the host namespace. Tenant
roles and the deployer may create pods there, so without this rule any pod naming
`serviceAccountName: vcluster` would get the syncer's token and write as the syncer.

A pod may run as the syncer's account only when the StatefulSet controller creates it for the
platform's vCluster: the request comes from kube-controller-manager's StatefulSet controller (with
or without --use-service-account-credentials) and the pod's controller owner is the StatefulSet
`vcluster` (the Helm release name, components/vcluster/values.py). Pods naming the account through
the deprecated `spec.serviceAccount` are judged the same way.

Issue 43, the syncer's own reach: the syncer may create pods, so without a limit a pod running as
`vcluster` could create a pod running as the namespace's `deployer` (its token automounted) and
gain the deployer's role. The pods the syncer writes run as the virtual cluster's workload account
(WORKLOAD_ACCOUNT, set on every synced pod by the syncer and bound to nothing), so that is the only
account a pod created by the namespace's syncer may name.

Issue 43, the control plane's template: the pod is the platform's only if nothing changes it after
the StatefulSet controller made it. A pod's container images are mutable (as are a few other spec
fields), and the deployer may update pods, so an UPDATE (or a patch, which arrives as one) of a pod
running as the syncer's account, and any `pods/ephemeralcontainers` write to it (a debug container
may mount the pod's token) or `pods/resize` (its resources: a starved control plane), must leave
`spec` as it was, whoever asks (but the platform's debug container and resize, red team round 7):
the controllers that update
the pod (the StatefulSet controller's identity labels and adoption, the garbage collector's owner
references) change its metadata only, and its kubelet writes `pods/status`. The StatefulSet and
everything it is made from are locked by rules/vcluster_release.py. And no pod runs as the
installer account helm-controller applies that release as (components/vcluster/values.py
INSTALLER_ACCOUNT): its rights are the deployer's, but its name is what those locks trust.
Nor does any other pod mount the control plane's claims `data-vcluster-<n>` (its datastore, and the
/data/pki it builds its certificate Secret from when that is absent): only a pod running as the
syncer, which the first rule keeps to the StatefulSet's own. Nor may a pod carry an `ephemeral`
volume whose claim would be one of them: the ephemeral volume controller names a pod's claim
`<pod>-<volume>` (k8s.io/component-helpers storage/ephemeral VolumeClaimName) and creates it from
the pod's template, so a pod `data` with a volume `vcluster-0` would have the controller create the
control plane's claim with the tenant's spec. The pod's name is known here even under
`generateName`: the API server generates it before validating admission (k8s.io/apiserver v0.36.3
registry/generic/registry/store.go `create`), and no generated name can make such a claim anyway
(five characters of `bcdfghjklmnpqrstvwxz2456789` would have to be `uster`).

Red team round 7, the pod's identity: the StatefulSet owns `vcluster-0` through its labels `app`
and `release` (its selector) and its controller owner reference. Drop either, by an UPDATE or
through `pods/status` (which keeps labels; podStatusStrategy restores only the spec and the owner
references), and the StatefulSet controller releases the pod and starts another `vcluster-0`: the
released one keeps running as the syncer, beside the new one, forever. So a pod running as the
syncer's account keeps those labels and that owner reference, whoever asks but the garbage
collector (which orphans it when its StatefulSet is deleted with `--cascade=orphan`), the namespace
controller and the platform. The platform may also debug (`pods/ephemeralcontainers`) or resize
the control plane pod: the lock on its spec is against the tenant's identities.

Red team round 8, the deployer's token: the syncer holds pods, `pods/exec`, `pods/attach` and
`pods/ephemeralcontainers` in its namespace (the chart's own Role does), and the UPDATE locks above
hold for the control plane pod only, so any pod running as `deployer` (its token mounted: a pod may
set `automountServiceAccountToken` whatever the account says) is the deployer's role for the syncer
through an image swap, a debug container or an exec. `deployer` is the name Flux impersonates, never
a pod's identity: nothing the platform renders runs a pod as it (charts run as the chart's own
account or `workload`, images as `workload` or `default`, repositories as what their manifests
name), so no pod may be created running as it, whoever asks. `spec.serviceAccountName` is immutable,
so the CREATE is the only request to judge; a rule on CONNECT requests could only go by pod names.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Validation,
    Variable,
    literal,
    literal_list,
    resource_rule,
)
from components.admission.rules.platform_owned import KUBERNETES_CONTROLLERS
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.vcluster.values import (
    CONTROL_PLANE_SELECTOR,
    DATA_CLAIM_PREFIX,
    INSTALLER_ACCOUNT,
    RELEASE_NAME,
    SYNCER_ACCOUNT,
    WORKLOAD_ACCOUNT,
)

# kube-controller-manager's StatefulSet controller, with and without --use-service-account-credentials.
STATEFULSET_CONTROLLER = [
    "system:serviceaccount:kube-system:statefulset-controller",
    "system:kube-controller-manager",
]


def _runs_as(var: str, account: str) -> str:
    """CEL: the pod `var` names `account` in spec.serviceAccountName or the deprecated spec.serviceAccount."""
    name = literal(account)
    spec = f"{var}.spec"
    return (
        f"(has({spec}.serviceAccountName) && {spec}.serviceAccountName == {name})"
        f" || (has({spec}.serviceAccount) && {spec}.serviceAccount == {name})"
    )


# The pod subresources the platform may use on the control plane pod (a debug container, a resize).
_PLATFORM_SUBRESOURCES = ["ephemeralcontainers", "resize"]


def _keeps_its_statefulset() -> str:
    """CEL: the UPDATE keeps the pod's selector labels (`app`, `release`) as they were and its
    controller owner reference, the two things the StatefulSet owns the pod by."""
    new_labels = "(has(object.metadata.labels) ? object.metadata.labels : {})"
    old_labels = "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})"
    new_owners = "(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : [])"
    old_owners = "(has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : [])"
    labels = literal_list(sorted(CONTROL_PLANE_SELECTOR))
    return (
        f"{labels}.all(k, !(k in {old_labels}) || (k in {new_labels} && {new_labels}[k] == {old_labels}[k]))"
        f" && {old_owners}.all(r, !(has(r.controller) && r.controller) || {new_owners}.exists(n, n == r))"
    )


def _control_plane_validations(create: str) -> list[Validation]:
    """Issue 43 (2b): no pod runs as the installer or (round 8) the deployer; the control plane pod's
    spec never changes, nor what its StatefulSet owns it by."""
    platform_subresource = (
        "variables.platform && has(request.subResource)"
        f" && request.subResource in {literal_list(_PLATFORM_SUBRESOURCES)}"
    )
    return [
        {
            "expression": f"!({create}) || !({_runs_as('object', INSTALLER_ACCOUNT)})",
            "message": f"no pod runs as the ServiceAccount {INSTALLER_ACCOUNT}: helm-controller applies the "
            "virtual cluster's release as it, and only the platform's release may",
            "reason": "Forbidden",
        },
        {
            # Red team round 8: the syncer may update, debug (ephemeral containers) and exec into any pod
            # of the namespace, so a pod running as the deployer is the deployer's role in the syncer's
            # hands. The account name is immutable, so refusing the CREATE is enough.
            "expression": f"!({create}) || !({_runs_as('object', DEPLOYER_ACCOUNT)})",
            "message": f"no pod runs as the ServiceAccount {DEPLOYER_ACCOUNT}: it is the name Flux impersonates "
            "to apply the tenant's repository and releases, never a pod's identity (its token in a pod would "
            "be the deployer's role for whoever may exec into, debug or update that pod); run pods as "
            "another account",
            "reason": "Forbidden",
        },
        {
            "expression": "request.operation != 'UPDATE' || !variables.wasSyncer || variables.platform"
            f" || variables.collectors || ({_keeps_its_statefulset()})",
            "message_expression": (
                "'pod ' + object.metadata.name + ' runs as the ServiceAccount "
                f"{SYNCER_ACCOUNT} (the virtual cluster\\'s control plane): its labels app and release and its "
                "controller owner reference stay as they are (without them the StatefulSet releases the pod and "
                "starts another control plane beside it; ' + request.userInfo.username + ' changed them"
                "' + (has(request.subResource) ? ' through ' + request.subResource : '') + ')'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "request.operation != 'UPDATE' || !variables.wasSyncer || object.spec == oldObject.spec"
            f" || ({platform_subresource})",
            "message_expression": (
                "'pod ' + object.metadata.name + ' runs as the ServiceAccount "
                f"{SYNCER_ACCOUNT} (the virtual cluster\\'s control plane): its spec is the platform\\'s "
                "StatefulSet template and may not change (' + request.userInfo.username + ' changed it"
                "' + (has(request.subResource) ? ' through ' + request.subResource : '') + ')'"
            ),
            "reason": "Forbidden",
        },
    ]


def _mounts_control_plane_volume() -> str:
    """CEL: the new pod mounts a claim of the control plane (`data-vcluster-<n>`): its datastore and the
    /data/pki the control plane reads at each start; or it has an ephemeral volume whose claim, named
    `<pod>-<volume>`, would be one of them."""
    claim = literal("^" + DATA_CLAIM_PREFIX + "[0-9]+$")
    name = "(has(object.metadata.name) ? object.metadata.name : '')"
    return (
        "has(object.spec.volumes) && object.spec.volumes.exists(v, (has(v.persistentVolumeClaim)"
        f" && v.persistentVolumeClaim.claimName.matches({claim}))"
        f" || (has(v.ephemeral) && ({name} + '-' + v.name).matches({claim})))"
    )


def _variables(users: list[str], groups: list[str]) -> list[Variable]:
    """Who the pod runs (and ran) as, and the identities that may change what its StatefulSet owns it by."""
    return [
        TENANT_VARIABLE,
        {"name": "asSyncer", "expression": _runs_as("object", SYNCER_ACCOUNT)},
        {
            "name": "wasSyncer",
            "expression": f"oldObject != null && ({_runs_as('oldObject', SYNCER_ACCOUNT)})",
        },
        {
            "name": "platform",
            "expression": f"request.userInfo.username in {literal_list(users)} || (has(request.userInfo.groups)"
            f" && request.userInfo.groups.exists(g, g in {literal_list(groups)}))",
        },
        {
            "name": "collectors",
            "expression": f"request.userInfo.username in {literal_list(KUBERNETES_CONTROLLERS)}",
        },
    ]


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    """The rule; `users` and `groups` are the platform identities (they may debug and resize the
    control plane pod, and change its labels and owners)."""
    account = literal(SYNCER_ACCOUNT)
    spec = "object.spec"
    create = "request.operation == 'CREATE'"
    owned = (
        "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, o.kind == 'StatefulSet'"
        f" && o.apiVersion.startsWith('apps/') && o.name == {literal(RELEASE_NAME)}"
        " && has(o.controller) && o.controller)"
    )
    workload = literal(WORKLOAD_ACCOUNT)
    by_syncer = f"request.userInfo.username == 'system:serviceaccount:' + request.namespace + ':' + {account}"
    as_workload = (
        f"has({spec}.serviceAccountName) && {spec}.serviceAccountName == {workload}"
        f" && (!has({spec}.serviceAccount) || {spec}.serviceAccount == {workload})"
    )
    by_statefulset_controller = f"request.userInfo.username in {literal_list(STATEFULSET_CONTROLLER)}"
    return [
        PolicyDefinition(
            name="tenancy-syncer-account",
            rule="side_doors",
            resource_rules=[
                resource_rule("", ["pods"], ["CREATE", "UPDATE"]),
                # The pod subresources whose registry keeps spec changes (k8s.io/kubernetes v1.36.3
                # pkg/registry/core/pod/strategy.go): ephemeral containers, and `resize` (containers'
                # resources and resize policy, and the pod's own resources). `status` restores the
                # spec (podStatusStrategy.PrepareForUpdate); `binding` sets the node of an unscheduled
                # pod and merges the Binding's metadata into it, but carries no pod spec for this rule to
                # read the account from (rules/pod_binding.py holds that metadata).
                resource_rule("", ["pods/ephemeralcontainers", "pods/resize"], ["UPDATE"]),
                # `status` keeps the request's labels (podStatusStrategy restores spec and owners only).
                resource_rule("", ["pods/status"], ["UPDATE"]),
            ],
            variables=_variables(users, groups),
            validations=[
                {
                    "expression": f"!({create}) || !variables.asSyncer || ({by_statefulset_controller} && {owned})",
                    "message": f"only the virtual cluster's own StatefulSet {RELEASE_NAME} runs pods as the "
                    f"ServiceAccount {SYNCER_ACCOUNT} (the syncer's rights); use another ServiceAccount",
                    "reason": "Forbidden",
                },
                {
                    "expression": f"!({create}) || !({by_syncer}) || ({as_workload})",
                    "message": f"the virtual cluster's syncer runs pods as the ServiceAccount {WORKLOAD_ACCOUNT} "
                    "only (the account its synced pods use, bound to nothing)",
                    "reason": "Forbidden",
                },
                {
                    "expression": f"!({create}) || !({_mounts_control_plane_volume()}) || variables.asSyncer",
                    "message": f"the claims data-{RELEASE_NAME}-<n> hold the virtual cluster's control plane (its "
                    "datastore and the keys it reads at each start): only its own pods mount them, and no pod's "
                    "ephemeral volume is named so that its claim (<pod>-<volume>) would be one of them",
                    "reason": "Forbidden",
                },
                *_control_plane_validations(create),
            ],
        )
    ]
