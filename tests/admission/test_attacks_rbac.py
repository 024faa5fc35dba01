"""The second lock on RoleBindings is per environment (issue 26): a stray identity with RBAC on
RoleBindings (a CI robot, a leftover grant) binds the tenant's people to a write role in their
read-only prod namespace. Played through RBAC and admission on dev, prod and prod-aws: tenant
roles write no RoleBindings (RBAC stops them first); with the stray grant, `tenancy-rbac` refuses
any group binding the platform does not render in that namespace, while the platform identity
and the bindings the platform renders pass."""

from __future__ import annotations

from typing import Any

import pytest

from tests.admission.layers import ACME_ADMIN, ACME_DEV, ACME_PROD, Cluster, cluster, platform_identity
from tests.rbac import Subject, UserInfo
from tools.plan.harness import ProgramRun

RB = "rbac.authorization.k8s.io/v1/rolebindings"
STRAY = UserInfo("ci-robot@example.com", ("system:authenticated",))


def _stray_grant() -> list[dict[str, Any]]:
    """A ClusterRole writing RoleBindings and binding any ClusterRole, bound cluster-wide to STRAY."""
    role = {
        "kind": "ClusterRole",
        "metadata": {"name": "stray-binder"},
        "rules": [
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"], "verbs": ["*"]},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"]},
        ],
    }
    binding = {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "stray-binder"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "stray-binder"},
        "subjects": [{"kind": "User", "name": STRAY.name}],
    }
    return [role, binding]


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan, extra=_stray_grant())


def _binding(role: str, *groups: str, name: str = "extra") -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g} for g in groups],
    }


# acme's file: admin acme-admins, operator acme-oncall, viewer acme-support; prod is read-only.
PROD_ESCALATIONS = [
    ("tenancy-tenant-admin", "acme-admins"),
    ("tenancy-tenant-operator", "acme-oncall"),
    ("tenancy-tenant-deployer", "acme-admins"),
    ("tenancy-tenant-admin", "acme-support"),
]
DEV_MISMATCHES = [
    ("tenancy-tenant-admin", "acme-support"),  # a viewer made admin
    ("tenancy-tenant-deployer", "acme-oncall"),
    ("tenancy-tenant-operator", "acme-support"),
]


def test_people_get_no_write_role_in_prod_whoever_writes_the_binding(stack: Cluster) -> None:
    for role, group in PROD_ESCALATIONS:
        outcome = stack.attempt(STRAY, "CREATE", RB, _binding(role, group), ACME_PROD)
        assert outcome.denied_by("tenancy-rbac", f"binds Group {group} to {role}, which the platform does not grant"), (
            stack.stack,
            role,
            group,
            outcome,
        )
        # An UPDATE that swaps the role of an admitted viewer binding is judged the same.
        old = _binding("tenancy-tenant-viewer", group)
        outcome = stack.attempt(STRAY, "UPDATE", RB, _binding(role, group), ACME_PROD, old=old)
        assert outcome.denied_by("tenancy-rbac"), (role, group, outcome)


def test_a_binding_access_no_longer_allows_can_still_finish_its_deletion(stack: Cluster) -> None:
    # The garbage collector removes the foregroundDeletion finalizer of a binding Pulumi deletes
    # after acme's access shrank (here: an admin binding in read-only prod). That UPDATE changes
    # no subject: denying it left the binding terminating forever (found by the real run).
    terminating = _binding("tenancy-tenant-admin", "acme-admins")
    terminating["metadata"] = {**terminating["metadata"], "finalizers": ["foregroundDeletion"]}
    terminating["metadata"]["deletionTimestamp"] = "2026-11-28T01:52:04Z"
    finished = _binding("tenancy-tenant-admin", "acme-admins")
    finished["metadata"]["deletionTimestamp"] = "2026-11-28T01:52:04Z"
    outcome = stack.attempt(STRAY, "UPDATE", RB, finished, ACME_PROD, old=terminating)
    assert outcome.stopped_by is None, outcome
    # Changing who is bound in the same request is still judged.
    widened = _binding("tenancy-tenant-admin", "acme-admins", "acme-oncall")
    outcome = stack.attempt(STRAY, "UPDATE", RB, widened, ACME_PROD, old=terminating)
    assert outcome.denied_by("tenancy-rbac"), outcome


def test_bindings_beyond_the_tenant_file_are_refused_in_dev_too(stack: Cluster) -> None:
    for role, group in DEV_MISMATCHES:
        outcome = stack.attempt(STRAY, "CREATE", RB, _binding(role, group), ACME_DEV)
        assert outcome.denied_by("tenancy-rbac", f"binds Group {group} to {role}"), (role, group, outcome)


def test_what_the_platform_renders_is_admitted_from_anyone_and_anything_from_the_platform(stack: Cluster) -> None:
    for role, group, namespace in [
        ("tenancy-tenant-viewer", "acme-admins", ACME_PROD),
        ("tenancy-tenant-viewer", "acme-oncall", ACME_PROD),
        ("tenancy-tenant-admin", "acme-admins", ACME_DEV),
        ("tenancy-tenant-operator", "acme-oncall", ACME_DEV),
    ]:
        outcome = stack.attempt(STRAY, "CREATE", RB, _binding(role, group), namespace)
        assert outcome.stopped_by is None, (role, group, namespace, outcome.decision.denials)
    # The platform identity is not matched (it renders the bindings from the tenant file).
    outcome = stack.attempt(
        platform_identity(stack.stack), "CREATE", RB, _binding("tenancy-tenant-admin", "acme-admins"), ACME_PROD
    )
    assert outcome.stopped_by is None, outcome.decision.denials


def test_tenant_identities_write_no_role_bindings(stack: Cluster) -> None:
    deployer = Subject("ServiceAccount", "deployer", ACME_PROD)
    assert (
        stack.attempt(deployer, "CREATE", RB, _binding("tenancy-tenant-admin", "acme-admins"), ACME_PROD).stopped_by
        == "rbac"
    )
    assert (
        stack.attempt(ACME_ADMIN, "CREATE", RB, _binding("tenancy-tenant-admin", "acme-admins"), ACME_DEV).stopped_by
        == "rbac"
    )
