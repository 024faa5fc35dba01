"""Rule 7, scheduling: no `spec.nodeName`, and priority classes only from the stack's allow-list.

`spec.nodeName` skips the scheduler: the kubelet of the named node runs the pod without checking
NoSchedule taints, so a tenant (one without a pool in particular, whose pods carry no pool
nodeSelector) lands on another tenant's pool. The scheduler sets the node through the
`pods/binding` subresource, which this rule does not match, so nothing legitimate is lost.

`priorityClassName` decides preemption: a tenant naming a high class on a shared pool evicts other
tenants' pods. Only the classes in `tenancy:policy.allowedPriorityClasses` may be named (none by
default). The built-in Priority admission plugin (mutating, so it runs before this rule) rejects
a hand-set `spec.priority` and writes the cluster's globalDefault class name into pods that name
none; such a class must therefore be on the list.

A PodDisruptionBudget can make pods unevictable, and every drain of the nodes they run on then
waits forever: on a shared pool one tenant would hold back node upgrades and scale-downs for all.
Two shapes do it, and the rule cannot see the pods, the workload's replica count or the other
budgets, so a tenant budget has one shape in which neither can happen, decidable from the budget
alone (`disruption_budgets_policy`):

- no disruption allowed: `maxUnavailable` 0 (`0`, `'0%'`, `'00%'`, read as numbers as the
  disruption controller reads them, components/admission/base.py int_or_percent_number), or any
  `minAvailable`, since any integer can equal the replica count and a percentage rounds up (50% of
  one pod is one). A tenant budget sets `maxUnavailable` of at least 1 or a percentage above 0%,
  which the controller also rounds up, so a healthy set always lets one pod go;
- two budgets over the same pods: the eviction API refuses to evict a pod that more than one
  budget selects, whatever they allow. A tenant budget selects by exactly one label,
  `tenancy.io/disruption-budget: <its own name>`: a pod carries one value of a label, so no pod is
  under two of them, and two budgets of one value collide by name (AlreadyExists).

The data operators of `tenancy:policy.operatorIdentities` are not judged (CloudNativePG writes its
own budgets, `minAvailable: 1` over a cluster's primary), nor is an UPDATE that leaves the spec as
it was (the garbage collector removing a finalizer from a budget written before the rule).

Pods are the boundary (every controller's pods pass here); the workload templates are checked too
so a Deployment is refused when applied rather than failing to create pods later. Values that an
UPDATE leaves unchanged pass, so a running pod keeps its scheduler-set node through label edits.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    MatchCondition,
    PolicyDefinition,
    ResourceRule,
    Validation,
    int_or_percent_number,
    literal,
    literal_list,
    resource_rule,
)
from components.model.core.labels import DISRUPTION_BUDGET_KEY

_WRITE = ["CREATE", "UPDATE"]
TEMPLATED = [
    ("apps", ["deployments", "statefulsets", "daemonsets", "replicasets"]),
    ("batch", ["jobs"]),
    ("", ["replicationcontrollers"]),
]


def _field(spec: str, name: str) -> str:
    """CEL: the string field `name` of the pod spec at `spec`, '' when absent."""
    return f"(has({spec}.{name}) ? {spec}.{name} : '')"


def _policy(
    name: str, resource_rules: list[ResourceRule], spec: str, guard: str, allowed: list[str]
) -> PolicyDefinition:
    """One policy for one API shape; `spec` is the path of the pod spec, `guard` says it exists."""
    old_spec = spec.replace("object.", "oldObject.", 1)
    old_guard = guard.replace("object.", "oldObject.")
    classes = literal_list(allowed)

    def value(field: str) -> str:
        return f"({guard} ? {_field(spec, field)} : '')"

    def unchanged(field: str) -> str:
        return f"(oldObject != null && ({old_guard} ? {_field(old_spec, field)} : '') == {value(field)})"

    return PolicyDefinition(
        name=name,
        rule="scheduling",
        resource_rules=resource_rules,
        variables=[
            TENANT_VARIABLE,
            {"name": "nodeName", "expression": value("nodeName")},
            {"name": "priorityClass", "expression": value("priorityClassName")},
        ],
        validations=[
            {
                "expression": f"variables.nodeName == '' || {unchanged('nodeName')}",
                "message_expression": (
                    "'spec.nodeName ' + variables.nodeName + ' is not allowed for tenant ' + variables.tenant"
                    " + ': it bypasses the scheduler and node pool taints; the pool nodeSelector places pods'"
                ),
                "reason": "Forbidden",
            },
            {
                "expression": f"variables.priorityClass == '' || variables.priorityClass in {classes}"
                f" || {unchanged('priorityClassName')}",
                "message_expression": (
                    "'priorityClassName ' + variables.priorityClass + ' is not allowed for tenant ' + variables.tenant"
                    f" + ' (allowed: ' + ({classes}.size() == 0 ? 'none' : {classes}.join(', '))"
                    " + '; see tenancy:policy.allowedPriorityClasses)'"
                ),
                "reason": "Forbidden",
            },
        ],
    )


def disruption_budgets_policy(operators: list[str] | None = None) -> PolicyDefinition:
    """PodDisruptionBudgets let a healthy pod go and never overlap (module docstring); `operators`
    (request user names) are not judged."""
    # The disruption controller, kubernetes/kubernetes pkg/controller/disruption/disruption.go
    # (stored snapshot 003e86297d18, getExpectedPodCount): maxUnavailable is scaled with
    # `intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expectedCount), true)`,
    # rounding up, and desiredHealthy = expectedCount - maxUnavailable; so 1% of one pod is one pod.
    # An integer minAvailable is desiredHealthy as written, a percentage is scaled rounding up too:
    # either can reach the replica count, which the rule cannot read, hence none at all.
    # The eviction API, pkg/registry/core/pod/storage/eviction.go (stored snapshot 01aa0f3f6052,
    # EvictionREST.Create): a pod that more than one budget selects is not evicted ("This pod has
    # more than one PodDisruptionBudget, which the eviction subresource does not support.", 500).
    key = literal(DISRUPTION_BUDGET_KEY)
    max_unavailable = int_or_percent_number("object.spec.maxUnavailable")
    lets_one_go = f"(has(object.spec.maxUnavailable) && {max_unavailable} >= 1)"
    selector = "object.spec.selector"
    one_label = (
        f"has({selector}) && (!has({selector}.matchExpressions) || size({selector}.matchExpressions) == 0)"
        f" && has({selector}.matchLabels) && size({selector}.matchLabels) == 1 && {key} in {selector}.matchLabels"
    )
    write = (
        "'; write `metadata.name: ' + object.metadata.name + '`, `selector: {matchLabels: {"
        + DISRUPTION_BUDGET_KEY
        + ": ' + object.metadata.name + '}}` and `maxUnavailable: 1` (or a percentage above 0%), and give the "
        "pod template of the workload the label " + DISRUPTION_BUDGET_KEY + ": ' + object.metadata.name"
    )
    return PolicyDefinition(
        name="tenancy-scheduling-disruption-budgets",
        rule="scheduling",
        resource_rules=[resource_rule("policy", ["poddisruptionbudgets"], _WRITE)],
        match_conditions=_budget_match_conditions(operators),
        variables=[TENANT_VARIABLE, {"name": "oneLabel", "expression": one_label}],
        validations=_budget_validations(lets_one_go, write),
    )


def _budget_match_conditions(operators: list[str] | None) -> list[MatchCondition]:
    """Not judged: the data operators' own budgets, and UPDATEs that leave the spec as it was (label
    edits, the garbage collector's finalizer removal on budgets from before the rule)."""
    skip: list[MatchCondition] = []
    if operators:
        skip.append(
            {"name": "not-a-data-operator", "expression": f"!(request.userInfo.username in {literal_list(operators)})"}
        )
    skip.append(
        {
            "name": "changes-the-budget",
            "expression": "request.operation != 'UPDATE' || object.spec != oldObject.spec",
        }
    )
    return skip


