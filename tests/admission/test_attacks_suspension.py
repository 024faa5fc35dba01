"""A suspended tenant's deployer (which keeps its rights) played through RBAC and admission on dev,
prod and prod-aws: no new load balancer, no policy admitting addresses, no Flux object unsuspended
(`tenancy-suspension-load-balancers`, `tenancy-suspension-flux`). Each attack is admitted while
the same tenant is active, and what takes an object away stays possible while suspended."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.admission.layers import ACME_DEV, ACME_PROD, Cluster, cluster, platform_identity
from tests.rbac import Subject, UserInfo
from tests.support import plan, tenant_document, write_tenants

SERVICES = "/v1/services"
POLICIES = "networking.k8s.io/v1/networkpolicies"
HELM_RELEASES = "helm.toolkit.fluxcd.io/v2/helmreleases"
OCI = "source.toolkit.fluxcd.io/v1/ocirepositories"
# The deployer of each environment: people drop to viewer while suspended, the deployer stays.
DEPLOYERS = [(Subject("ServiceAccount", "deployer", ns), ns) for ns in (ACME_DEV, ACME_PROD)]


@pytest.fixture(scope="module", params=["dev", "prod", "prod-aws"])
def clusters(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Cluster, Cluster]:
    """acme with allowLoadBalancer, active and suspended."""
    runs = []
    for lifecycle in ("active", "suspended"):
        acme = tenant_document("acme", allowLoadBalancer=True, lifecycle=lifecycle, access={"admin": ["acme-admins"]})
        runs.append(plan(request.param, write_tenants(Path(tmp_path_factory.mktemp(lifecycle)), acme)))
    return cluster(runs[0]), cluster(runs[1])


def service(kind: str) -> dict[str, Any]:
    spec = {"type": kind, "selector": {"app": "web"}, "ports": [{"port": 443, "targetPort": 8443}]}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": spec}


def policy(peer: dict[str, Any]) -> dict[str, Any]:
    rule = {"from": [peer], "ports": [{"protocol": "TCP", "port": 8443}]}
    spec = {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [rule]}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "lb"}, "spec": spec}


def release(**changes: Any) -> dict[str, Any]:
    spec = {"interval": "10m", "serviceAccountName": "deployer", "chartRef": {"kind": "OCIRepository", "name": "web"}}
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "web"},
        "spec": {**spec, **changes},
    }


def attempt(
    stack: Cluster, who: Subject | UserInfo, operation: str, resource: str, obj: Any, ns: str, old: Any = None
) -> Any:
    return stack.attempt(who, operation, resource, copy.deepcopy(obj), ns, old=copy.deepcopy(old))


@pytest.mark.parametrize(("who", "namespace"), DEPLOYERS)
def test_no_service_becomes_a_load_balancer_while_suspended(
    clusters: tuple[Cluster, Cluster], who: Subject, namespace: str
) -> None:
    active, suspended = clusters
    balancer, plain = service("LoadBalancer"), service("ClusterIP")
    assert attempt(active, who, "CREATE", SERVICES, balancer, namespace).stopped_by is None
    for operation, old in (("CREATE", None), ("UPDATE", plain)):
        outcome = attempt(suspended, who, operation, SERVICES, balancer, namespace, old)
        assert outcome.denied_by("tenancy-suspension-load-balancers", "no Service may become type LoadBalancer"), (
            outcome
        )
    # A ClusterIP Service, a load balancer from before the suspension, and its deletion pass.
    assert attempt(suspended, who, "CREATE", SERVICES, plain, namespace).stopped_by is None
    assert attempt(suspended, who, "UPDATE", SERVICES, balancer, namespace, balancer).stopped_by is None
    assert attempt(suspended, who, "DELETE", SERVICES, None, namespace, balancer).stopped_by is None


@pytest.mark.parametrize(("who", "namespace"), DEPLOYERS)
def test_no_policy_admitting_addresses_is_written_while_suspended(
    clusters: tuple[Cluster, Cluster], who: Subject, namespace: str
) -> None:
    active, suspended = clusters
    clients = policy({"ipBlock": {"cidr": "203.0.113.0/24"}})
    assert attempt(active, who, "CREATE", POLICIES, clients, namespace).stopped_by is None
    for operation, old in (("CREATE", None), ("UPDATE", clients)):
        outcome = attempt(suspended, who, operation, POLICIES, clients, namespace, old)
        assert outcome.denied_by("tenancy-suspension-load-balancers", "no NetworkPolicy admitting ingress"), outcome
    own_pods = policy({"podSelector": {"matchLabels": {"app": "web"}}})
    assert attempt(suspended, who, "CREATE", POLICIES, own_pods, namespace).stopped_by is None
    assert attempt(suspended, who, "DELETE", POLICIES, None, namespace, clients).stopped_by is None


@pytest.mark.parametrize(("who", "namespace"), DEPLOYERS)
def test_no_flux_object_is_unsuspended_while_suspended(
    clusters: tuple[Cluster, Cluster], who: Subject, namespace: str
) -> None:
    active, suspended = clusters
    frozen, running = release(suspend=True), release(suspend=False)
    assert attempt(active, who, "UPDATE", HELM_RELEASES, running, namespace, frozen).stopped_by is None
    source = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "metadata": {"name": "web"}}
    source["spec"] = {"interval": "10m", "url": "oci://ghcr.io/acme/charts/web"}
    for operation, resource, obj, old in (
        ("UPDATE", HELM_RELEASES, running, frozen),
        ("UPDATE", HELM_RELEASES, release(), frozen),
        ("CREATE", HELM_RELEASES, release(), None),
        ("CREATE", OCI, source, None),
    ):
        outcome = attempt(suspended, who, operation, resource, obj, namespace, old)
        assert outcome.denied_by("tenancy-suspension-flux", "must keep spec.suspend: true"), (operation, outcome)
    # Suspended objects may be written; finalizers and deletions pass.
    assert attempt(suspended, who, "CREATE", HELM_RELEASES, frozen, namespace).stopped_by is None
    finalized = copy.deepcopy(running)
    finalized["metadata"]["finalizers"] = ["finalizers.fluxcd.io"]
    assert attempt(suspended, who, "UPDATE", HELM_RELEASES, finalized, namespace, running).stopped_by is None
    leaving = copy.deepcopy(running)
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    leaving["spec"]["interval"] = "1m"
    assert attempt(suspended, who, "UPDATE", HELM_RELEASES, leaving, namespace, running).stopped_by is None
    assert attempt(suspended, who, "DELETE", HELM_RELEASES, None, namespace, running).stopped_by is None


def test_the_platform_renders_the_tenant_file_while_suspended(clusters: tuple[Cluster, Cluster]) -> None:
    """Platform identities are not matched by the Flux part: what they write follows the tenant file."""
    _, suspended = clusters
    platform = platform_identity(suspended.stack)
    assert attempt(suspended, platform, "CREATE", HELM_RELEASES, release(), ACME_PROD).stopped_by is None
