"""The syncer's host rights cannot escape its namespace, and the tenant's groups hold on the host only
what they need; judged by the RBAC evaluator (tests/rbac.py) over the rendered roles and bindings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rbac import Authorizer, Subject
from tests.support import kubernetes_objects
from tests.vcluster.helpers import HARD, HARD_ADMIN, HARD_PROD, SOFT, hard_tenant, run_tenants, soft_tenant

SYNCER = Subject("ServiceAccount", "vcluster", HARD)
ADMIN = Subject("Group", HARD_ADMIN)
RBAC = "rbac.authorization.k8s.io"


@pytest.fixture(scope="module")
def authz(tmp_path_factory: pytest.TempPathFactory) -> Authorizer:
    run = run_tenants(tmp_path_factory.mktemp("rbac"), hard_tenant(), soft_tenant())
    return Authorizer(kubernetes_objects(run))


def test_the_syncer_does_its_job_in_its_own_namespace(authz: Authorizer) -> None:
    for verb, resource in [("create", "pods"), ("delete", "pods"), ("create", "services"), ("update", "secrets")]:
        assert authz.allowed(SYNCER, verb, resource, HARD), (verb, resource)
    assert authz.allowed(SYNCER, "patch", "pods/status", HARD)
    assert authz.allowed(SYNCER, "list", "endpoints", HARD)


def test_the_syncer_cannot_aim_a_service_at_other_pods(authz: Authorizer) -> None:
    """The deployer can run a pod as `vcluster`: with Endpoints writes it could point a Service, and
    the shared ingress controller behind an Ingress, at any pod of another tenant (CVE-2021-25740)."""
    for verb in ("create", "update", "patch"):
        assert not authz.allowed(SYNCER, verb, "endpoints", HARD), verb
        assert not authz.allowed(SYNCER, verb, "endpointslices", HARD, group="discovery.k8s.io"), verb


@pytest.mark.parametrize("namespace", [SOFT, HARD_PROD, "kube-system", "flux-system"])
def test_the_syncer_reaches_no_other_namespace(authz: Authorizer, namespace: str) -> None:
    for verb, resource in [("create", "pods"), ("get", "secrets"), ("list", "pods"), ("create", "services")]:
        assert not authz.allowed(SYNCER, verb, resource, namespace), (verb, resource, namespace)


def test_the_syncer_touches_nothing_cluster_scoped(authz: Authorizer) -> None:
    # Cluster-scoped requests: only ClusterRoleBindings apply (namespace '').
    for verb, resource, group in [("list", "nodes", ""), ("get", "namespaces", ""), ("list", "clusterroles", RBAC)]:
        assert not authz.allowed(SYNCER, verb, resource, "", group=group)


def test_the_syncer_cannot_grant_itself_more(authz: Authorizer) -> None:
    """No RBAC verb at all: no Role, no RoleBinding, not even one to a role it already holds."""
    binding = {
        "kind": "RoleBinding",
        "metadata": {"name": "more", "namespace": HARD},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "tenancy-tenant-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "vcluster", "namespace": HARD}],
    }
    assert not authz.may_create_binding(SYNCER, binding)
    role = {"kind": "Role", "metadata": {"name": "r", "namespace": HARD}, "rules": []}
    assert not authz.may_write_role(SYNCER, role)
    for verb in ("create", "update", "bind", "escalate"):
        assert not authz.allowed(SYNCER, verb, "roles", HARD, group=RBAC)
        assert not authz.allowed(SYNCER, verb, "rolebindings", HARD, group=RBAC)
    assert not authz.allowed(SYNCER, "create", "serviceaccounts/token", HARD)


def test_tenant_admins_get_the_kubeconfig_and_a_tunnel_and_view_the_rest(authz: Authorizer) -> None:
    assert authz.allowed(ADMIN, "get", "secrets", HARD, name="vcluster-kubeconfig")
    assert authz.allowed(ADMIN, "create", "pods/portforward", HARD, name="vcluster-0")
    assert authz.allowed(ADMIN, "list", "pods", HARD)
    # Not the namespace's other secrets, not other pods' tunnels, no writes on the host.
    assert not authz.allowed(ADMIN, "get", "secrets", HARD, name="db-orders")
    assert not authz.allowed(ADMIN, "list", "secrets", HARD)
    assert not authz.allowed(ADMIN, "create", "pods/portforward", HARD, name="other-0")
    assert not authz.allowed(ADMIN, "create", "pods/exec", HARD, name="vcluster-0")
    assert not authz.allowed(ADMIN, "create", "deployments", HARD, group="apps")
    assert not authz.allowed(ADMIN, "patch", "statefulsets", HARD, group="apps")


def test_in_a_read_only_environment_no_human_gets_the_kubeconfig(authz: Authorizer) -> None:
    assert not authz.allowed(ADMIN, "get", "secrets", HARD_PROD, name="vcluster-kubeconfig")
    assert authz.allowed(ADMIN, "list", "pods", HARD_PROD)


def test_a_soft_tenants_admins_keep_their_host_rights(tmp_path: Path) -> None:
    """The narrowing applies to virtual-cluster environments only."""
    authz = Authorizer(kubernetes_objects(run_tenants(tmp_path, soft_tenant())))
    assert authz.allowed(Subject("Group", "idp:soft-admins"), "create", "deployments", SOFT, group="apps")
