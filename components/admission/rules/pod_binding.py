"""Rule 8 (side doors), a pod's binding: `tenancy-pod-binding`.

A Binding (`pods/binding`, or the older `bindings` resource, served by the same storage) sets an
unscheduled pod's node, and it does more: k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/storage/
storage.go (BindingREST.Create, setPodNodeAndMetadata) merges the Binding's annotations into the pod,
and its labels too where the PodTopologyLabelsAdmission gate is on (beta, on by default since 1.35).
No pod UPDATE is made, so no rule on pods sees them: a stray grant of `pods/binding` on a pending pod
could add a data operator's budget labels (rules/scheduling.py), move `vcluster-0` off its
StatefulSet or put the control plane's labels on another pod (rules/syncer_account.py,
rules/vcluster_selector.py), or set `container.apparmor.security.beta.kubernetes.io/<c>: unconfined`,
which pod UPDATE validation forbids adding and the kubelet prefers over the pod's own field
(pkg/security/apparmor/helpers.go).

Nothing legitimate sends either: the default scheduler's Binding names the pod and the node only
(pkg/scheduler/framework/plugins/defaultbinder/default_binder.go), and the PodTopologyLabels
admission plugin, which runs before validating admission, adds the node's
`topology.kubernetes.io/zone` and `/region` to it (plugin/pkg/admission/podtopologylabels). So a
Binding carrying any other label, or any annotation, is refused from anyone but the platform; no
scheduler's identity needs naming. Which node a stray binding names is not judged here
(docs/admission-attacks.md, left open).
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, literal_list, resource_rule
from components.admission.rules.vcluster_cel import platform_identity

BINDING_POLICY = "tenancy-pod-binding"
# The labels the PodTopologyLabels admission plugin copies from the node onto a Binding (its default
# configuration in kube-apiserver, plugin/pkg/admission/podtopologylabels/admission.go).
TOPOLOGY_LABELS = ["topology.kubernetes.io/region", "topology.kubernetes.io/zone"]


def binding_policy(users: list[str], groups: list[str]) -> PolicyDefinition:
    labels = "(has(object.metadata.labels) ? object.metadata.labels : {})"
    annotations = "(has(object.metadata.annotations) ? object.metadata.annotations : {})"
    topology = literal_list(TOPOLOGY_LABELS)
    return PolicyDefinition(
        name=BINDING_POLICY,
        rule="side_doors",
        resource_rules=[
            resource_rule("", ["pods/binding"], ["CREATE"]),
            # The older resource, the same BindingREST (pkg/registry/core/rest/storage_core.go `bindings`).
            resource_rule("", ["bindings"], ["CREATE"]),
        ],
        variables=[
            TENANT_VARIABLE,
            {"name": "platform", "expression": platform_identity(users, groups)},
            {"name": "labels", "expression": f"{labels}.filter(k, !(k in {topology}))"},
            {"name": "annotations", "expression": f"{annotations}.map(k, k)"},
        ],
        validations=[
            {
                "expression": "variables.platform || (size(variables.labels) == 0 && size(variables.annotations) == 0)",
                "message_expression": (
                    "'the Binding of pod ' + object.metadata.name + ' carries '"
                    " + (variables.labels + variables.annotations).join(', ') + ': a binding sets the node, and the"
                    " API server would copy its labels and annotations onto the pod past every pod rule; only the"
                    f" topology labels ({', '.join(TOPOLOGY_LABELS)}) the API server itself adds pass"
                    " (' + request.userInfo.username + ' in tenant ' + variables.tenant + ')'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    return [binding_policy(users, groups)]
