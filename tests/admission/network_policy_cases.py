"""Tenant-authored NetworkPolicies for the `tenancy-network-policies` tests: legitimate ones, and
attacks, each judged the same way in both network modes.

The tenant under test was granted the stack egress entries `payments-api` (203.0.113.0/24, TCP 443)
and `internet-https` (0.0.0.0/0 and ::/0 minus private ranges, TCP 443). `own` is its namespace,
`victim` another tenant's, `sibling` its own other environment.
"""

from __future__ import annotations

import json
from typing import Any

from components.model.settings.network import NON_INTERNET_CIDRS

METADATA_NAME = "kubernetes.io/metadata.name"
HTTPS = [{"protocol": "TCP", "port": 443}]


def policy(
    namespace: str, ingress: list[dict[str, Any]] | None = None, egress: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": []}
    if ingress is not None:
        spec["ingress"], spec["policyTypes"] = ingress, [*spec["policyTypes"], "Ingress"]
    if egress is not None:
        spec["egress"], spec["policyTypes"] = egress, [*spec["policyTypes"], "Egress"]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "mine", "namespace": namespace},
        "spec": spec,
    }


def peer_ns(name: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {METADATA_NAME: name}}}


def _block(cidr: str, *carved: str) -> dict[str, Any]:
    return {"ipBlock": {"cidr": cidr, **({"except": list(carved)} if carved else {})}}


def harmless(own: str) -> dict[str, dict[str, Any]]:
    """Admitted in both modes."""
    web = {"podSelector": {"matchLabels": {"app": "api"}}}
    return {
        "own pods in": policy(own, ingress=[{"from": [web], "ports": [{"port": 8080}]}]),
        "own pods, named port": policy(own, ingress=[{"from": [web], "ports": [{"port": "http"}]}]),
        "own pods, port range": policy(own, ingress=[{"from": [web], "ports": [{"port": 8000, "endPort": 8100}]}]),
        "own namespace by name": policy(own, egress=[{"to": [{**peer_ns(own), "podSelector": {}}]}]),
        "granted egress": policy(own, egress=[{"to": [_block("203.0.113.0/24")], "ports": HTTPS}]),
        "granted egress, protocol left to default": policy(
            own, egress=[{"to": [_block("203.0.113.0/24")], "ports": [{"port": 443}]}]
        ),
        "granted internet, more carved out": policy(
            own, egress=[{"to": [_block("0.0.0.0/0", *NON_INTERNET_CIDRS, "8.8.8.8/32")], "ports": HTTPS}]
        ),
        "deny-all narrowing": policy(own, ingress=[], egress=[]),
    }


def cross_namespace(own: str, victim: str, sibling: str) -> dict[str, dict[str, Any]]:
    """Pod and namespace peers outside the own namespace: denied in both modes. In the
    ClusterNetworkPolicy mode the Admin tier denies the path as well, but an admitted policy would
    stay stored and open it once the stack switches back to the namespaced mode."""
    expressions = [{"key": METADATA_NAME, "operator": "In", "values": [own, victim]}]
    return {
        "another tenant's namespace": policy(own, egress=[{"to": [peer_ns(victim)]}]),
        "own tenant's other environment": policy(own, egress=[{"to": [peer_ns(sibling)]}]),
        "every namespace": policy(own, ingress=[{"from": [{"namespaceSelector": {}}]}]),
        "every namespace, with pods": policy(own, egress=[{"to": [{"namespaceSelector": {}, "podSelector": {}}]}]),
        "forgeable tenant label": policy(
            own, egress=[{"to": [{"namespaceSelector": {"matchLabels": {"tenancy.io/tenant": "acme"}}}]}]
        ),
        "match expressions": policy(own, egress=[{"to": [{"namespaceSelector": {"matchExpressions": expressions}}]}]),
        "extra label beside own name": policy(
            own, egress=[{"to": [{"namespaceSelector": {"matchLabels": {METADATA_NAME: own, "x": "y"}}}]}]
        ),
        "platform namespace": policy(own, ingress=[{"from": [peer_ns("kube-system")]}]),
        "second peer bad": policy(own, egress=[{"to": [{"podSelector": {}}, peer_ns(victim)]}]),
    }


