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
`spec` as it was, whoever asks: the controllers that update
the pod (the StatefulSet controller's identity labels and adoption, the garbage collector's owner
references) change its metadata only, and its kubelet writes `pods/status`. The StatefulSet and
everything it is made from are locked by rules/vcluster_release.py. And no pod runs as the
installer account helm-controller applies that release as (components/vcluster/values.py
INSTALLER_ACCOUNT): its rights are the deployer's, but its name is what those locks trust.
Nor does any other pod mount the control plane's claims `data-vcluster-<n>` (its datastore, and the
/data/pki it builds its certificate Secret from when that is absent): only a pod running as the
syncer, which the first rule keeps to the StatefulSet's own.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Validation,
    literal,
    literal_list,
    resource_rule,
)
from components.vcluster.values import (
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


def _control_plane_validations(create: str) -> list[Validation]:
    """Issue 43 (2b): no pod runs as the installer; the control plane pod's spec never changes."""
    return [
        {
            "expression": f"!({create}) || !({_runs_as('object', INSTALLER_ACCOUNT)})",
            "message": f"no pod runs as the ServiceAccount {INSTALLER_ACCOUNT}: helm-controller applies the "
            "virtual cluster's release as it, and only the platform's release may",
            "reason": "Forbidden",
        },
        {
            "expression": "request.operation != 'UPDATE' || !variables.wasSyncer || object.spec == oldObject.spec",
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
    /data/pki the control plane reads at each start."""
    return (
        "has(object.spec.volumes) && object.spec.volumes.exists(v, has(v.persistentVolumeClaim)"
        f" && v.persistentVolumeClaim.claimName.matches({literal('^' + DATA_CLAIM_PREFIX + '[0-9]+$')}))"
    )


def policies() -> list[PolicyDefinition]:
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
                # pod only and carries no pod for this rule to read the account from.
                resource_rule("", ["pods/ephemeralcontainers", "pods/resize"], ["UPDATE"]),
            ],
            variables=[
                TENANT_VARIABLE,
                {"name": "asSyncer", "expression": _runs_as("object", SYNCER_ACCOUNT)},
                {
                    "name": "wasSyncer",
                    "expression": f"oldObject != null && ({_runs_as('oldObject', SYNCER_ACCOUNT)})",
                },
            ],
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
                    "datastore and the keys it reads at each start): only its own pods mount them",
                    "reason": "Forbidden",
                },
                *_control_plane_validations(create),
            ],
        )
    ]