def _budget_validations(lets_one_go: str, write: str) -> list[Validation]:
    """One refusal per way a budget can hold a drain, each saying what to write instead."""
    key = literal(DISRUPTION_BUDGET_KEY)
    selector = "object.spec.selector"
    budget = "'PodDisruptionBudget ' + object.metadata.name + ' of tenant ' + variables.tenant"
    return [
        {
            "expression": "!has(object.spec.minAvailable)",
            "message_expression": (
                f"{budget} + ' sets minAvailable, which can equal the replica count (a percentage rounds up) "
                "and then lets no pod go: drains of its nodes, shared ones included, would wait forever' + "
                f"{write}"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": f"has(object.spec.minAvailable) || {lets_one_go}",
            "message_expression": (
                f"{budget} + ' allows no disruption (maxUnavailable 0 or none): drains of its nodes, shared ones "
                f"included, would wait forever' + {write}"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "variables.oneLabel",
            "message_expression": (
                f"{budget} + ' selects pods by something other than the one label {DISRUPTION_BUDGET_KEY}, so "
                "it may cover pods another budget covers, and the eviction API evicts no pod under two budgets' + "
                f"{write}"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": f"!variables.oneLabel || {selector}.matchLabels[{key}] == object.metadata.name",
            "message_expression": (
                f"{budget} + ' selects {DISRUPTION_BUDGET_KEY}: ' + {selector}.matchLabels[{key}] + ', not its own "
                "name, so another budget could select the same pods' + "
                f"{write}"
            ),
            "reason": "Forbidden",
        },
    ]


# Issue 43: the label keys the data operators' own budgets select by (they are exempt from the one
# shape above). CloudNativePG 1.30 pkg/specs/poddisruptionbudget.go selects the primary by
# `cnpg.io/cluster: <cluster>` and `cnpg.io/instanceRole: primary` (the replicas' budget by
# `instanceRole: replica`); the operator puts them on its instance pods, and `cnpg.io/cluster` on the
# pod templates of its Jobs and Poolers. A tenant pod carrying them and its own budget label would be
# under two budgets, and the eviction API evicts no such pod (drains wait). tests/operators checks
# that every operator budget selects by these keys only.
OPERATOR_BUDGET_LABELS = ["cnpg.io/cluster", "cnpg.io/instanceRole"]
# kube-controller-manager's controllers create pods (and Jobs) from templates, which this rule
# judges where they are written; with and without --use-service-account-credentials.
TEMPLATE_CONTROLLERS = [
    "system:serviceaccount:kube-system:deployment-controller",
    "system:serviceaccount:kube-system:replicaset-controller",
    "system:serviceaccount:kube-system:statefulset-controller",
    "system:serviceaccount:kube-system:daemon-set-controller",
    "system:serviceaccount:kube-system:job-controller",
    "system:serviceaccount:kube-system:cronjob-controller",
    "system:serviceaccount:kube-system:replication-controller",
    "system:kube-controller-manager",
]


def pod_labels(root: str) -> str:
    """CEL: the labels of the pod (or pod template) the request writes, by resource; {} when none."""
    template = f"{root}.spec.template"
    cron = f"{root}.spec.jobTemplate.spec.template"

    def labels(owner: str, guard: str) -> str:
        present = f"{guard} && has({owner}.metadata) && has({owner}.metadata.labels)"
        return f"({present} ? {owner}.metadata.labels : {{}})"

    return (
        f"{root} == null ? {{}} : request.resource.resource == 'pods' ? {labels(root, 'true')}"
        f" : request.resource.resource == 'cronjobs'"
        f" ? {labels(cron, f'has({root}.spec.jobTemplate.spec) && has({cron})')}"
        f" : {labels(template, f'has({template})')}"
    )


def operator_labels_policy(operators: list[str] | None = None) -> PolicyDefinition:
    """Pods and pod templates carry the operators' budget labels only when an operator writes them
    (or a controller follows a template an operator wrote); a change that leaves them as they were
    passes (kubelets' status writes, tenants' edits of other labels)."""
    keys = literal_list(OPERATOR_BUDGET_LABELS)
    trusted = literal_list([*(operators or []), *TEMPLATE_CONTROLLERS])

    def reserved(root: str) -> str:
        labels = pod_labels(root)
        return f"{keys}.filter(k, k in ({labels})).map(k, k + '=' + ({labels})[k])"

    def budget(root: str) -> str:
        labels, key = pod_labels(root), literal(DISRUPTION_BUDGET_KEY)
        return f"{key} in ({labels}) ? ({labels})[{key}] : ''"

    return PolicyDefinition(
        name="tenancy-scheduling-operator-labels",
        rule="scheduling",
        resource_rules=[
            resource_rule("", ["pods"], _WRITE),
            # pods/status keeps the labels a request carries (k8s.io/kubernetes v1.36.3
            # pkg/registry/core/pod/strategy.go podStatusStrategy restores the spec only).
            resource_rule("", ["pods/status"], ["UPDATE"]),
            *(resource_rule(group, resources, _WRITE) for group, resources in TEMPLATED),
            resource_rule("batch", ["cronjobs"], _WRITE),
        ],
        match_conditions=[{"name": "not-an-operator", "expression": f"!(request.userInfo.username in {trusted})"}],
        variables=[
            TENANT_VARIABLE,
            {"name": "reserved", "expression": reserved("object")},
            {"name": "oldReserved", "expression": f"oldObject == null ? [] : {reserved('oldObject')}"},
            {"name": "budget", "expression": budget("object")},
            {"name": "oldBudget", "expression": f"oldObject == null ? '' : {budget('oldObject')}"},
        ],
        validations=[
            {
                "expression": "size(variables.reserved) == 0 || variables.reserved == variables.oldReserved",
                "message_expression": (
                    "request.kind.kind + ' ' + object.metadata.name + ' of tenant ' + variables.tenant + ' carries '"
                    " + variables.reserved.join(', ') + ', labels a data operator selects its own"
                    " PodDisruptionBudget by: a pod under two budgets cannot be evicted (drains wait);"
                    " only the operator labels its pods so'"
                ),
                "reason": "Forbidden",
            },
            {
                # The mirror image: the tenant's budget label put on an operator's pod.
                "expression": "size(variables.reserved) == 0 || variables.budget == ''"
                " || variables.budget == variables.oldBudget",
                "message_expression": (
                    "request.kind.kind + ' ' + object.metadata.name + ' carries ' + variables.reserved.join(', ')"
                    f" + ', labels a data operator budget selects by, and {DISRUPTION_BUDGET_KEY}: ' + variables.budget"
                    " + ': a pod under two budgets cannot be evicted (drains wait)'"
                ),
                "reason": "Forbidden",
            },
        ],
    )


def policies(allowed_priority_classes: list[str], operators: list[str] | None = None) -> list[PolicyDefinition]:
    templated = [resource_rule(group, resources, _WRITE) for group, resources in TEMPLATED]
    template = "object.spec.template"
    cron = "object.spec.jobTemplate.spec.template"
    return [
        _policy(
            "tenancy-scheduling-pods",
            [resource_rule("", ["pods"], _WRITE)],
            "object.spec",
            "true",
            allowed_priority_classes,
        ),
        _policy(
            "tenancy-scheduling-templates",
            templated,
            f"{template}.spec",
            f"has({template}) && has({template}.spec)",
            allowed_priority_classes,
        ),
        _policy(
            "tenancy-scheduling-cronjobs",
            [resource_rule("batch", ["cronjobs"], _WRITE)],
            f"{cron}.spec",
            f"has(object.spec.jobTemplate.spec) && has({cron}) && has({cron}.spec)",
            allowed_priority_classes,
        ),
        disruption_budgets_policy(operators),
        operator_labels_policy(operators),
    ]