def always_denied(own: str) -> dict[str, dict[str, Any]]:
    """Denied in both modes: addresses, unnamed peers, ports outside the grant, invalid ports."""
    web = [{"podSelector": {"matchLabels": {"app": "api"}}}]
    granted = [_block("203.0.113.0/24")]
    return {
        "ipBlock 0.0.0.0/0": policy(own, egress=[{"to": [_block("0.0.0.0/0")], "ports": HTTPS}]),
        "internet without the private carve-outs": policy(
            own, egress=[{"to": [_block("0.0.0.0/0", "10.0.0.0/8")], "ports": HTTPS}]
        ),
        "metadata server": policy(own, egress=[{"to": [_block("169.254.169.254/32")]}]),
        "inside a granted range": policy(own, egress=[{"to": [_block("203.0.113.0/25")], "ports": HTTPS}]),
        "ingress from the world": policy(own, ingress=[{"from": [_block("0.0.0.0/0")]}]),
        "ingress from the world, on a port": policy(
            own, ingress=[{"from": [_block("0.0.0.0/0")], "ports": [{"port": 8080}]}]
        ),
        "ingress from a granted block": policy(own, ingress=[{"from": [_block("203.0.113.0/24")]}]),
        "egress rule without to": policy(own, egress=[{"ports": HTTPS}]),
        "egress rule with empty to": policy(own, egress=[{"to": []}]),
        "ingress rule without from": policy(own, ingress=[{"ports": [{"port": 8080}]}]),
        "granted block, every port": policy(own, egress=[{"to": granted}]),
        "granted block, other port": policy(own, egress=[{"to": granted, "ports": [{"port": 22}]}]),
        "granted block, other protocol": policy(
            own, egress=[{"to": granted, "ports": [{"protocol": "UDP", "port": 443}]}]
        ),
        "granted block, port range": policy(own, egress=[{"to": granted, "ports": [{"port": 443, "endPort": 8443}]}]),
        "granted block, named port": policy(own, egress=[{"to": granted, "ports": [{"port": "https"}]}]),
        "port 0": policy(own, ingress=[{"from": web, "ports": [{"port": 0}]}]),
        "port 70000": policy(own, ingress=[{"from": web, "ports": [{"port": 70000}]}]),
        "endPort below port": policy(own, ingress=[{"from": web, "ports": [{"port": 9000, "endPort": 8000}]}]),
        "endPort beyond 65535": policy(own, ingress=[{"from": web, "ports": [{"port": 9000, "endPort": 70000}]}]),
        "endPort without port": policy(own, ingress=[{"from": web, "ports": [{"endPort": 8000}]}]),
        "endPort after a named port": policy(own, ingress=[{"from": web, "ports": [{"port": "http", "endPort": 90}]}]),
        "protocol ICMP": policy(own, ingress=[{"from": web, "ports": [{"protocol": "ICMP", "port": 8080}]}]),
        "named port not a service name": policy(own, ingress=[{"from": web, "ports": [{"port": "HTTP_ALT"}]}]),
        "numeric string port": policy(own, ingress=[{"from": web, "ports": [{"port": "8080"}]}]),
    }


def load_balancer(own: str) -> dict[str, dict[str, Any]]:
    """For a tenant with `allowLoadBalancer`: (admitted, denied) ingress from addresses."""
    clients = [_block("0.0.0.0/0")]
    return {
        "admitted: clients on the service port": policy(own, ingress=[{"from": clients, "ports": [{"port": 8080}]}]),
        "admitted: clients on a named port": policy(own, ingress=[{"from": clients, "ports": [{"port": "http"}]}]),
        "denied: clients on every port": policy(own, ingress=[{"from": clients}]),
        "denied: a port entry without a port": policy(own, ingress=[{"from": clients, "ports": [{"protocol": "TCP"}]}]),
        "denied: egress to the same addresses": policy(own, egress=[{"to": clients, "ports": HTTPS}]),
    }


