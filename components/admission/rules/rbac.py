"""Rule 6, RBAC escalation: bindings in tenant namespaces grant only the tenant roles, to the tenant.

A RoleBinding may reference only the shared tenant ClusterRoles (never cluster-admin, admin,
edit, or a Role the tenant wrote), and its subjects must be the tenant's own identity-provider
groups (Namespace annotation `tenancy.io/groups`) or service accounts of the same namespace.
Users are refused: tenants get access through groups. Kubernetes' own escalation check stops
granting more than one holds; this rule also stops granting it to someone else.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    MatchCondition,
    PolicyDefinition,
    literal_list,
    namespace_annotation_list,
    resource_rule,
)
from components.model.labels import GROUPS_KEY

# `namespace` is a CEL reserved word; reading it by index does not depend on how an engine treats
# reserved words in field selection (cel-go and cel-cpp both evaluate this form).
_OWN_SUBJECT = (
    "(s.kind == 'Group' && s.name in variables.groups) || (s.kind == 'ServiceAccount' && 'namespace' in s"
    " && s['namespace'] == namespaceObject.metadata.name)"
)


def policies(allowed_roles: list[str], operators: list[str] | None = None) -> list[PolicyDefinition]:
    """The rule; `operators` (request user names, `tenancy:policy.operatorIdentities`) are not matched."""
    roles = literal_list(allowed_roles)
    skip_operators: list[MatchCondition] = []
    if operators:
        skip_operators.append(
            {"name": "not-a-data-operator", "expression": f"!(request.userInfo.username in {literal_list(operators)})"}
        )
    return [
        PolicyDefinition(
            name="tenancy-rbac",
            rule="rbac",
            resource_rules=[resource_rule("rbac.authorization.k8s.io", ["rolebindings"], ["CREATE", "UPDATE"])],
            match_conditions=skip_operators,
            variables=[
                TENANT_VARIABLE,
                {"name": "groups", "expression": namespace_annotation_list(GROUPS_KEY)},
                {
                    "name": "foreignSubjects",
                    "expression": "has(object.subjects) ? object.subjects.filter(s, !("
                    + _OWN_SUBJECT
                    + ")).map(s, s.kind + ' ' + s.name) : []",
                },
            ],
            validations=[
                {
                    "expression": f"object.roleRef.kind == 'ClusterRole' && object.roleRef.name in {roles}",
                    "message_expression": (
                        "'RoleBinding ' + object.metadata.name + ' references ' + object.roleRef.kind + ' '"
                        f" + object.roleRef.name + '; tenant namespaces may bind only ' + {roles}.join(', ')"
                    ),
                    "reason": "Forbidden",
                },
                {
                    "expression": "size(variables.foreignSubjects) == 0",
                    "message_expression": (
                        "'RoleBinding ' + object.metadata.name + ' names ' + variables.foreignSubjects[0]"
                        " + ', which is not a group of tenant ' + variables.tenant"
                        " + ' or a service account of this namespace'"
                    ),
                    "reason": "Forbidden",
                },
            ],
        )
    ]
