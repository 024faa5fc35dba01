"""Rule 6, RBAC escalation: bindings in tenant namespaces grant only the tenant roles, to the tenant,
as the platform grants them in that environment.

A RoleBinding may reference only the shared tenant ClusterRoles (never cluster-admin, admin,
edit, or a Role the tenant wrote). Its group subjects must be bound to that role by the platform
itself in this namespace (Namespace annotation `tenancy.io/group-roles`, `<role>=<group>` pairs
rendered from the tenant file's `access` and the environment, components/guardrails/access.py):
in a read-only environment (prod) people are viewers, so a binding of a tenant group to the admin
or operator role there is refused whoever writes it, be it the deployer, a stray identity with
RBAC on RoleBindings, or an admin of another environment. Service accounts of the same namespace
may be bound (workloads, the deployer); users are refused: tenants get access through groups.
Kubernetes' own escalation check stops granting more than one holds; this rule also stops
granting it to someone else, or to the right people in the wrong environment.

Not matched: `platformIdentities` (they render the bindings from the tenant file) and the data
operators of `tenancy:policy.operatorIdentities` (CloudNativePG binds a Role of its own).
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
from components.model.core.labels import GROUP_ROLES_KEY

# `namespace` is a CEL reserved word; reading it by index does not depend on how an engine treats
# reserved words in field selection (cel-go and cel-cpp both evaluate this form).
_OWN_SUBJECT = (
    "(s.kind == 'Group' && (object.roleRef.name + '=' + s.name) in variables.groupRoles)"
    " || (s.kind == 'ServiceAccount' && 'namespace' in s && s['namespace'] == namespaceObject.metadata.name)"
)


def _platform_requester(users: list[str], groups: list[str]) -> str:
    return (
        f"request.userInfo.username in {literal_list(users)} || (has(request.userInfo.groups)"
        f" && request.userInfo.groups.exists(g, g in {literal_list(groups)}))"
    )


def _not_judged(
    operators: list[str] | None, platform_users: list[str] | None, platform_groups: list[str] | None
) -> list[MatchCondition]:
    """The requests the rule does not judge: the data operators', the platform's, and updates
    that change no subject."""
    skip: list[MatchCondition] = []
    if operators:
        skip.append(
            {"name": "not-a-data-operator", "expression": f"!(request.userInfo.username in {literal_list(operators)})"}
        )
    if platform_users or platform_groups:
        skip.append(
            {
                "name": "not-the-platform",
                "expression": f"!({_platform_requester(platform_users or [], platform_groups or [])})",
            }
        )
    # An UPDATE that leaves who is bound to what unchanged is not judged again: the garbage
    # collector removes the `foregroundDeletion` finalizer of a binding Pulumi deletes after the
    # tenant's access shrank (suspension, a changed tenant file), and a denial there left the
    # binding terminating forever and `pulumi up` waiting for it (found by the real run,
    # docs/real-run.md). What such an update can change is metadata; `roleRef` is immutable.
    skip.append(
        {
            "name": "changes-who-is-bound",
            "expression": "request.operation != 'UPDATE' || "
            "(has(object.subjects) ? object.subjects : []) != (has(oldObject.subjects) ? oldObject.subjects : [])"
            " || object.roleRef != oldObject.roleRef",
        }
    )
    return skip


def policies(
    allowed_roles: list[str],
    operators: list[str] | None = None,
    platform_users: list[str] | None = None,
    platform_groups: list[str] | None = None,
) -> list[PolicyDefinition]:
    """The rule; `operators` and the platform identities (request user names, groups) are not matched."""
    roles = literal_list(allowed_roles)
    skip = _not_judged(operators, platform_users, platform_groups)
    return [
        PolicyDefinition(
            name="tenancy-rbac",
            rule="rbac",
            resource_rules=[resource_rule("rbac.authorization.k8s.io", ["rolebindings"], ["CREATE", "UPDATE"])],
            match_conditions=skip,
            variables=[
                TENANT_VARIABLE,
                {"name": "groupRoles", "expression": namespace_annotation_list(GROUP_ROLES_KEY)},
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
                        "'RoleBinding ' + object.metadata.name + ' binds ' + variables.foreignSubjects[0]"
                        " + ' to ' + object.roleRef.name + ', which the platform does not grant in this namespace"
                        " of tenant ' + variables.tenant + ' (groups: ' + (size(variables.groupRoles) == 0 ? 'none'"
                        " : variables.groupRoles.join(', ')) + '; or a service account of this namespace);"
                        " change access in the tenant file instead'"
                    ),
                    "reason": "Forbidden",
                },
            ],
        )
    ]