def denial_reason(name: str) -> str:
    """The part of the rule's message that an `always_denied` case must be refused with."""
    if name.startswith("granted block"):
        return "only on the granted protocol and ports"
    if name.startswith("ingress from"):
        return "may only name pods of its own namespace"
    if name.endswith(("without to", "without from", "empty to")):
        return "must name the peers of every rule"
    if any(word in name for word in ("port", "Port", "protocol")):
        return "has an invalid port"
    return "may only name pods of its own namespace"


# --- Paths the platform already opens (issue 26): what charts ship, admitted when it is a subset ---

DNS_NAMESPACE, DNS_LABELS = "kube-system", {"k8s-app": "kube-dns"}
INGRESS_NAMESPACE, MONITORING = "ingress-nginx", "monitoring"
# The example stacks no longer list an ingress controller's namespace (Ingress is off by default,
# the edge is the Gateway: docs/edge.md); a platform that runs one lists it in
# `tenancy:platformNamespaces`. The chart-style tests set that explicitly, so they keep testing
# what a tenant may write about an ingress controller the platform declares.
INGRESS_PLATFORM = json.dumps([{"name": INGRESS_NAMESPACE}, {"name": MONITORING}])
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def dns_peer(**pod_selector: Any) -> dict[str, Any]:
    return {**peer_ns(DNS_NAMESPACE), "podSelector": pod_selector or {"matchLabels": DNS_LABELS}}


def chart_style(own: str) -> dict[str, dict[str, Any]]:
    """Rules charts ship that only repeat (or narrow) a platform path: admitted in both modes, and
    nca shows they open nothing new (tests/guardrails/test_platform_path_subsets.py)."""
    controller = {"matchLabels": {"app.kubernetes.io/name": "ingress-nginx"}}
    narrower_dns = {
        "matchLabels": {**DNS_LABELS, "extra": "x"},
        "matchExpressions": [{"key": "a", "operator": "Exists"}],
    }
    return {
        "DNS egress, UDP and TCP 53": policy(own, egress=[{"to": [dns_peer()], "ports": DNS_PORTS}]),
        "DNS egress, UDP only": policy(own, egress=[{"to": [dns_peer()], "ports": [{"protocol": "UDP", "port": 53}]}]),
        "DNS egress, narrower pod selector": policy(
            own, egress=[{"to": [dns_peer(**narrower_dns)], "ports": DNS_PORTS}]
        ),
        "DNS egress beside own pods": policy(
            own, egress=[{"to": [{"podSelector": {}}]}, {"to": [dns_peer()], "ports": DNS_PORTS}]
        ),
        "ingress controller namespace, service port": policy(
            own, ingress=[{"from": [peer_ns(INGRESS_NAMESPACE)], "ports": [{"port": 8080}]}]
        ),
        "ingress controller pods, every port": policy(
            own, ingress=[{"from": [{**peer_ns(INGRESS_NAMESPACE), "podSelector": controller}]}]
        ),
        "ingress controller, named port": policy(
            own, ingress=[{"from": [peer_ns(INGRESS_NAMESPACE)], "ports": [{"port": "http"}]}]
        ),
        "monitoring scrape port": policy(own, ingress=[{"from": [peer_ns(MONITORING)], "ports": [{"port": 9090}]}]),
        "ingress controller and own pods": policy(
            own, ingress=[{"from": [peer_ns(INGRESS_NAMESPACE), {"podSelector": {}}], "ports": [{"port": 8080}]}]
        ),
    }


