"""Rule 5 (platform-owned), the control plane's labels: `tenancy-vcluster-selector`.

Two things find the virtual cluster's control plane by its pod's labels: the Service `vcluster`
selects `app: vcluster, release: vcluster` (vCluster v0.20.0 chart/templates/service.yaml), and it
is the address of the exported kubeconfig, of the platform's GitOps Kustomization into the virtual
cluster and, through the virtual `kubernetes` Service that takes its ClusterIP, of every virtual
workload with its token; the platform's NetworkPolicy `tenancy-vcluster` selects
`tenancy.io/vcluster-control-plane` (components/vcluster/objects.py), opening Flux in and the host
API server out. Round 7 locked the Service's spec, but the outside red team of round 8 created
another pod carrying those labels: the endpoint controllers add it to the Service, which then sends
a share of those clients (bearer tokens included, and the deployer reads the serving key) to the
tenant's pod.

So the labels are reserved: a pod, a `pods/status` write (which keeps the request's labels,
k8s.io/kubernetes v1.36.3 podStatusStrategy) or a workload's pod template that carries both selector
labels, or the control plane key, is refused unless it is the StatefulSet `vcluster`'s own: the
StatefulSet as the platform's release renders it (applied as the installer), and its pods as the
StatefulSet controller creates them (owned by that StatefulSet as controller). An UPDATE that leaves
those labels as they were passes (the kubelet's status, the StatefulSet controller's identity labels
and owner references, the garbage collector orphaning a pod), and so does the platform.
`pods/binding` writes labels too; rules/pod_binding.py admits none but the topology labels.
"""

from __future__ import annotations

from components.admission.base import PolicyDefinition, Variable, literal, literal_list, resource_rule
from components.admission.rules.scheduling import TEMPLATED, pod_labels
from components.admission.rules.syncer_account import STATEFULSET_CONTROLLER
from components.admission.rules.vcluster_cel import platform_identity, service_account
from components.vcluster.objects import CONTROL_PLANE_KEY
from components.vcluster.values import (
    CONTROL_PLANE_SELECTOR,
    CONTROL_PLANE_SERVICE,
    CONTROL_PLANE_STATEFULSET,
    INSTALLER_ACCOUNT,
    RELEASE_NAME,
)

SELECTOR_POLICY = "tenancy-vcluster-selector"
_WRITE = ["CREATE", "UPDATE"]
# Every label key the reservation reads, in a stable order.
_KEYS = sorted([*CONTROL_PLANE_SELECTOR, CONTROL_PLANE_KEY])


def _reserved(labels: str) -> str:
    """CEL: the label map `labels` is selected by the Service `vcluster` or carries the control plane key."""
    selected = " && ".join(
        f"{literal(key)} in {labels} && {labels}[{literal(key)}] == {literal(value)}"
        for key, value in sorted(CONTROL_PLANE_SELECTOR.items())
    )
    return f"(({selected}) || {literal(CONTROL_PLANE_KEY)} in {labels})"


def _own() -> str:
    """CEL: the StatefulSet `vcluster`'s own: its pods as the StatefulSet controller creates them, and the
    StatefulSet itself as the installer applies it."""
    pod = (
        f"request.resource.resource == 'pods' && request.operation == 'CREATE'"
        f" && request.userInfo.username in {literal_list(STATEFULSET_CONTROLLER)}"
        " && has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, o.kind == 'StatefulSet'"
        f" && o.apiVersion.startsWith('apps/') && o.name == {literal(CONTROL_PLANE_STATEFULSET)}"
        " && has(o.controller) && o.controller)"
    )
    statefulset = (
        "request.resource.resource == 'statefulsets'"
        f" && request.userInfo.username == {service_account(INSTALLER_ACCOUNT)}"
        f" && object.metadata.name == {literal(CONTROL_PLANE_STATEFULSET)}"
        " && (!has(request.subResource) || request.subResource == '')"
    )
    return f"({pod}) || ({statefulset})"


def _variables(users: list[str], groups: list[str]) -> list[Variable]:
    keys = literal_list(_KEYS)
    return [
        {"name": "labels", "expression": pod_labels("object")},
        {"name": "oldLabels", "expression": f"oldObject == null ? {{}} : ({pod_labels('oldObject')})"},
        {"name": "reserved", "expression": _reserved("variables.labels")},
        # The reserved keys with their values, to tell an UPDATE that leaves them as they were.
        {
            "name": "pairs",
            "expression": f"{keys}.filter(k, k in variables.labels).map(k, k + '=' + variables.labels[k])",
        },
        {
            "name": "oldPairs",
            "expression": f"{keys}.filter(k, k in variables.oldLabels).map(k, k + '=' + variables.oldLabels[k])",
        },
        {"name": "platform", "expression": platform_identity(users, groups)},
    ]


def selector_policy(users: list[str], groups: list[str]) -> PolicyDefinition:
    """`tenancy-vcluster-selector`: only the control plane's own pods carry its labels."""
    selector = ", ".join(f"{key}={value}" for key, value in sorted(CONTROL_PLANE_SELECTOR.items()))
    return PolicyDefinition(
        name=SELECTOR_POLICY,
        rule="platform_owned",
        resource_rules=[
            resource_rule("", ["pods"], _WRITE),
            # pods/status keeps the request's labels (podStatusStrategy restores the spec and owners only).
            resource_rule("", ["pods/status"], ["UPDATE"]),
            *(resource_rule(group, resources, _WRITE) for group, resources in TEMPLATED),
            resource_rule("batch", ["cronjobs"], _WRITE),
        ],
        variables=_variables(users, groups),
        validations=[
            {
                "expression": "!variables.reserved || variables.platform || ("
                + _own()
                + ") || (request.operation == 'UPDATE' && variables.pairs == variables.oldPairs)",
                "message_expression": (
                    f"request.kind.kind + ' ' + object.metadata.name + ' carries the labels of the virtual cluster\\'s"
                    f" control plane (' + variables.pairs.join(', ') + '): Service {CONTROL_PLANE_SERVICE} selects"
                    f" {selector} and its NetworkPolicy {CONTROL_PLANE_KEY}; only the pods of the StatefulSet"
                    f" {CONTROL_PLANE_STATEFULSET} (release {RELEASE_NAME}) carry them (' + request.userInfo.username"
                    " + ' may not ' + request.operation.lowerAscii() + ' it so)'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    return [selector_policy(users, groups)]
