"""RBAC isolation proven from the rendered Roles, ClusterRoles and bindings with tests/rbac.py."""

from __future__ import annotations

import pytest

from tests.rbac import Authorizer, Subject
from tests.support import kubernetes_objects
from tools.harness import ProgramRun

ACME_ADMIN = Subject("Group", "acme-admins")
ACME_OPERATOR = Subject("Group", "acme-oncall")
ACME_VIEWER = Subject("Group", "acme-support")
GENOMICS_ADMIN = Subject("Group", "idp:genomics-lab-leads")
ACME_DEV, ACME_PROD, GENOMICS_DEV = "tenant-acme-dev", "tenant-acme-prod", "tenant-genomics-lab-dev"
PLATFORM_OWNED = [
    ("", "resourcequotas"),
    ("", "limitranges"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "roles"),
]
WRITES = ["create", "update", "patch", "delete", "deletecollection"]


@pytest.fixture(scope="module")
def authz(dev_plan: ProgramRun) -> Authorizer:
    return Authorizer(kubernetes_objects(dev_plan))


def test_admin_works_in_own_dev_namespace(authz: Authorizer) -> None:
    assert authz.allowed(ACME_ADMIN, "create", "deployments", ACME_DEV, group="apps")
    assert authz.allowed(ACME_ADMIN, "get", "secrets", ACME_DEV)
    assert authz.allowed(ACME_ADMIN, "create", "pods/exec", ACME_DEV)


def test_one_tenants_admin_cannot_read_another_tenants_namespace(authz: Authorizer) -> None:
    for verb in ("get", "list", "watch"):
        for resource in ("pods", "secrets", "configmaps"):
            assert not authz.allowed(ACME_ADMIN, verb, resource, GENOMICS_DEV)
            assert not authz.allowed(GENOMICS_ADMIN, verb, resource, ACME_DEV)


@pytest.mark.parametrize(("group", "resource"), PLATFORM_OWNED)
def test_no_tenant_role_can_edit_platform_owned_objects(authz: Authorizer, group: str, resource: str) -> None:
    for subject in (ACME_ADMIN, ACME_OPERATOR, ACME_VIEWER, Subject("ServiceAccount", "deployer", ACME_DEV)):
        for namespace in (ACME_DEV, ACME_PROD):
            for verb in WRITES:
                assert not authz.allowed(subject, verb, resource, namespace, group=group), (subject, verb, resource)
    assert authz.allowed(ACME_ADMIN, "get", resource, ACME_DEV, group=group)


def test_prod_is_read_only_for_people(authz: Authorizer) -> None:
    for subject in (ACME_ADMIN, ACME_OPERATOR, ACME_VIEWER):
        assert authz.allowed(subject, "get", "pods", ACME_PROD)
        assert not authz.allowed(subject, "get", "secrets", ACME_PROD)
        for verb in WRITES:
            for group, resource in [("", "pods"), ("apps", "deployments"), ("", "secrets"), ("", "configmaps")]:
                assert not authz.allowed(subject, verb, resource, ACME_PROD, group=group)
        assert not authz.allowed(subject, "create", "pods/exec", ACME_PROD)


def test_deployer_writes_its_own_namespace_only(authz: Authorizer) -> None:
    deployer = Subject("ServiceAccount", "deployer", ACME_PROD)
    assert authz.allowed(deployer, "patch", "deployments", ACME_PROD, group="apps")
    assert authz.allowed(deployer, "create", "secrets", ACME_PROD)
    assert not authz.allowed(deployer, "patch", "deployments", ACME_DEV, group="apps")
    assert not authz.allowed(deployer, "get", "pods", GENOMICS_DEV)


def test_viewer_and_operator_cannot_read_secrets(authz: Authorizer) -> None:
    assert not authz.allowed(ACME_VIEWER, "get", "secrets", ACME_DEV)
    assert not authz.allowed(ACME_OPERATOR, "get", "secrets", ACME_DEV)
    assert authz.allowed(ACME_OPERATOR, "delete", "pods", ACME_DEV)
    assert authz.allowed(ACME_OPERATOR, "patch", "deployments/scale", ACME_DEV, group="apps")
    assert not authz.allowed(ACME_OPERATOR, "create", "deployments", ACME_DEV, group="apps")
    assert not authz.allowed(ACME_VIEWER, "delete", "pods", ACME_DEV)


def test_nothing_is_bound_cluster_wide_to_tenants(dev_plan: ProgramRun) -> None:
    objects = kubernetes_objects(dev_plan)
    assert [o for o in objects if o["kind"] == "ClusterRoleBinding" and "tenant" in str(o)] == []
    for binding in (o for o in objects if o["kind"] == "RoleBinding"):
        assert binding["roleRef"]["name"].startswith("tenancy-tenant-"), binding["metadata"]


def test_the_evaluator_grants_what_a_binding_grants() -> None:
    """Guard the helper itself: it must see a grant and respect namespaces and subjects."""
    objects = [
        {
            "kind": "ClusterRole",
            "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
        {
            "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "n1"},
            "roleRef": {"kind": "ClusterRole", "name": "r"},
            "subjects": [{"kind": "Group", "name": "g"}],
        },
    ]
    authz = Authorizer(objects)
    assert authz.allowed(Subject("Group", "g"), "get", "pods", "n1")
    assert not authz.allowed(Subject("Group", "g"), "get", "pods", "n2")
    assert not authz.allowed(Subject("Group", "h"), "get", "pods", "n1")
    assert not authz.allowed(Subject("Group", "g"), "delete", "pods", "n1")
