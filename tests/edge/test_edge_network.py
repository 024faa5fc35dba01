"""Only the Gateway's data plane reaches tenant pods, on the ports their routes name, as nca sees it.

dev (kind): Envoy Gateway's proxy pods (not its controller, not the rest of their namespace);
prod (GKE): the Google Front End ranges the gke-l7 load balancer reaches NEGs from; prod-aws (EKS):
the ALB subnets the stack names. acme opens `routePorts: [8080]`, status-page the port of its app
with `hostnames` in prod; a tenant with neither is reached by no data plane at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.guardrails.network_analyzer import Connectivity, analyze, nca_command
from tests.support import EXAMPLE_TENANTS, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

pytestmark = pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")

PROXY = "envoy-gateway-system/envoy-proxy"
CONTROLLER = "envoy-gateway-system/envoy-gateway"
# One address of each stack's data plane, and one just outside it.
DATA_PLANE = {"dev": PROXY, "prod": "35.191.10.10", "prod-aws": "10.20.241.7"}
OUTSIDE = {"dev": CONTROLLER, "prod": "35.192.0.1", "prod-aws": "10.20.236.1"}
_RUNS: dict[str, tuple[ProgramRun, Connectivity]] = {}


def _analyzed(stack: str) -> tuple[ProgramRun, Connectivity]:
    if stack not in _RUNS:
        run = plan(stack, EXAMPLE_TENANTS)
        _RUNS[stack] = (run, analyze(run))
    return _RUNS[stack]


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_the_data_plane_reaches_route_ports_only(stack: str) -> None:
    _, connectivity = _analyzed(stack)
    source = DATA_PLANE[stack]
    for pod in ("tenant-acme-dev/app", "tenant-acme-prod/worker"):
        assert connectivity.allows(source, pod, 8080), (stack, pod)
        assert not connectivity.allows(source, pod, 9090)
        assert not connectivity.allows(source, pod, 5432)
    assert connectivity.allows(source, "tenant-status-page-prod/app", 8080)
    assert not connectivity.allows(source, "tenant-status-page-prod/app", 80)


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_nothing_else_of_the_edge_reaches_tenants(stack: str) -> None:
    _, connectivity = _analyzed(stack)
    for pod in ("tenant-acme-dev/app", "tenant-status-page-prod/app"):
        assert not connectivity.reaches(OUTSIDE[stack], pod), (stack, pod)


def test_a_tenant_without_routes_is_reached_by_no_data_plane(tmp_path: Path) -> None:
    run = plan("dev", write_tenants(tmp_path / "tenants", tenant_document("quiet")))
    connectivity = analyze(run)
    assert not connectivity.reaches(PROXY, "tenant-quiet-dev/app")


def test_a_suspended_tenant_is_reached_by_no_data_plane(tmp_path: Path) -> None:
    document = tenant_document("paused", lifecycle="suspended", routePorts=[8080])
    connectivity = analyze(plan("dev", write_tenants(tmp_path / "tenants", document)))
    assert not connectivity.reaches(PROXY, "tenant-paused-dev/app")
    # The same tenant active is reached on its port (the test above is not vacuous).
    active = analyze(plan("dev", write_tenants(tmp_path / "active", tenant_document("paused", routePorts=[8080]))))
    assert active.allows(PROXY, "tenant-paused-dev/app", 8080)


def test_the_proxies_namespace_on_every_port_is_not_opened_by_listing_it(tmp_path: Path) -> None:
    # Listing the proxies' namespace explicitly changes nothing: the edge rule still names the pods and ports.
    platform = json.dumps([{"name": "monitoring"}, {"name": "envoy-gateway-system"}])
    run = plan("dev", write_tenants(tmp_path / "tenants", tenant_document("quiet")), platformNamespaces=platform)
    connectivity = analyze(run)
    assert not connectivity.reaches(CONTROLLER, "tenant-quiet-dev/app")
    assert not connectivity.reaches(PROXY, "tenant-quiet-dev/app")
