"""Tenant isolation as ClusterNetworkPolicy (`tenancy:network.mode: clusterNetworkPolicy`).

The same model as the namespaced policy (components/guardrails/network.py), moved to the tiers of
policy.networking.k8s.io/v1alpha2 so tenants may write any NetworkPolicy beneath it:

- Admin tier, evaluated before any NetworkPolicy; tenants cannot override it:
  `tenancy-platform` (one object) accepts the platform's paths for every tenant namespace: ingress
  from platform namespaces and operators on their ports, egress to DNS, the API server and the
  cloud's identity endpoints; then denies link-local addresses (metadata servers).
  `tenancy-databases-<namespace>` (one per tenant namespace with databases outside it) accepts
  egress to exactly its environment's database addresses (cloud instances) or shared-instance
  namespaces, on the database ports: a platform path like DNS, so a tenant policy cannot cut it.
  `tenancy-vcluster-<namespace>` (one per virtual cluster) accepts Flux into the control plane pod
  and the control plane's egress to the host API server.
  `tenancy-isolation-<namespace>` (one per tenant namespace) denies every other namespace, both ways.
  The CRD's namespace peers have no sameLabels/notSameLabels (AdminNetworkPolicy had them), so "any
  namespace but this one" can only be written per namespace (docs/adr/0010-cluster-network-policy-mode.md).
- NetworkPolicy tier: the tenant's own policies, free to narrow or open what is left.
- Baseline tier, for pods no NetworkPolicy selects: `tenancy-baseline-own` accepts tenant
  namespaces (only the pod's own one is left after the Admin tier), one `tenancy-egress-<entry>`
  per stack egress entry accepts it for namespaces labelled with the grant, and
  `tenancy-baseline-deny` denies every other address.
No rule uses Pass. Rules of one object apply in order; objects of one tier by priority (lower first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import DatabaseEgress
from components.guardrails.network import NetworkRules, network_rules
from components.model.checks.network import MAX_ITEMS
from components.model.core.labels import TENANT_KEY, platform_labels
from components.model.settings.network import (
    CloudNetworkFacts,
    EgressEntry,
    EgressTarget,
    egress_grant_label,
    internet_carve_outs,
)
from components.model.settings.stack import PlatformNamespace, StackSettings

API_VERSION = "policy.networking.k8s.io/v1alpha2"
KIND = "ClusterNetworkPolicy"
_METADATA_NAME = "kubernetes.io/metadata.name"
# Admin tier: the platform's paths first, then the namespace's databases, then its isolation.
PLATFORM_PRIORITY, DATABASES_PRIORITY, CONTROL_PLANE_PRIORITY, ISOLATION_PRIORITY = 100, 150, 160, 200
# Baseline tier: own namespace, then CIDR grants, internet grants (their private carve-outs must not
# shadow a CIDR grant inside a private range), then the default deny.
OWN_PRIORITY, CIDR_GRANT_PRIORITY, INTERNET_GRANT_PRIORITY, DENY_PRIORITY = 10, 100, 500, 900
ALL_ADDRESSES = ["0.0.0.0/0", "::/0"]
LINK_LOCAL = ["169.254.0.0/16", "fe80::/10"]

Spec = dict[str, Any]


def isolation_name(namespace: str) -> str:
    return f"tenancy-isolation-{namespace}"


def databases_name(namespace: str) -> str:
    return f"tenancy-databases-{namespace}"


def control_plane_name(namespace: str) -> str:
    return f"tenancy-vcluster-{namespace}"


def _tenant_namespaces() -> Spec:
    return {"matchExpressions": [{"key": TENANT_KEY, "operator": "Exists"}]}


def _named(namespace: str) -> Spec:
    return {"matchLabels": {_METADATA_NAME: namespace}}


def _protocols(ports: Sequence[int], protocol: str = "TCP") -> list[Spec]:
    """The listed ports; with none, every port of `protocol` (the CRD has no port-less protocol match)."""
    if not ports:
        return [{protocol.lower(): {"destinationPort": {"range": {"start": 1, "end": 65535}}}}]
    return [{protocol.lower(): {"destinationPort": {"number": port}}} for port in ports]


def _rule(
    name: str,
    action: str,
    peers_key: str,
    peers: list[Spec],
    ports: Sequence[int] = (),
    protocol: str | None = None,
) -> Spec:
    """One rule. Without `protocol`, listed ports are TCP and no ports means every protocol (platform
    namespaces listing no ports); with it, the rule stays on that protocol either way."""
    rule: Spec = {"name": name, "action": action, peers_key: peers}
    if ports or protocol is not None:
        rule["protocols"] = _protocols(ports, protocol or "TCP")
    return rule


def _platform_ingress(platform: Sequence[PlatformNamespace], rules: NetworkRules) -> list[Spec]:
    ingress = [_rule(f"from-{p.name}", "Accept", "from", [{"namespaces": _named(p.name)}], p.ports) for p in platform]
    for operator in rules.operators:
        peer = {
            "pods": {
                "namespaceSelector": _named(operator.namespace),
                "podSelector": {"matchLabels": dict(operator.pod_labels)},
            }
        }
        ingress.append(_rule(f"operator-{operator.namespace}", "Accept", "from", [peer], operator.ports))
    return ingress


def platform_spec(rules: NetworkRules) -> Spec:
    """Admin tier, every tenant namespace: accept the platform's paths, deny metadata addresses.

    `rules` are the stack-wide holes (no tenant egress): network_rules(..., tenant_egress=()).
    """
    dns_peer = {
        "pods": {
            "namespaceSelector": _named(rules.dns.namespace),
            "podSelector": {"matchLabels": dict(rules.dns.pod_labels)},
        }
    }
    dns = {
        "name": "dns",
        "action": "Accept",
        "to": [dns_peer],
        "protocols": [*_protocols([53], "UDP"), *_protocols([53])],
    }
    egress = [dns]
    for index, (blocks, ports, protocol) in enumerate(rules.egress):
        egress.append(
            _rule(f"platform-egress-{index}", "Accept", "to", [{"networks": [b.cidr for b in blocks]}], ports, protocol)
        )
    egress.append(_rule("metadata", "Deny", "to", [{"networks": LINK_LOCAL}]))
    return {
        "tier": "Admin",
        "priority": PLATFORM_PRIORITY,
        "subject": {"namespaces": _tenant_namespaces()},
        "ingress": _platform_ingress(rules.platform_namespaces, rules),
        "egress": egress,
    }


def isolation_spec(namespace: str, rules: NetworkRules | None = None) -> Spec:
    """Admin tier, one tenant namespace: accept the consented tenants' namespaces (the receiving side
    on its ports), then deny every other namespace, in and out."""
    others = [
        {"namespaces": {"matchExpressions": [{"key": _METADATA_NAME, "operator": "NotIn", "values": [namespace]}]}}
    ]
    ingress = [
        _rule(f"consent-from-{ns}", "Accept", "from", [{"namespaces": _named(ns)}], ports, protocol)
        for ns, ports, protocol in (rules.peers_in if rules else ())
    ]
    edge = rules.edge if rules else None
    if edge is not None and edge.namespace is not None and edge.ports:
        # The Gateway's proxies on the tenant's route ports (the stack-wide rule skips their namespace).
        proxies = {
            "pods": {"namespaceSelector": _named(edge.namespace), "podSelector": {"matchLabels": dict(edge.pod_labels)}}
        }
        ingress.append(_rule("gateway", "Accept", "from", [proxies], edge.ports))
    egress = [
        _rule(f"consent-to-{ns}", "Accept", "to", [{"namespaces": _named(ns)}])
        for ns in (rules.peers_out if rules else ())
    ]
    return {
        "tier": "Admin",
        "priority": ISOLATION_PRIORITY,
        "subject": {"namespaces": _named(namespace)},
        "ingress": [*ingress, _rule("other-namespaces", "Deny", "from", others)],
        "egress": [*egress, _rule("other-namespaces", "Deny", "to", others)],
    }


def databases_spec(
    namespace: str, cidrs: Sequence[pulumi.Input[str]], ports: Sequence[int], namespaces: Sequence[str] = ()
) -> Spec:
    """Admin tier, one tenant namespace: accept egress to its own databases on their ports.

    Admin, not Baseline: a Baseline grant would vanish for every pod a tenant NetworkPolicy selects
    for egress, and tenant policies may not name these addresses (they are not the tenant's grant).
    Networks are split into peers of at most MAX_ITEMS, the CRD's limit per peer.
    """
    peers = _network_peers(cidrs)
    peers += [{"namespaces": _named(shared)} for shared in namespaces]
    return {
        "tier": "Admin",
        "priority": DATABASES_PRIORITY,
        "subject": {"namespaces": _named(namespace)},
        "egress": [_rule("databases", "Accept", "to", peers, ports)],
    }


def control_plane_spec(
    namespace: str, pod_labels: dict[str, str], flux_namespace: str, port: int, api_server: EgressTarget
) -> Spec:
    """Admin tier, a virtual cluster's control plane pods only: Flux in on the control plane's port,
    the host API server out (components/vcluster/). Admin, like the database paths: a NetworkPolicy
    selecting the control plane would cut its own namespace's traffic, which only the Baseline
    tier grants in this mode."""
    return {
        "tier": "Admin",
        "priority": CONTROL_PLANE_PRIORITY,
        "subject": {"pods": {"namespaceSelector": _named(namespace), "podSelector": {"matchLabels": pod_labels}}},
        "ingress": [_rule("flux", "Accept", "from", [{"namespaces": _named(flux_namespace)}], [port])],
        "egress": [
            _rule(
                "host-api-server",
                "Accept",
                "to",
                [{"networks": list(api_server.cidrs)}],
                api_server.ports,
                api_server.protocol,
            )
        ],
    }


def baseline_own_spec() -> Spec:
    """Baseline tier: tenant namespaces accept each other; after the Admin tier that is the own namespace only."""
    peers = [{"namespaces": _tenant_namespaces()}]
    return {
        "tier": "Baseline",
        "priority": OWN_PRIORITY,
        "subject": {"namespaces": _tenant_namespaces()},
        "ingress": [_rule("own-namespace", "Accept", "from", peers)],
        "egress": [_rule("own-namespace", "Accept", "to", peers)],
    }


def _network_peers(networks: Sequence[pulumi.Input[str]]) -> list[Spec]:
    """`networks` peers of at most MAX_ITEMS addresses each, the CRD's limit per peer."""
    addresses = list(networks)
    return [{"networks": addresses[start : start + MAX_ITEMS]} for start in range(0, len(addresses), MAX_ITEMS)]


def egress_grant_spec(name: str, entry: EgressEntry, priority: int, excluded: Sequence[str] = ()) -> Spec:
    """Baseline tier: the addresses of one stack egress entry, for namespaces granted it;
    `excluded`: the stack's `internetExcludes`."""
    egress: list[Spec] = []
    if entry.internet:
        carved_v4, carved_v6 = internet_carve_outs(excluded)
        egress.append(_rule("not-private", "Deny", "to", _network_peers([*carved_v4, *carved_v6])))
        networks = ALL_ADDRESSES
    else:
        networks = list(entry.cidrs)
    egress.append(_rule(name, "Accept", "to", [{"networks": networks}], entry.ports, entry.protocol))
    return {
        "tier": "Baseline",
        "priority": priority,
        "subject": {"namespaces": {"matchLabels": {egress_grant_label(name): "granted"}}},
        "egress": egress,
    }


def baseline_deny_spec() -> Spec:
    """Baseline tier: every address no grant accepted (pods a tenant policy selects never get here)."""
    return {
        "tier": "Baseline",
        "priority": DENY_PRIORITY,
        "subject": {"namespaces": _tenant_namespaces()},
        "egress": [_rule("everything-else", "Deny", "to", [{"networks": ALL_ADDRESSES}])],
    }


def shared_specs(
    rules: NetworkRules, egress: dict[str, EgressEntry], internet_excludes: Sequence[str] = ()
) -> dict[str, Spec]:
    """The cluster-wide objects by name: a constant number, whatever the number of tenants."""
    specs = {"tenancy-platform": platform_spec(rules), "tenancy-baseline-own": baseline_own_spec()}
    ordered = sorted(egress.items(), key=lambda item: (item[1].internet, item[0]))
    for index, (name, entry) in enumerate(ordered):
        base = INTERNET_GRANT_PRIORITY if entry.internet else CIDR_GRANT_PRIORITY
        specs[f"tenancy-egress-{name}"] = egress_grant_spec(name, entry, base + index, internet_excludes)
    specs["tenancy-baseline-deny"] = baseline_deny_spec()
    return specs


def _resource(
    resource_name: str, name: str, spec: Spec, labels: dict[str, str], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(
        resource_name,
        api_version=API_VERSION,
        kind=KIND,
        metadata={"name": name, "labels": labels},
        spec=spec,
        opts=opts,
    )


def namespace_isolation(
    prefix: str, namespace: str, labels: dict[str, str], rules: NetworkRules, opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """The namespace's Admin-tier isolation. Cluster-scoped: it is not deleted with the namespace,
    so `opts` must not carry `deleted_with` (Pulumi would skip its deletion and leave it behind)."""
    return _resource(
        f"{prefix}-cluster-isolation", isolation_name(namespace), isolation_spec(namespace, rules), labels, opts
    )


def namespace_databases(
    prefix: str,
    namespace: str,
    labels: dict[str, str],
    egress: DatabaseEgress,
    opts: pulumi.ResourceOptions,
) -> None:
    """The namespace's Admin-tier database egress (the cluster-scoped `tenancy-databases`). Like the
    isolation it is not deleted with the namespace, so `opts` must not carry `deleted_with`."""
    spec = databases_spec(namespace, egress.cidrs, egress.ports, egress.namespaces)
    _resource(f"{prefix}-cluster-databases", databases_name(namespace), spec, labels, opts)


def namespace_control_plane(
    prefix: str, namespace: str, labels: dict[str, str], spec: Spec, opts: pulumi.ResourceOptions
) -> None:
    """A virtual cluster's Admin-tier holes (control_plane_spec); cluster-scoped, so no `deleted_with`."""
    _resource(f"{prefix}-cluster-vcluster", control_plane_name(namespace), spec, labels, opts)


@dataclass
class ClusterIsolationArgs:
    """The stack-wide holes (network_rules(..., tenant_egress=())) and the stack's egress entries."""

    rules: NetworkRules
    egress: dict[str, EgressEntry] = field(default_factory=dict)
    # `tenancy:network.internetExcludes`, carved out of internet entries.
    internet_excludes: list[str] = field(default_factory=list)


class ClusterIsolation(pulumi.ComponentResource):
    """The cluster-wide ClusterNetworkPolicies (`tenancy:index:ClusterIsolation`), once per cluster."""

    def __init__(self, name: str, args: ClusterIsolationArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:ClusterIsolation", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        specs = shared_specs(args.rules, args.egress, args.internet_excludes)
        for object_name, spec in specs.items():
            _resource(f"{name}-{object_name.removeprefix('tenancy-')}", object_name, spec, platform_labels(), child)
        self.register_outputs({"policies": sorted(specs)})


def cluster_isolation_args(settings: StackSettings, facts: CloudNetworkFacts) -> ClusterIsolationArgs:
    """The stack's shared objects: its stack-wide holes and egress entries."""
    network = settings.network
    return ClusterIsolationArgs(
        network_rules(settings=settings, facts=facts, tenant_egress=()),
        dict(network.egress),
        list(network.internet_excludes),
    )
