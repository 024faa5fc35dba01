"""Known-good cases for tests/rbac.py, each one a behaviour of the real RBAC authorizer it cites."""

from __future__ import annotations

from typing import Any

from tests.rbac import Authorizer, Subject, UserInfo, covers, user_info

ALICE = Subject("User", "alice")


def cluster_role(name: str, rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"kind": "ClusterRole", "metadata": {"name": name, **extra.pop("metadata", {})}, "rules": rules, **extra}


def role_binding(namespace: str, role: str, *subjects: dict[str, Any], kind: str = "ClusterRole") -> dict[str, Any]:
    return {
        "kind": "RoleBinding",
        "metadata": {"name": f"{role}-binding", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": list(subjects),
    }


def rule(resources: list[str], verbs: list[str], group: str = "", **extra: Any) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": resources, "verbs": verbs, **extra}


POD_READER = cluster_role("pod-reader", [rule(["pods"], ["get"])])


def test_a_binding_grants_in_its_namespace_to_its_subjects_only() -> None:
    authz = Authorizer([POD_READER, role_binding("n1", "pod-reader", {"kind": "Group", "name": "g"})])
    assert authz.allowed(Subject("Group", "g"), "get", "pods", "n1")
    assert not authz.allowed(Subject("Group", "g"), "get", "pods", "n2")
    assert not authz.allowed(Subject("Group", "h"), "get", "pods", "n1")
    assert not authz.allowed(Subject("Group", "g"), "delete", "pods", "n1")


def test_every_identity_carries_its_implicit_groups() -> None:
    assert user_info(ALICE).groups == ("system:authenticated",)
    sa = user_info(Subject("ServiceAccount", "ci", "n1"))
    assert sa.name == "system:serviceaccount:n1:ci"
    assert set(sa.groups) == {"system:serviceaccounts", "system:serviceaccounts:n1", "system:authenticated"}
    for group, granted in [
        ("system:authenticated", [ALICE, Subject("ServiceAccount", "ci", "n2"), Subject("Group", "x")]),
        ("system:serviceaccounts", [Subject("ServiceAccount", "ci", "n2")]),
        ("system:serviceaccounts:n2", [Subject("ServiceAccount", "other", "n2")]),
    ]:
        authz = Authorizer([POD_READER, role_binding("n1", "pod-reader", {"kind": "Group", "name": group})])
        for who in granted:
            assert authz.allowed(who, "get", "pods", "n1"), (group, who)
    only_n2 = Authorizer(
        [POD_READER, role_binding("n1", "pod-reader", {"kind": "Group", "name": "system:serviceaccounts:n2"})]
    )
    assert not only_n2.allowed(Subject("ServiceAccount", "ci", "n3"), "get", "pods", "n1")
    assert not only_n2.allowed(ALICE, "get", "pods", "n1")
    anonymous = UserInfo("system:anonymous", ("system:unauthenticated",))
    everyone = Authorizer(
        [POD_READER, role_binding("n1", "pod-reader", {"kind": "Group", "name": "system:authenticated"})]
    )
    assert not everyone.allowed(anonymous, "get", "pods", "n1")


def test_service_account_subjects_default_to_the_binding_namespace() -> None:
    authz = Authorizer([POD_READER, role_binding("n1", "pod-reader", {"kind": "ServiceAccount", "name": "ci"})])
    assert authz.allowed(Subject("ServiceAccount", "ci", "n1"), "get", "pods", "n1")
    assert not authz.allowed(Subject("ServiceAccount", "ci", "n2"), "get", "pods", "n1")
    assert not authz.allowed(Subject("User", "system:serviceaccount:n2:ci"), "get", "pods", "n1")


def test_resource_names_restrict_to_named_objects() -> None:
    named = cluster_role("one-secret", [rule(["secrets"], ["get", "list"], resourceNames=["tls"])])
    authz = Authorizer([named, role_binding("n1", "one-secret", {"kind": "User", "name": "alice"})])
    assert authz.allowed(ALICE, "get", "secrets", "n1", name="tls")
    assert not authz.allowed(ALICE, "get", "secrets", "n1", name="db")
    assert not authz.allowed(ALICE, "list", "secrets", "n1")  # a collection request has no name


def test_subresources_are_separate_resources() -> None:
    authz = Authorizer(
        [
            cluster_role("r", [rule(["pods"], ["create", "get"]), rule(["*/scale"], ["update"], group="apps")]),
            role_binding("n1", "r", {"kind": "User", "name": "alice"}),
        ]
    )
    assert authz.allowed(ALICE, "create", "pods", "n1")
    assert not authz.allowed(ALICE, "create", "pods/exec", "n1")
    assert not authz.allowed(ALICE, "get", "pods/log", "n1")
    assert authz.allowed(ALICE, "update", "deployments/scale", "n1", group="apps")
    assert not authz.allowed(ALICE, "update", "deployments", "n1", group="apps")
    star = Authorizer(
        [cluster_role("s", [rule(["*"], ["get"])]), role_binding("n1", "s", {"kind": "User", "name": "alice"})]
    )
    assert star.allowed(ALICE, "get", "pods/log", "n1")  # `*` covers subresources too


def test_aggregated_cluster_roles_collect_the_rules_of_matching_roles() -> None:
    label = {"rbac.example.com/aggregate-to-edit": "true"}
    objects = [
        cluster_role("edit", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": label}]}),
        cluster_role("endpoints-writer", [rule(["endpoints"], ["create"])], metadata={"labels": label}),
        cluster_role("unrelated", [rule(["secrets"], ["get"])]),
        role_binding("n1", "edit", {"kind": "User", "name": "alice"}),
    ]
    authz = Authorizer(objects)
    assert authz.allowed(ALICE, "create", "endpoints", "n1")
    assert not authz.allowed(ALICE, "get", "secrets", "n1")


def test_binding_needs_the_permissions_of_the_role_or_bind() -> None:
    writer = cluster_role("writer", [rule(["rolebindings"], ["create"], group="rbac.authorization.k8s.io")])
    admin = cluster_role("admin", [rule(["*"], ["*"], group="*")])
    objects = [POD_READER, writer, admin, role_binding("n1", "writer", {"kind": "User", "name": "alice"})]
    authz = Authorizer(objects)
    to_reader = role_binding("n1", "pod-reader", {"kind": "User", "name": "bob"})
    # alice may create bindings but holds no pod read: escalation refused.
    assert not authz.may_create_binding(ALICE, to_reader)
    holding = Authorizer([*objects, role_binding("n1", "pod-reader", {"kind": "User", "name": "alice"})])
    assert holding.may_create_binding(ALICE, to_reader)
    assert not holding.may_create_binding(ALICE, role_binding("n1", "admin", {"kind": "User", "name": "bob"}))
    binder = cluster_role(
        "bind-admin", [rule(["clusterroles"], ["bind"], group="rbac.authorization.k8s.io", resourceNames=["admin"])]
    )
    with_bind = Authorizer([*objects, binder, role_binding("n1", "bind-admin", {"kind": "User", "name": "alice"})])
    assert with_bind.may_create_binding(ALICE, role_binding("n1", "admin", {"kind": "User", "name": "bob"}))
    masters = UserInfo("root", ("system:masters", "system:authenticated"))
    assert authz.may_create_binding(masters, role_binding("n1", "admin", {"kind": "User", "name": "bob"}))


def test_covers_follows_the_policy_comparator() -> None:
    assert covers([rule(["*"], ["*"], group="*")], [rule(["pods", "pods/exec"], ["get"])])
    assert covers([rule(["pods"], ["get", "list"])], [rule(["pods"], ["get"])])
    assert not covers([rule(["pods"], ["get"])], [rule(["pods/exec"], ["get"])])
    assert covers([rule(["*/exec"], ["get"])], [rule(["pods/exec"], ["get"])])
    assert not covers([rule(["pods"], ["get"], resourceNames=["a"])], [rule(["pods"], ["get"])])
    assert covers([rule(["pods"], ["get"])], [rule(["pods"], ["get"], resourceNames=["a"])])
    assert not covers([rule(["pods"], ["get"])], [rule(["pods"], ["*"])])


def test_role_writes_need_escalate_or_the_rules() -> None:
    writer = cluster_role("role-writer", [rule(["roles"], ["create"], group="rbac.authorization.k8s.io")])
    authz = Authorizer([writer, role_binding("n1", "role-writer", {"kind": "User", "name": "alice"})])
    role = {"kind": "Role", "metadata": {"name": "r", "namespace": "n1"}, "rules": [rule(["secrets"], ["get"])]}
    assert not authz.may_write_role(ALICE, role)
    escalate = cluster_role("esc", [rule(["roles"], ["escalate"], group="rbac.authorization.k8s.io")])
    esc = Authorizer(
        [writer, escalate, *(role_binding("n1", r, {"kind": "User", "name": "alice"}) for r in ("role-writer", "esc"))]
    )
    assert esc.may_write_role(ALICE, role)
