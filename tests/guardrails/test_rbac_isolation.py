"""RBAC isolation proven from the rendered Roles, ClusterRoles and bindings with tests/rbac.py.

The evaluator gives every identity the groups the API server adds (system:authenticated and the
service-account groups), so a binding to such a group is seen for what it is: a grant to everyone.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.model.core.labels import GROUPS_KEY, TENANT_KEY
from tests.rbac import Authorizer, Subject, UserInfo
from tests.support import kubernetes_objects, objects_of_kind
from tools.plan.harness import ProgramRun

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
        # The tenant roles, or a virtual cluster's syncer and access roles (components/vcluster/rbac.py).
        assert binding["roleRef"]["name"].startswith(("tenancy-tenant-", "tenancy-vcluster-")), binding["metadata"]


# --- Outsiders: nobody outside a tenant reaches its namespaces, on every stack ----------------

PROBES = [
    ("get", "secrets", ""),
    ("list", "secrets", ""),
    ("get", "configmaps", ""),
    ("list", "pods", ""),
    ("create", "pods", ""),
    ("create", "pods/exec", ""),
    ("patch", "deployments", "apps"),
    ("create", "rolebindings", "rbac.authorization.k8s.io"),
]


def _outsiders(objects: list[dict[str, Any]]) -> list[tuple[str | None, UserInfo]]:
    """(owning tenant or None, identity): strangers, anonymous, other namespaces' service accounts."""
    found: list[tuple[str | None, UserInfo]] = [
        (None, UserInfo("mallory", ("system:authenticated",))),
        (None, UserInfo("system:anonymous", ("system:unauthenticated",))),
        (
            None,
            UserInfo(
                "system:serviceaccount:default:default",
                ("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"),
            ),
        ),
    ]
    for ns in (o for o in objects if o["kind"] == "Namespace"):
        tenant = ns["metadata"].get("labels", {}).get(TENANT_KEY)
        if tenant is None:
            continue
        name = ns["metadata"]["name"]
        sa_groups = ("system:serviceaccounts", f"system:serviceaccounts:{name}", "system:authenticated")
        found.append((tenant, UserInfo(f"system:serviceaccount:{name}:deployer", sa_groups)))
        for group in filter(None, ns["metadata"].get("annotations", {}).get(GROUPS_KEY, "").split(",")):
            found.append((tenant, UserInfo(f"a-member-of:{group}", (group, "system:authenticated"))))
    return found


def isolation_violations(objects: list[dict[str, Any]]) -> list[str]:
    """Every probe an identity outside a tenant may perform in one of the tenant's namespaces."""
    authz = Authorizer(objects)
    outsiders = _outsiders(objects)
    violations = []
    for ns in (o for o in objects if o["kind"] == "Namespace"):
        tenant = ns["metadata"].get("labels", {}).get(TENANT_KEY)
        if tenant is None:
            continue
        for owner, user in outsiders:
            if owner == tenant:
                continue
            for verb, resource, group in PROBES:
                if authz.allowed(user, verb, resource, ns["metadata"]["name"], group=group):
                    violations.append(f"{user.name} {user.groups} may {verb} {resource} in {ns['metadata']['name']}")
    return violations


def test_no_outsider_reaches_a_tenant_namespace(any_stack_plan: ProgramRun) -> None:
    objects = kubernetes_objects(any_stack_plan)
    assert len(_outsiders(objects)) > 6
    assert isolation_violations(objects) == []


@pytest.mark.parametrize(
    "group",
    ["system:authenticated", "system:serviceaccounts", "system:unauthenticated", "system:serviceaccounts:default"],
)
@pytest.mark.parametrize("kind", ["RoleBinding", "ClusterRoleBinding"])
def test_a_planted_binding_to_an_implicit_group_is_caught(dev_plan: ProgramRun, group: str, kind: str) -> None:
    """The isolation check must fail when any rendered object binds a group everyone carries."""
    planted = {
        "kind": kind,
        "metadata": {"name": "oops", **({"namespace": ACME_DEV} if kind == "RoleBinding" else {})},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "tenancy-tenant-viewer"},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}],
    }
    violations = isolation_violations([*kubernetes_objects(dev_plan), planted])
    assert any(f"may list pods in {ACME_DEV}" in v for v in violations), violations


# --- Hole 3: no tenant writes endpoints (traffic smuggling through the shared ingress) ----------

TENANT_SUBJECTS = [ACME_ADMIN, ACME_OPERATOR, ACME_VIEWER]


def _deployers(namespace: str) -> Subject:
    return Subject("ServiceAccount", "deployer", namespace)


def test_no_tenant_identity_writes_endpoints_or_endpoint_slices(any_stack_plan: ProgramRun) -> None:
    authz = Authorizer(kubernetes_objects(any_stack_plan))
    for namespace in (ACME_DEV, ACME_PROD):
        for subject in [*TENANT_SUBJECTS, _deployers(namespace)]:
            for group, resource in [("", "endpoints"), ("discovery.k8s.io", "endpointslices")]:
                for verb in WRITES:
                    assert not authz.allowed(subject, verb, resource, namespace, group=group), (subject, verb, resource)
    # Reading them stays possible (debugging a Service), and Services are still written.
    assert authz.allowed(ACME_ADMIN, "list", "endpointslices", ACME_DEV, group="discovery.k8s.io")
    assert authz.allowed(ACME_ADMIN, "create", "services", ACME_DEV)
    assert authz.allowed(_deployers(ACME_PROD), "create", "services", ACME_PROD)