def wider_than_platform(own: str) -> dict[str, tuple[dict[str, Any], str]]:
    """Rules that reach past a platform path (or spell it in a form not provably inside it), with the
    part of the message that says what to write instead. Chart switches that produce them are listed
    in docs/network.md (tenant-authored NetworkPolicies)."""
    peers, dns, named = "may only name pods of its own namespace", "may reach cluster DNS", "must name the peers"
    dns_only_namespace = {**peer_ns(DNS_NAMESPACE)}
    return {
        # bitnami `networkPolicy.allowExternalEgress: true` renders an egress rule with no `to`.
        "allow all egress (chart switch)": (policy(own, egress=[{}]), named),
        "DNS ports without peers (common chart shape)": (policy(own, egress=[{"ports": DNS_PORTS}]), named),
        "DNS pods in every namespace": (
            policy(
                own,
                egress=[
                    {"to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": DNS_LABELS}}], "ports": DNS_PORTS}
                ],
            ),
            peers,
        ),
        "DNS namespace, every pod": (policy(own, egress=[{"to": [dns_only_namespace], "ports": DNS_PORTS}]), peers),
        "DNS, another label value": (
            policy(own, egress=[{"to": [dns_peer(matchLabels={"k8s-app": "kube-dns-x"})], "ports": DNS_PORTS}]),
            peers,
        ),
        "DNS by expression only": (
            policy(
                own,
                egress=[
                    {"to": [dns_peer(matchExpressions=[{"key": "k8s-app", "operator": "Exists"}])], "ports": DNS_PORTS}
                ],
            ),
            peers,
        ),
        "DNS without ports": (policy(own, egress=[{"to": [dns_peer()]}]), dns),
        "DNS metrics port": (policy(own, egress=[{"to": [dns_peer()], "ports": [{"port": 9153}]}]), dns),
        "DNS port range": (policy(own, egress=[{"to": [dns_peer()], "ports": [{"port": 53, "endPort": 60}]}]), dns),
        "DNS named port": (
            policy(own, egress=[{"to": [dns_peer()], "ports": [{"protocol": "UDP", "port": "dns"}]}]),
            dns,
        ),
        "DNS, SCTP": (policy(own, egress=[{"to": [dns_peer()], "ports": [{"protocol": "SCTP", "port": 53}]}]), dns),
        "egress to the ingress namespace": (policy(own, egress=[{"to": [peer_ns(INGRESS_NAMESPACE)]}]), peers),
        "ingress from the DNS namespace": (
            policy(own, ingress=[{"from": [dns_peer()], "ports": [{"port": 53}]}]),
            peers,
        ),
        "ingress namespace plus a forgeable label": (
            policy(
                own,
                ingress=[
                    {
                        "from": [
                            {"namespaceSelector": {"matchLabels": {METADATA_NAME: INGRESS_NAMESPACE, "team": "edge"}}}
                        ],
                        "ports": [{"port": 8080}],
                    }
                ],
            ),
            peers,
        ),
        "ingress namespace by expression": (
            policy(
                own,
                ingress=[
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchExpressions": [
                                        {"key": METADATA_NAME, "operator": "In", "values": [INGRESS_NAMESPACE]}
                                    ]
                                }
                            }
                        ]
                    }
                ],
            ),
            peers,
        ),
    }


def wider_than_scrape_ports(own: str) -> dict[str, dict[str, Any]]:
    """Where `platformNamespaces` lists monitoring's ports (9090, 9100): a tenant rule from it stays on them."""
    scrape = [peer_ns(MONITORING)]
    return {
        "monitoring, every port": policy(own, ingress=[{"from": scrape}]),
        "monitoring, another port": policy(own, ingress=[{"from": scrape, "ports": [{"port": 22}]}]),
        "monitoring, UDP": policy(own, ingress=[{"from": scrape, "ports": [{"protocol": "UDP", "port": 9090}]}]),
        "monitoring, named port": policy(own, ingress=[{"from": scrape, "ports": [{"port": "metrics"}]}]),
        "monitoring, range over the port": policy(
            own, ingress=[{"from": scrape, "ports": [{"port": 9090, "endPort": 9100}]}]
        ),
    }
