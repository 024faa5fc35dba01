"""An RBAC evaluator over rendered objects, following the Kubernetes RBAC authorizer.

Upstream, and what is modelled here:
- k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/rbac.go: a request is allowed when any rule
  of any (Cluster)Role bound to the user allows it; RoleBindings grant inside their namespace
  only, ClusterRoleBindings everywhere; rules are additive; nothing is ever denied by RBAC.
- pkg/apis/rbac/v1/evaluation_helpers.go (RuleAllows): verbs, apiGroups and resources with `*`;
  a subresource is requested as `pods/exec` and matched exactly, by `*/exec` or by `*` (never by
  `pods`); `resourceNames` restrict to named objects (a request without a name, list or create,
  never matches a rule with resourceNames).
- pkg/registry/rbac/validation/rule.go (appliesToUser): User by name, Group by membership, and
  ServiceAccount by `system:serviceaccount:<ns>:<name>`, the namespace defaulting to the binding's.
- The groups every identity carries (k8s.io/apiserver/pkg/authentication/group and
  serviceaccount): authenticated users are in `system:authenticated`, service accounts also in
  `system:serviceaccounts` and `system:serviceaccounts:<ns>`; anonymous requests are
  `system:anonymous` in `system:unauthenticated`. `system:masters` passes every check
  (the privileged-group authorizer placed before RBAC).
- pkg/controller/clusterroleaggregation: a ClusterRole with an aggregationRule has the union of
  the rules of every ClusterRole whose labels match one of its clusterRoleSelectors.
- pkg/registry/rbac/rolebinding/policybased/storage.go and escalation_check.go: creating a
  (Cluster)RoleBinding needs `create` on it and then system:masters, or `bind` on the referenced
  role, or holding every permission the role grants in that namespace
  (pkg/registry/rbac/validation/policy_comparator.go, Covers). Writing a Role: `escalate` instead
  of `bind` (pkg/registry/rbac/role/policybased/storage.go).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Rule = dict[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class Subject:
    """A binding subject; as a requester, a Group stands for a (nameless) member of that group."""

    kind: str  # Group, User or ServiceAccount
    name: str
    namespace: str | None = None


@dataclass(frozen=True)
class UserInfo:
    """What the authenticator hands the authorizer: a name and every group, implicit ones included."""

    name: str
    groups: tuple[str, ...] = ()


def user_info(who: Subject | UserInfo) -> UserInfo:
    """The identity a request carries, with the groups the API server adds."""
    if isinstance(who, UserInfo):
        return who
    if who.kind == "ServiceAccount":
        namespace = who.namespace or ""
        return UserInfo(
            f"system:serviceaccount:{namespace}:{who.name}",
            ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
        )
    if who.kind == "Group":
        return UserInfo(f"a-member-of:{who.name}", (who.name, AUTHENTICATED))
    return UserInfo(who.name, (AUTHENTICATED,))


def applies_to(subject: dict[str, Any], user: UserInfo, binding_namespace: str | None) -> bool:
    """appliesToUser: does binding subject `subject` name this identity?"""
    kind: str = subject["kind"]
    name: str = subject["name"]
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace or ""
        return namespace != "" and user.name == f"system:serviceaccount:{namespace}:{name}"
    return False


def rule_allows(rule: Rule, verb: str, group: str, resource: str, subresource: str, name: str) -> bool:
    """RuleAllows for a resource request."""
    if not ("*" in rule.get("verbs", []) or verb in rule.get("verbs", [])):
        return False
    if not ("*" in rule.get("apiGroups", []) or group in rule.get("apiGroups", [])):
        return False
    combined = f"{resource}/{subresource}" if subresource else resource
    resources = rule.get("resources", [])
    matched = any(r in ("*", combined) or (subresource != "" and r == f"*/{subresource}") for r in resources)
    names = rule.get("resourceNames") or []
    return matched and (not names or name in names)


def _selector_matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    # metav1.LabelSelectorAsSelector: an empty selector is labels.Everything().
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _aggregate(cluster_roles: dict[str, dict[str, Any]]) -> dict[str, list[Rule]]:
    """The effective rules of every ClusterRole once the aggregation controller has run."""
    rules: dict[str, list[Rule]] = {}
    for name, role in cluster_roles.items():
        selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors")
        if selectors is None:
            rules[name] = list(role.get("rules") or [])
            continue
        collected: list[Rule] = []
        for other_name in sorted(cluster_roles):
            labels = cluster_roles[other_name]["metadata"].get("labels") or {}
            if other_name != name and any(_selector_matches(s, labels) for s in selectors):
                collected += [r for r in cluster_roles[other_name].get("rules") or [] if r not in collected]
        rules[name] = collected
    return rules


def _split(resource: str) -> tuple[str, str]:
    base, _, sub = resource.partition("/")
    return base, sub


def _covers_one(owner: Rule, verb: str, group: str, resource: str, name: str) -> bool:
    """ruleCovers for one atomic servant rule (one verb, group, resource, resourceName)."""
    owner_names = owner.get("resourceNames") or []
    return (
        ("*" in owner.get("verbs", []) or verb in owner.get("verbs", []))
        and ("*" in owner.get("apiGroups", []) or group in owner.get("apiGroups", []))
        and _resource_covered(owner.get("resources", []), resource)
        and (not owner_names or (name != "" and name in owner_names))
    )


def _resource_covered(owned: list[str], resource: str) -> bool:
    if "*" in owned or resource in owned:
        return True
    return "/" in resource and "*/" + resource.split("/", 1)[1] in owned


def covers(owner_rules: list[Rule], servant_rules: list[Rule]) -> bool:
    """policy_comparator.Covers: every atomic piece of the servant rules is held by some owner rule."""
    for rule in servant_rules:
        for verb in rule.get("verbs", []):
            for group in rule.get("apiGroups", []):
                for resource in rule.get("resources", []):
                    for name in rule.get("resourceNames") or [""]:
                        if not any(_covers_one(o, verb, group, resource, name) for o in owner_rules):
                            return False
    return True


class Authorizer:
    """Answers access questions from the rendered RBAC objects of a plan."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        cluster_roles = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ClusterRole"}
        self.cluster_role_rules = _aggregate(cluster_roles)
        self.roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects if o["kind"] == "Role"}
        self.role_bindings = [o for o in objects if o["kind"] == "RoleBinding"]
        self.cluster_role_bindings = [o for o in objects if o["kind"] == "ClusterRoleBinding"]

    def role_rules(self, role_ref: dict[str, Any], namespace: str | None) -> list[Rule]:
        if role_ref["kind"] == "ClusterRole":
            return self.cluster_role_rules.get(role_ref["name"], [])
        role = self.roles.get((namespace or "", role_ref["name"]))
        return list(role.get("rules") or []) if role else []

    def rules_for(self, who: Subject | UserInfo, namespace: str) -> list[Rule]:
        """RulesFor: every rule granted to the identity in `namespace` (cluster-wide ones included)."""
        user = user_info(who)
        rules: list[Rule] = []
        for binding in self.cluster_role_bindings:
            if any(applies_to(s, user, None) for s in binding.get("subjects") or []):
                rules += self.role_rules(binding["roleRef"], None)
        for binding in self.role_bindings:
            bound_in = binding["metadata"]["namespace"]
            if bound_in == namespace and any(applies_to(s, user, bound_in) for s in binding.get("subjects") or []):
                rules += self.role_rules(binding["roleRef"], bound_in)
        return rules

    def allowed(
        self, who: Subject | UserInfo, verb: str, resource: str, namespace: str, group: str = "", name: str = ""
    ) -> bool:
        """May `who` do `verb` on `resource` (`pods` or `pods/exec`) named `name` in `namespace`?"""
        user = user_info(who)
        if MASTERS in user.groups:
            return True
        base, sub = _split(resource)
        return any(rule_allows(r, verb, group, base, sub, name) for r in self.rules_for(user, namespace))

    def may_create_binding(self, who: Subject | UserInfo, binding: dict[str, Any]) -> bool:
        """Create a RoleBinding: `create` on rolebindings, then masters, `bind`, or holding the role's rules."""
        user = user_info(who)
        namespace = binding["metadata"]["namespace"]
        if not self.allowed(user, "create", "rolebindings", namespace, group=RBAC_GROUP):
            return False
        if MASTERS in user.groups:
            return True
        role_ref = binding["roleRef"]
        kind = "clusterroles" if role_ref["kind"] == "ClusterRole" else "roles"
        if self.allowed(user, "bind", kind, namespace, group=RBAC_GROUP, name=role_ref["name"]):
            return True
        return covers(self.rules_for(user, namespace), self.role_rules(role_ref, namespace))

    def may_write_role(self, who: Subject | UserInfo, role: dict[str, Any]) -> bool:
        """Create a Role: `create` on roles, then masters, `escalate`, or holding every rule it grants."""
        user = user_info(who)
        namespace = role["metadata"]["namespace"]
        if not self.allowed(user, "create", "roles", namespace, group=RBAC_GROUP):
            return False
        if MASTERS in user.groups or self.allowed(
            user, "escalate", "roles", namespace, group=RBAC_GROUP, name=role["metadata"]["name"]
        ):
            return True
        return covers(self.rules_for(user, namespace), list(role.get("rules") or []))