# --- Hole 4: tenants write what the hostname rules govern, never CertificateRequests -----------


def test_tenants_write_certificates_and_listener_sets_but_not_certificate_requests(any_stack_plan: ProgramRun) -> None:
    authz = Authorizer(kubernetes_objects(any_stack_plan))
    for subject, namespace in [(ACME_ADMIN, ACME_DEV), (_deployers(ACME_PROD), ACME_PROD)]:
        assert authz.allowed(subject, "create", "certificates", namespace, group="cert-manager.io")
        assert authz.allowed(subject, "create", "listenersets", namespace, group="gateway.networking.k8s.io")
        assert authz.allowed(subject, "create", "ingresses", namespace, group="networking.k8s.io")
        assert authz.allowed(subject, "get", "certificaterequests", namespace, group="cert-manager.io")
        for verb in WRITES:
            assert not authz.allowed(subject, verb, "certificaterequests", namespace, group="cert-manager.io")


# --- Hole 6: the operator writes no pod spec; nobody mints service-account tokens ---------------

POD_SPEC_WRITERS = [
    ("", "pods", ["create", "update", "patch"]),
    ("", "pods/ephemeralcontainers", ["update", "patch"]),
    ("", "pods/exec", ["create", "get"]),
    ("", "pods/attach", ["create", "get"]),
    ("apps", "deployments", ["create", "update", "patch"]),
    ("apps", "statefulsets", ["create", "update", "patch"]),
    ("apps", "daemonsets", ["create", "update", "patch"]),
    ("apps", "replicasets", ["create", "update", "patch"]),
    ("batch", "jobs", ["create", "update", "patch"]),
    ("batch", "cronjobs", ["create", "update", "patch"]),
    ("", "replicationcontrollers", ["create", "update", "patch"]),
]


def test_operator_cannot_reach_secrets_through_a_pod_spec(any_stack_plan: ProgramRun) -> None:
    """An operator may not read Secrets, so it may not write anything that mounts one or runs as an identity."""
    authz = Authorizer(kubernetes_objects(any_stack_plan))
    for group, resource, verbs in POD_SPEC_WRITERS:
        for verb in verbs:
            assert not authz.allowed(ACME_OPERATOR, verb, resource, ACME_DEV, group=group), (verb, resource)
    assert not authz.allowed(ACME_OPERATOR, "get", "secrets", ACME_DEV)
    # What the role is for still works: restart (delete pods), scale, clean up jobs, port-forward, logs.
    assert authz.allowed(ACME_OPERATOR, "delete", "pods", ACME_DEV)
    assert authz.allowed(ACME_OPERATOR, "patch", "deployments/scale", ACME_DEV, group="apps")
    assert authz.allowed(ACME_OPERATOR, "update", "statefulsets/scale", ACME_DEV, group="apps")
    assert authz.allowed(ACME_OPERATOR, "delete", "jobs", ACME_DEV, group="batch")
    assert authz.allowed(ACME_OPERATOR, "create", "pods/portforward", ACME_DEV)
    assert authz.allowed(ACME_OPERATOR, "get", "pods/log", ACME_DEV)


def test_no_tenant_identity_requests_service_account_tokens(any_stack_plan: ProgramRun) -> None:
    authz = Authorizer(kubernetes_objects(any_stack_plan))
    for namespace in (ACME_DEV, ACME_PROD):
        for subject in [*TENANT_SUBJECTS, _deployers(namespace)]:
            assert not authz.allowed(subject, "create", "serviceaccounts/token", namespace), subject


def test_tenant_identities_cannot_bind_or_write_roles(any_stack_plan: ProgramRun) -> None:
    """The API server's bind/escalate checks never come into play: no tenant role writes RBAC at all."""
    authz = Authorizer(kubernetes_objects(any_stack_plan))
    for binding in objects_of_kind(any_stack_plan, "RoleBinding", ACME_DEV):
        for subject in [*TENANT_SUBJECTS, _deployers(ACME_DEV)]:
            assert not authz.may_create_binding(subject, binding), (subject, binding["metadata"]["name"])
    role = {"kind": "Role", "metadata": {"name": "mine", "namespace": ACME_DEV}, "rules": []}
    assert not authz.may_write_role(ACME_ADMIN, role)
    platform = UserInfo("tenancy-ci", ("system:masters", "system:authenticated"))
    assert all(authz.may_create_binding(platform, b) for b in objects_of_kind(any_stack_plan, "RoleBinding"))


def test_no_tenant_identity_binds_pods_to_nodes(any_stack_plan: ProgramRun) -> None:
    """Hole 5's other door: `pods/binding` is how the scheduler sets nodeName; only it may."""
    authz = Authorizer(kubernetes_objects(any_stack_plan))
    for namespace in (ACME_DEV, ACME_PROD):
        for subject in [*TENANT_SUBJECTS, _deployers(namespace)]:
            assert not authz.allowed(subject, "create", "pods/binding", namespace), subject
    assert authz.allowed(ACME_ADMIN, "create", "pods", ACME_DEV)
