"""A small RBAC evaluator over rendered objects: may subject S do verb V on resource R in namespace N?

It follows the Kubernetes authorizer: a RoleBinding grants its (Cluster)Role's rules inside the
binding's namespace only; a ClusterRoleBinding grants everywhere; rules are additive; `*` matches all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Subject:
    kind: str  # Group, User or ServiceAccount
    name: str
    namespace: str | None = None


def _subject_matches(binding_subject: dict[str, Any], subject: Subject, binding_namespace: str | None) -> bool:
    if binding_subject["kind"] != subject.kind or binding_subject["name"] != subject.name:
        return False
    if subject.kind == "ServiceAccount":
        return (binding_subject.get("namespace") or binding_namespace) == subject.namespace
    return True


def _rule_allows(rule: dict[str, Any], verb: str, group: str, resource: str) -> bool:
    def has(values: list[str], value: str) -> bool:
        return "*" in values or value in values

    return (
        has(rule.get("verbs", []), verb)
        and has(rule.get("apiGroups", []), group)
        and has(rule.get("resources", []), resource)
    )


class Authorizer:
    """Answers access questions from the rendered RBAC objects of a plan."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.cluster_roles = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ClusterRole"}
        self.roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects if o["kind"] == "Role"}
        self.role_bindings = [o for o in objects if o["kind"] == "RoleBinding"]
        self.cluster_role_bindings = [o for o in objects if o["kind"] == "ClusterRoleBinding"]

    def _rules_of(self, role_ref: dict[str, Any], namespace: str | None) -> list[dict[str, Any]]:
        if role_ref["kind"] == "ClusterRole":
            role = self.cluster_roles.get(role_ref["name"])
        else:
            role = self.roles.get((namespace or "", role_ref["name"]))
        return list(role.get("rules", [])) if role else []

    def allowed(self, subject: Subject, verb: str, resource: str, namespace: str, group: str = "") -> bool:
        for binding in self.cluster_role_bindings:
            if any(_subject_matches(s, subject, None) for s in binding.get("subjects", [])) and any(
                _rule_allows(rule, verb, group, resource) for rule in self._rules_of(binding["roleRef"], None)
            ):
                return True
        for binding in self.role_bindings:
            binding_namespace = binding["metadata"]["namespace"]
            if binding_namespace != namespace:
                continue
            if any(_subject_matches(s, subject, binding_namespace) for s in binding.get("subjects", [])) and any(
                _rule_allows(rule, verb, group, resource)
                for rule in self._rules_of(binding["roleRef"], binding_namespace)
            ):
                return True
        return False
