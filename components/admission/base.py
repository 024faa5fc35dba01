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

from components.model.core.labels import TENANT_KEY

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

    `cluster_wide` drops the tenant selection altogether: the policy matches every namespace and
    cluster-scoped objects (the preview's dry-run-only rule, which is about who asks, not where).
    """

    name: str
    rule: str
    resource_rules: list[ResourceRule]
    validations: list[Validation]
    variables: list[Variable] = field(default_factory=list)
    match_conditions: list[MatchCondition] = field(default_factory=list)
    object_selector: LabelSelector | None = None
    cluster_wide: bool = False


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


def requester_in(users: list[str], groups: list[str]) -> str:
    """CEL: the request's user is one of `users` or belongs to one of `groups`."""
    return (
        f"(request.userInfo.username in {literal_list(users)} || (has(request.userInfo.groups)"
        f" && request.userInfo.groups.exists(g, g in {literal_list(groups)})))"
    )


# Every policy can name the tenant in its messages.
TENANT_VARIABLE: Variable = {"name": "tenant", "expression": namespace_label(TENANT_KEY)}


# Values as the API server and its controllers parse them, never as text (docs/admission-attacks.md,
# "Values compared as text"). Validating admission runs after the API server's own validation
# (the registry validates, then calls the validating admission chain), so these helpers only see
# values that validation accepted; they stay safe on anything else (an unparsable value is never
# read as "allowed").


def int_or_percent_number(value: str) -> str:
    """CEL: the number of an int-or-percent field (`1`, `'25%'`, `'025%'`), -1 when it is neither.

    k8s.io/apimachinery/pkg/util/intstr/intstr.go (v0.34) GetScaledValueFromIntOrPercent reads a
    string as `strconv.Atoi(strings.TrimSuffix(s, "%"))`, so `'00%'`, `'000%'` and `'0%'` are all
    0; the API server accepts any string matching `^[0-9]+%$` (k8s.io/apimachinery/pkg/util/
    validation IsValidPercent, used by pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec).
    CEL `int()` parses decimal strings the same way (leading zeros and all).
    """
    return (
        f"(type({value}) == int ? {value} : (string({value}).matches('^[0-9]{{1,18}}%$')"
        f" ? int(string({value}).substring(0, size(string({value})) - 1)) : -1))"
    )


def quantity_is_zero(value: str) -> str:
    """CEL: true when a resource.Quantity string is zero in any spelling (`0`, `0Mi`, `0.0`, `+0`,
    `0e3`, `000`, `.0`, `0m`).

    The quantity grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go, v0.34):
    `<signedNumber><suffix>` with `<suffix>` a binary (Ki..Ei), decimal (n, u, m, k, M, G, T, P, E)
    or exponent (`e<signedNumber>`) suffix: the value is zero exactly when the mantissa has no
    digit 1-9 (an exponent only scales it). Written with `matches` so both cel-go and the offline
    engine evaluate it; quantity() would say the same on valid input.
    """
    return f"!string({value}).matches('^[+-]?[0-9.]*[1-9]')"
