"""Tenant NetworkPolicies that repeat a platform path (DNS egress, ingress from the ingress
controller's or monitoring's namespace), as charts ship them, open nothing new (issue 26).

Played on dev, prod and prod-aws in both network modes: every chart-style policy of
tests/admission/network_policy_cases.py is admitted by the rendered admission bundle (and every
wider one refused, with what to write instead), then
network-config-analyzer computes the connectivity map with and without them (applied to every pod
of acme's dev and prod namespaces). Every connection the map allows with them, it allowed without
them, on a sample of ports and both protocols; the platform paths they name stay open.
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

import pytest

from tests.admission.network_policy_cases import INGRESS_PLATFORM, chart_style, wider_than_platform
from tests.cel_admission import AdmissionChain, Request
from tests.guardrails.network_analyzer import Connectivity, analyze, nca_command
from tests.guardrails.test_cluster_network_policy import cluster_mode
from tests.support import EXAMPLE_TENANTS, kubernetes_objects, objects_of_kind, plan
from tools.plan.harness import ProgramRun

pytestmark = pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")
NAMESPACES = ["tenant-acme-dev", "tenant-acme-prod"]
PORTS = [22, 53, 80, 443, 3306, 5432, 8000, 8080, 9090, 9100, 9153]
# Pods a wider rule would reach: a DNS-labelled pod outside kube-system, more kube-system pods.
EXTRA_PODS = [
    ("tenant-genomics-lab-dev", "fake-dns", {"k8s-app": "kube-dns"}),
    ("kube-system", "coredns-narrow", {"k8s-app": "kube-dns", "extra": "x", "a": "1"}),
    ("kube-system", "metrics-server", {"k8s-app": "metrics-server"}),
]


def _chart_policies() -> list[dict[str, Any]]:
    policies = []
    for namespace in NAMESPACES:
        for index, obj in enumerate(chart_style(namespace).values()):
            applied = copy.deepcopy(obj)
            applied["metadata"]["name"] = f"chart-{index}"
            applied["spec"]["podSelector"] = {}  # every pod of the namespace: the widest a chart could pick
            policies.append(applied)
    return policies


def _admit(run: ProgramRun, chain: AdmissionChain, obj: dict[str, Any]) -> Any:
    namespace = obj["metadata"]["namespace"]
    [ns] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == namespace]
    request = Request(
        "CREATE",
        "networking.k8s.io/v1/networkpolicies",
        "NetworkPolicy",
        object=obj,
        namespace_object=ns,
        username=f"system:serviceaccount:{namespace}:deployer",
        groups=["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
    )
    return chain.admit(request)


def _admitted(run: ProgramRun, policies: list[dict[str, Any]]) -> None:
    """Every chart-style policy is admitted on this stack and mode, every wider one refused."""
    chain = AdmissionChain(kubernetes_objects(run))
    for namespace in NAMESPACES:
        for name, (obj, reason) in wider_than_platform(namespace).items():
            decision = _admit(run, chain, obj)
            assert any(d.startswith("tenancy-network-policies: ") and reason in d for d in decision.denials), name
    for obj in policies:
        decision = _admit(run, chain, obj)
        assert decision.allowed, (obj["metadata"], decision.denials)


def _samples(end: str) -> list[str]:
    """A pod stays itself; an address range is sampled at the low end of each of its parts."""
    if "/" in end:
        return [end]
    return [str(ipaddress.ip_address(part.partition("-")[0])) for part in end.split(",")]


def _nothing_new(before: Connectivity, after: Connectivity) -> int:
    checked = 0
    for (source, destination), _ in after.edges.items():
        for src in _samples(source):
            for dst in _samples(destination):
                for port in PORTS:
                    for protocol in ("TCP", "UDP"):
                        if not ("/" in src or "/" in dst):
                            continue
                        if after.allows(src, dst, port, protocol):
                            checked += 1
                            assert before.allows(src, dst, port, protocol), (src, dst, port, protocol)
    return checked


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_chart_style_policies_are_admitted_and_open_nothing_new(stack: str, mode: str) -> None:
    network = {"network": cluster_mode(stack)} if mode != "networkPolicy" else {}
    run = plan(stack, EXAMPLE_TENANTS, platformNamespaces=INGRESS_PLATFORM, **network)
    policies = _chart_policies()
    _admitted(run, policies)
    before = analyze(run, extra_pods=EXTRA_PODS)
    after = analyze(run, policies, extra_pods=EXTRA_PODS)
    assert _nothing_new(before, after) > 100
    for namespace in NAMESPACES:
        app = f"{namespace}/app"
        assert after.allows(app, "kube-system/coredns", 53, "UDP")
        assert after.allows(app, "kube-system/coredns", 53, "TCP")
        assert after.allows("ingress-nginx/ingress-controller", app, 8080)
        assert after.allows("monitoring/prometheus", app, 9090)
        assert not after.reaches(app, "tenant-genomics-lab-dev/fake-dns")
        assert not after.reaches(app, "kube-system/metrics-server")
