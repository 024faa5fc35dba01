"""Issue 33: a tenant NetworkPolicy narrows the Gateway path to its proxies, never their namespace.

The attack: acme's admin (dev) or deployer (prod) admits the whole `envoy-gateway-system`
namespace on a route port. The platform's path is the proxy pods only (components/guardrails/
network.py `edge_peers`), so the namespace alone would let the Envoy Gateway controller beside them
reach tenant pods. The legitimate twin: the proxies by namespace and their pod labels (more labels
narrow further), on the route port. Checked through admission on dev (kind, the only stack whose
data plane is in-cluster pods) and, for the admitted policy, with nca: the controller still reaches
no tenant pod.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.admission.layers import WRITERS, Cluster, cluster
from tests.guardrails.network_analyzer import analyze, nca_command
from tests.rbac import Subject
from tools.plan.harness import ProgramRun

RESOURCE = "networking.k8s.io/v1/networkpolicies"
NAMESPACE = {"kubernetes.io/metadata.name": "envoy-gateway-system"}
PROXY_LABELS = {"app.kubernetes.io/component": "proxy", "app.kubernetes.io/managed-by": "envoy-gateway"}
POLICY = "tenancy-network-policies"


@pytest.fixture(scope="module")
def dev(dev_plan: ProgramRun) -> Cluster:
    return cluster(dev_plan)


def _policy(peer: dict[str, Any], port: int = 8080) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "from-gateway"},
        "spec": {
            "podSelector": {},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [peer], "ports": [{"protocol": "TCP", "port": port}]}],
        },
    }


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
@pytest.mark.parametrize(
    "peer",
    [
        {"namespaceSelector": {"matchLabels": NAMESPACE}},
        {"namespaceSelector": {"matchLabels": NAMESPACE}, "podSelector": {}},
        # Part of the proxies' labels only, another value for one of them, an expression instead of the labels.
        {
            "namespaceSelector": {"matchLabels": NAMESPACE},
            "podSelector": {"matchLabels": {"app.kubernetes.io/component": "proxy"}},
        },
        {
            "namespaceSelector": {"matchLabels": NAMESPACE},
            "podSelector": {"matchLabels": {**PROXY_LABELS, "app.kubernetes.io/component": "gateway"}},
        },
        {
            "namespaceSelector": {"matchLabels": NAMESPACE},
            "podSelector": {
                "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": ["proxy"]}]
            },
        },
    ],
)
def test_the_gateway_namespace_without_the_proxies_labels_is_denied(
    dev: Cluster, who: Subject, namespace: str, peer: dict[str, Any]
) -> None:
    outcome = dev.attempt(who, "CREATE", RESOURCE, _policy(peer), namespace)
    assert outcome.denied_by(POLICY), (peer, outcome)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_the_proxies_on_a_route_port_are_admitted_and_reach_nothing_more(
    dev: Cluster, dev_plan: ProgramRun, who: Subject, namespace: str
) -> None:
    narrower = {**PROXY_LABELS, "gateway.envoyproxy.io/owning-gateway-name": "platform"}
    for labels in (PROXY_LABELS, narrower):
        peer = {"namespaceSelector": {"matchLabels": NAMESPACE}, "podSelector": {"matchLabels": labels}}
        outcome = dev.attempt(who, "CREATE", RESOURCE, _policy(peer), namespace)
        assert outcome.stopped_by is None, outcome.decision.denials
    # Another port than the route ports stays refused, with the proxies' labels too.
    peer = {"namespaceSelector": {"matchLabels": NAMESPACE}, "podSelector": {"matchLabels": PROXY_LABELS}}
    assert dev.attempt(who, "CREATE", RESOURCE, _policy(peer, 9090), namespace).denied_by(POLICY)


@pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")
def test_an_admitted_gateway_policy_opens_no_path_from_the_controller(dev_plan: ProgramRun) -> None:
    peer = {"namespaceSelector": {"matchLabels": NAMESPACE}, "podSelector": {"matchLabels": PROXY_LABELS}}
    policy = _policy(peer)
    policy["metadata"]["namespace"] = "tenant-acme-dev"
    connectivity = analyze(dev_plan, extra=[policy])
    assert connectivity.allows("envoy-gateway-system/envoy-proxy", "tenant-acme-dev/app", 8080)
    assert not connectivity.reaches("envoy-gateway-system/envoy-gateway", "tenant-acme-dev/app")
