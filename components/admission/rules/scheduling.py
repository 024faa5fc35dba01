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

A PodDisruptionBudget that allows no disruption (`maxUnavailable: 0`, `0%`, or `minAvailable:
100%`) makes every drain of the nodes its pods run on wait forever: on a shared pool one tenant
would hold back node upgrades and scale-downs for all. Such budgets are refused; a budget of
`minAvailable` equal to the replica count does the same and cannot be told apart here (the rule
does not know the replica count), which docs/admission.md says. The values are read as numbers,
as the disruption controller reads them: `'00%'`, `'000%'` and `0` are the same budget
(components/admission/base.py int_or_percent_number).

Pods are the boundary (every controller's pods pass here); the workload templates are checked too
so a Deployment is refused when applied rather than failing to create pods later. Values that an
UPDATE leaves unchanged pass, so a running pod keeps its scheduler-set node through label edits.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    ResourceRule,
    int_or_percent_number,
    literal_list,
    resource_rule,
)

_WRITE = ["CREATE", "UPDATE"]
_TEMPLATED = [
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


def disruption_budgets_policy() -> PolicyDefinition:
    """PodDisruptionBudgets must allow some disruption (module docstring)."""
    # Numbers, not text: '00%', '000%' and 0 are the same budget to the disruption controller.
    # minAvailable as a percentage of at least 100 keeps every pod; the API server refuses more than
    # 100% (IsNotMoreThan100Percent), and an unparsable value counts as blocking.
    max_unavailable = int_or_percent_number("object.spec.maxUnavailable")
    min_available = int_or_percent_number("object.spec.minAvailable")
    blocks = (
        f"(has(object.spec.maxUnavailable) && {max_unavailable} <= 0)"
        " || (has(object.spec.minAvailable) && type(object.spec.minAvailable) == string"
        f" && ({min_available} >= 100 || {min_available} < 0))"
    )
    return PolicyDefinition(
        name="tenancy-scheduling-disruption-budgets",
        rule="scheduling",
        resource_rules=[resource_rule("policy", ["poddisruptionbudgets"], _WRITE)],
        variables=[TENANT_VARIABLE],
        validations=[
            {
                "expression": f"!({blocks})",
                "message_expression": (
                    "'PodDisruptionBudget ' + object.metadata.name + ' of tenant ' + variables.tenant + ' allows no "
                    "disruption (maxUnavailable 0 or minAvailable 100%): drains of its nodes, shared ones included, "
                    "would wait forever; allow at least one pod to go'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def policies(allowed_priority_classes: list[str]) -> list[PolicyDefinition]:
    templated = [resource_rule(group, resources, _WRITE) for group, resources in _TEMPLATED]
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
        disruption_budgets_policy(),
    ]
