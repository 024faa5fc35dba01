"""Rule 3, node pool: a pod selects its tenant's pool and tolerates no other pool's taint.

Pools are labelled and tainted `tenancy.io/pool=<pool>` (components/model/core/labels.py). The tenant's pool
is the Namespace label of the same key. A tenant with a pool must select it with
`nodeSelector: {tenancy.io/pool: <pool>}`; nodeSelector and node affinity are ANDed, so that alone
pins the pod whatever affinity it adds. Tolerations decide which tainted nodes a pod may use:
one for another pool, for the pool key with `Exists`, or without a key (which tolerates every
taint) would let it onto other tenants' nodes. Tenants without a pool run on untainted nodes and
may tolerate no pool at all.

Where the cluster has MutatingAdmissionPolicy v1 (1.36+) `mutation()` injects the nodeSelector
and toleration first, so tenants write nothing; the validating rule stays as the boundary.
"""

from __future__ import annotations

import pulumi_kubernetes as k8s

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Variable,
    literal,
    namespace_label,
    resource_rule,
)
from components.model.core.labels import NODE_POOL_KEY, NODE_POOL_TAINT_EFFECT, TENANT_KEY

_POOL: Variable = {"name": "pool", "expression": namespace_label(NODE_POOL_KEY)}
_KEY = literal(NODE_POOL_KEY)


def _own_toleration(t: str) -> str:
    """CEL: toleration `t` is exactly the tenant's own pool taint (operator Equal, its value)."""
    return (
        f"has({t}.key) && {t}.key == {_KEY} && (!has({t}.operator) || {t}.operator == 'Equal')"
        f" && has({t}.value) && {t}.value == variables.pool"
    )


def policies() -> list[PolicyDefinition]:
    return [
        PolicyDefinition(
            name="tenancy-node-pool",
            rule="node_pool",
            # UPDATE too: a running pod's tolerations may be extended.
            resource_rules=[resource_rule("", ["pods"], ["CREATE", "UPDATE"])],
            variables=[
                TENANT_VARIABLE,
                _POOL,
                {"name": "tolerations", "expression": "has(object.spec.tolerations) ? object.spec.tolerations : []"},
            ],
            validations=[
                {
                    "expression": (
                        f"variables.pool == '' || (has(object.spec.nodeSelector) && {_KEY} in object.spec.nodeSelector"
                        f" && object.spec.nodeSelector[{_KEY}] == variables.pool)"
                    ),
                    "message_expression": (
                        "'pods of tenant ' + variables.tenant + ' must run on node pool ' + variables.pool"
                        f" + ': set spec.nodeSelector {{{NODE_POOL_KEY}: ' + variables.pool + '}}'"
                    ),
                    "reason": "Forbidden",
                },
                {
                    "expression": (
                        "variables.tolerations.all(t, (has(t.key) && t.key != '')"
                        " || !has(t.operator) || t.operator != 'Exists')"
                    ),
                    "message": "a toleration without a key tolerates every taint, including other tenants' "
                    "node pools; name the taint key",
                    "reason": "Forbidden",
                },
                {
                    "expression": (
                        f"variables.tolerations.all(t, !has(t.key) || t.key != {_KEY} || ({_own_toleration('t')}))"
                    ),
                    "message_expression": (
                        "variables.pool == '' ? 'tenant ' + variables.tenant + ' has no node pool; its pods may not "
                        f"tolerate {NODE_POOL_KEY} taints' : 'pods of tenant ' + variables.tenant + ' may tolerate "
                        f"only {NODE_POOL_KEY}=' + variables.pool + ' (operator Equal)'"
                    ),
                    "reason": "Forbidden",
                },
            ],
        )
    ]


def mutation() -> k8s.admissionregistration.v1.MutatingAdmissionPolicySpecArgsDict:
    """The spec of the MutatingAdmissionPolicy that adds the pool's nodeSelector and toleration.

    JSON Patch rather than an apply configuration: `spec.tolerations` is an atomic list, so an
    apply configuration would replace the pod's own tolerations instead of adding one.
    """
    toleration = (
        f"{{'key': {_KEY}, 'operator': 'Equal', 'value': variables.pool, 'effect': {literal(NODE_POOL_TAINT_EFFECT)}}}"
    )
    escaped_key = NODE_POOL_KEY.replace("~", "~0").replace("/", "~1")
    node_selector = (
        "has(object.spec.nodeSelector) ? "
        f"[JSONPatch{{op: 'add', path: {literal('/spec/nodeSelector/' + escaped_key)}, value: variables.pool}}] : "
        f"[JSONPatch{{op: 'add', path: '/spec/nodeSelector', value: {{{_KEY}: variables.pool}}}}]"
    )
    tolerations = (
        f"has(object.spec.tolerations) && object.spec.tolerations.exists(t, {_own_toleration('t')}) ? [] : "
        "has(object.spec.tolerations) ? "
        f"[JSONPatch{{op: 'add', path: '/spec/tolerations/-', value: {toleration}}}] : "
        f"[JSONPatch{{op: 'add', path: '/spec/tolerations', value: [{toleration}]}}]"
    )
    return {
        "failure_policy": "Fail",
        "reinvocation_policy": "Never",
        "match_constraints": {
            "resource_rules": [resource_rule("", ["pods"], ["CREATE"])],
            "namespace_selector": {
                "match_expressions": [
                    {"key": TENANT_KEY, "operator": "Exists"},
                    {"key": NODE_POOL_KEY, "operator": "Exists"},
                ]
            },
        },
        "variables": [_POOL],
        "mutations": [
            {"patch_type": "JSONPatch", "json_patch": {"expression": f"({node_selector}) + ({tolerations})"}}
        ],
    }
