"""What every admission policy of the bundle is made of, and small helpers to write its CEL.

A rule is data (`PolicyDefinition`); components/admission/bundle.py turns each into a
ValidatingAdmissionPolicy and its binding. Keeping the CEL in one small module per rule lets a
reviewer read a rule, its messages and its tests side by side.

The CEL stays inside what both Kubernetes and cel-cpp (the engine the tests run) support: the
standard macros (has, all, exists, filter, map), `in`, string `startsWith`/`endsWith`/`matches`,
and the strings extension (`split`, `join`, `substring`). No Kubernetes-only library is used by a
validating policy, so the tests evaluate exactly the text the API server will.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi_kubernetes as k8s

from components.model.labels import TENANT_KEY

ResourceRule = k8s.admissionregistration.v1.NamedRuleWithOperationsArgsDict
Validation = k8s.admissionregistration.v1.ValidationArgsDict
Variable = k8s.admissionregistration.v1.VariableArgsDict
MatchCondition = k8s.admissionregistration.v1.MatchConditionArgsDict
LabelSelector = k8s.meta.v1.LabelSelectorArgsDict


@dataclass(frozen=True)
class PolicyDefinition:
    """One ValidatingAdmissionPolicy: what it matches, what it computes and what it requires.

    `rule` is the key of the rollout switch (`tenancy:policy.actions.<rule>`) that decides the
    binding's validationActions.

    By default a policy matches objects in tenant namespaces (namespaceSelector on the tenant
    label). `object_selector` replaces that with a selector on the object itself, which the API
    server matches against the new *or* the old object (k8s.io/apiserver
    pkg/admission/plugin/webhook/predicates/object/matcher.go); the namespaceSelector of a
    Namespace request sees only the new object's labels, so an UPDATE that drops the tenant label
    would slip past it.
    """

    name: str
    rule: str
    resource_rules: list[ResourceRule]
    validations: list[Validation]
    variables: list[Variable] = field(default_factory=list)
    match_conditions: list[MatchCondition] = field(default_factory=list)
    object_selector: LabelSelector | None = None


def resource_rule(group: str, resources: list[str], operations: list[str]) -> ResourceRule:
    """A match rule for every version of `resources` in `group`."""
    return {"api_groups": [group], "api_versions": ["*"], "operations": operations, "resources": resources}


def literal(value: str) -> str:
    """A CEL string literal; values come from validated settings, escaping is belt and braces."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def literal_list(values: list[str]) -> str:
    """A CEL list of string literals."""
    return "[" + ", ".join(literal(v) for v in values) + "]"


def namespace_annotation_list(key: str) -> str:
    """CEL: a comma-separated annotation of the tenant Namespace as a list (empty when absent)."""
    annotations = "namespaceObject.metadata.annotations"
    return (
        f"has({annotations}) && {literal(key)} in {annotations} && {annotations}[{literal(key)}] != '' "
        f"? {annotations}[{literal(key)}].split(',') : []"
    )


def namespace_label(key: str) -> str:
    """CEL: a label of the tenant Namespace, or '' when absent."""
    labels = "namespaceObject.metadata.labels"
    return f"has({labels}) && {literal(key)} in {labels} ? {labels}[{literal(key)}] : ''"


# Every policy can name the tenant in its messages.
TENANT_VARIABLE: Variable = {"name": "tenant", "expression": namespace_label(TENANT_KEY)}
