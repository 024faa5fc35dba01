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
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, literal, literal_list, resource_rule
from components.vcluster.values import RELEASE_NAME, SYNCER_ACCOUNT, WORKLOAD_ACCOUNT

# kube-controller-manager's StatefulSet controller, with and without --use-service-account-credentials.
STATEFULSET_CONTROLLER = [
    "system:serviceaccount:kube-system:statefulset-controller",
    "system:kube-controller-manager",
]


def policies() -> list[PolicyDefinition]:
    account = literal(SYNCER_ACCOUNT)
    spec = "object.spec"
    as_syncer = (
        f"(has({spec}.serviceAccountName) && {spec}.serviceAccountName == {account})"
        f" || (has({spec}.serviceAccount) && {spec}.serviceAccount == {account})"
    )
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
    return [
        PolicyDefinition(
            name="tenancy-syncer-account",
            rule="side_doors",
            resource_rules=[resource_rule("", ["pods"], ["CREATE"])],
            variables=[TENANT_VARIABLE, {"name": "asSyncer", "expression": as_syncer}],
            validations=[
                {
                    "expression": f"!variables.asSyncer || (request.userInfo.username in "
                    f"{literal_list(STATEFULSET_CONTROLLER)} && {owned})",
                    "message": f"only the virtual cluster's own StatefulSet {RELEASE_NAME} runs pods as the "
                    f"ServiceAccount {SYNCER_ACCOUNT} (the syncer's rights); use another ServiceAccount",
                    "reason": "Forbidden",
                },
                {
                    "expression": f"!({by_syncer}) || ({as_workload})",
                    "message": f"the virtual cluster's syncer runs pods as the ServiceAccount {WORKLOAD_ACCOUNT} "
                    "only (the account its synced pods use, bound to nothing)",
                    "reason": "Forbidden",
                },
            ],
        )
    ]
