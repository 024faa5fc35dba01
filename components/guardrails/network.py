"""Network isolation of a tenant namespace: one isolation policy, and egress to its databases.

NetworkPolicies are additive: the isolation policy denies everything not listed, and every other
policy in the namespace can only open more. So the platform keeps to as few objects as possible
(one isolation policy, at most one database egress policy per namespace).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.model.core.labels import namespace_name
from components.model.settings.edge import data_plane
from components.model.settings.network import (
    CLUSTER_MODE,
    CloudNetworkFacts,
    EgressTarget,
    IpTarget,
    OperatorAccess,
    TenantPeer,
    egress_grant_label,
)
from components.model.settings.stack import DnsSettings, PlatformNamespace, StackSettings
from components.model.tenant_file.spec import TenantSpec

ISOLATION_POLICY = "tenancy-isolation"
DATABASES_POLICY = "tenancy-databases"
# Set by the API server on every namespace; the only namespace label a tenant cannot forge.
_METADATA_NAME = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class EdgeAccess:
    """The platform Gateway's data plane and the tenant's route ports it may reach (docs/edge.md).

    In-cluster proxies are selected by namespace and pod labels (not their whole namespace: the
    controller beside them never needs tenant pods); a cloud load balancer by its address ranges.
    """

    namespace: str | None
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    cidrs: Sequence[str] = ()
    ports: Sequence[int] = ()


def route_ports(spec: TenantSpec, environment: str) -> list[int]:
    """The ports the Gateway may reach in one environment: the tenant's `routePorts` and the ports
    of its image apps served on hostnames there."""
    ports = set(spec.route_ports)
    for app in spec.in_environment(spec.apps, environment):
        if app.hostnames and app.image is not None and app.image.port is not None:
            ports.add(app.image.port)
    return sorted(ports)


@dataclass(frozen=True)
class NetworkRules:
    """Everything the isolation policy of one tenant namespace opens, resolved from stack and cloud."""

    platform_namespaces: Sequence[PlatformNamespace]
    dns: DnsSettings
    operators: Sequence[OperatorAccess] = ()
    # Egress by address: the API server, identity endpoints, the tenant's granted entries.
    egress: Sequence[tuple[Sequence[IpTarget], Sequence[int], str]] = ()
    # Other tenants' namespaces of this environment, by mutual consent: (source namespace, ports,
    # protocol) that may connect in, and destination namespaces this one may connect to.
    peers_in: Sequence[tuple[str, Sequence[int], str]] = ()
    peers_out: Sequence[str] = ()
    # The Gateway's data plane, on the tenant's route ports; None without a platform Gateway.
    edge: EdgeAccess | None = None


def network_rules(
    *,
    settings: StackSettings,
    facts: CloudNetworkFacts,
    tenant_egress: Sequence[str],
    peers: tuple[str, Sequence[TenantPeer], Sequence[str]] | None = None,
    ports_for_routes: Sequence[int] = (),
) -> NetworkRules:
    """Resolve the holes of one tenant's namespaces: stack settings, cloud facts, the tenant's `egress`,
    and `peers`: (environment, acceptsFrom, connectsTo), both sides consented (catalog checks)."""
    network = settings.network
    targets: list[EgressTarget] = []
    if network.api_server is not None:
        targets.append(network.api_server)
    if network.identity_endpoints:
        targets += facts.identity_endpoints
    egress: list[tuple[Sequence[IpTarget], Sequence[int], str]] = [
        ([IpTarget(cidr=cidr) for cidr in target.cidrs], target.ports, target.protocol) for target in targets
    ]
    for name in tenant_egress:
        entry = network.egress[name]
        if entry.hosts:
            # By name, in the FQDN policy (fqdn.py): no ipBlocks, and a rule with an empty `to`
            # would open every destination.
            continue
        egress.append((entry.ip_targets(network.internet_excludes), entry.ports, entry.protocol))
    operators = {**facts.operators, **network.operators}
    environment, accepts, connects = peers if peers is not None else ("", (), ())
    platform, edge = platform_paths(settings, ports_for_routes)
    return NetworkRules(
        platform,
        settings.dns,
        [operators[k] for k in sorted(operators)],
        egress,
        peers_in=[(namespace_name(p.tenant, environment), p.ports, p.protocol) for p in accepts],
        peers_out=[namespace_name(name, environment) for name in connects],
        edge=edge,
    )


def platform_paths(
    settings: StackSettings, ports_for_routes: Sequence[int]
) -> tuple[list[PlatformNamespace], EdgeAccess | None]:
    """The platform namespaces opened to tenant pods as whole namespaces, and the Gateway's data plane
    on the route ports (None without a platform Gateway)."""
    platform = list(settings.platform_namespaces)
    if not settings.edge.gateway.enabled:
        return platform, None
    plane = data_plane(settings.edge.gateway, settings.edge_facts())
    # The proxies' namespace is listed in platformNamespaces (edge_checks.py) but opened by the
    # edge rule only: its proxies, on the route ports, not the whole namespace on every port.
    platform = [p for p in platform if p.name != plane.namespace]
    return platform, EdgeAccess(plane.namespace, plane.pod_labels, plane.cidrs, sorted(ports_for_routes))


def namespace_paths(platform: Sequence[PlatformNamespace], edge: EdgeAccess | None) -> list[str]:
    """`platform_paths` as the entries tenant NetworkPolicies may repeat (PLATFORM_INGRESS_KEY):
    `name` (every port, as rendered without ports) or `name@TCP/port/port` (rendered TCP ports) per
    platform namespace, and the Gateway's proxies as `namespace@TCP/port/port@key=value;key=value`:
    only on the route ports and only with the proxies' pod labels (issue 33: the namespace alone
    would also admit the Gateway controller beside them). None without route ports (an empty port
    list would mean every port) or when the data plane is a cloud load balancer (no namespace)."""
    entries = [p.name + (f"@TCP{''.join(f'/{port}' for port in p.ports)}" if p.ports else "") for p in platform]
    if edge is not None and edge.namespace is not None and edge.ports:
        labels = ";".join(f"{key}={value}" for key, value in sorted(edge.pod_labels.items()))
        entries.append(f"{edge.namespace}@TCP{''.join(f'/{port}' for port in edge.ports)}@{labels}")
    return entries


def granted_cidrs(settings: StackSettings, tenant_egress: Sequence[str]) -> list[str]:
    """The ipBlocks a tenant's own NetworkPolicies may name, with the protocol and ports they may use,
    as `cidr!except!except@PROTOCOL/port/port` (no port: every port); the admission rule reads them."""
    granted = []
    for name in tenant_egress:
        entry = settings.network.egress[name]
        ports = "".join(f"/{port}" for port in entry.ports)
        granted += [
            "!".join([block.cidr, *block.except_]) + f"@{entry.protocol}{ports}"
            for block in entry.ip_targets(settings.network.internet_excludes)
        ]
    return granted


def dns_entries(dns: DnsSettings) -> list[str]:
    """Cluster DNS as the isolation policy opens it: its namespace, then its pods' `label=value`s
    (label keys and values hold no `=` or `,`); the port is always 53, UDP and TCP."""
    return [dns.namespace, *(f"{key}={value}" for key, value in sorted(dns.pod_labels.items()))]


def network_labels(settings: StackSettings, tenant_egress: Sequence[str]) -> dict[str, str]:
    """Namespace labels the ClusterNetworkPolicy mode selects granted egress by (none in the default mode)."""
    if settings.network.mode != CLUSTER_MODE:
        return {}
    return {egress_grant_label(name): "granted" for name in tenant_egress}


def _ports(ports: Sequence[int], protocol: str = "TCP") -> list[k8s.networking.v1.NetworkPolicyPortArgsDict]:
    """The listed ports; with none, every port of `protocol` only. A rule without `ports` would open
    every protocol, so a setting that names a protocol is never rendered that way."""
    if not ports:
        return [{"protocol": protocol}]
    return [{"protocol": protocol, "port": port} for port in ports]


def edge_peers(edge: EdgeAccess) -> list[k8s.networking.v1.NetworkPolicyPeerArgsDict]:
    """The Gateway's data plane as NetworkPolicy peers: its proxy pods, or its address ranges."""
    peers: list[k8s.networking.v1.NetworkPolicyPeerArgsDict] = []
    if edge.namespace is not None:
        peers.append(
            {
                "namespace_selector": {"match_labels": {_METADATA_NAME: edge.namespace}},
                "pod_selector": {"match_labels": dict(edge.pod_labels)},
            }
        )
    peers += [{"ip_block": {"cidr": cidr}} for cidr in edge.cidrs]
    return peers


def _ingress(rules: NetworkRules) -> list[k8s.networking.v1.NetworkPolicyIngressRuleArgsDict]:
    ingress: list[k8s.networking.v1.NetworkPolicyIngressRuleArgsDict] = [{"from_": [{"pod_selector": {}}]}]
    for platform in rules.platform_namespaces:
        rule: k8s.networking.v1.NetworkPolicyIngressRuleArgsDict = {
            "from_": [{"namespace_selector": {"match_labels": {_METADATA_NAME: platform.name}}}]
        }
        if platform.ports:
            rule["ports"] = _ports(platform.ports)
        ingress.append(rule)
    for operator in rules.operators:
        peer: k8s.networking.v1.NetworkPolicyPeerArgsDict = {
            "namespace_selector": {"match_labels": {_METADATA_NAME: operator.namespace}},
            "pod_selector": {"match_labels": dict(operator.pod_labels)},
        }
        ingress.append({"from_": [peer], "ports": _ports(operator.ports)})
    if rules.edge is not None and rules.edge.ports:
        ingress.append({"from_": edge_peers(rules.edge), "ports": _ports(rules.edge.ports)})
    for namespace, ports, protocol in rules.peers_in:
        consented: k8s.networking.v1.NetworkPolicyIngressRuleArgsDict = {
            "from_": [{"namespace_selector": {"match_labels": {_METADATA_NAME: namespace}}}],
            "ports": _ports(ports, protocol),
        }
        ingress.append(consented)
    return ingress


def _ip_block(block: IpTarget) -> k8s.networking.v1.IPBlockArgsDict:
    ip_block: k8s.networking.v1.IPBlockArgsDict = {"cidr": block.cidr}
    if block.except_:
        ip_block["except_"] = list(block.except_)
    return ip_block


def _egress(rules: NetworkRules) -> list[k8s.networking.v1.NetworkPolicyEgressRuleArgsDict]:
    dns_peer: k8s.networking.v1.NetworkPolicyPeerArgsDict = {
        "namespace_selector": {"match_labels": {_METADATA_NAME: rules.dns.namespace}},
        "pod_selector": {"match_labels": dict(rules.dns.pod_labels)},
    }
    egress: list[k8s.networking.v1.NetworkPolicyEgressRuleArgsDict] = [
        {"to": [{"pod_selector": {}}]},
        {"to": [dns_peer], "ports": [*_ports([53], "UDP"), *_ports([53])]},
    ]
    # Other tenants by consent: every port here, the receiving side's ingress rule limits them.
    egress += [{"to": [{"namespace_selector": {"match_labels": {_METADATA_NAME: ns}}}]} for ns in rules.peers_out]
    for blocks, ports, protocol in rules.egress:
        rule: k8s.networking.v1.NetworkPolicyEgressRuleArgsDict = {
            "to": [{"ip_block": _ip_block(b)} for b in blocks],
            "ports": _ports(ports, protocol),
        }
        egress.append(rule)
    return egress


def isolation_policy_spec(rules: NetworkRules) -> k8s.networking.v1.NetworkPolicySpecArgsDict:
    """Deny all ingress and egress, then allow: same namespace, DNS, platform namespaces and operators
    in, and the stack's and tenant's egress entries out.

    One policy instead of one per hole: NetworkPolicies are additive, so a single object with both
    policy types and these rules is exactly equivalent and keeps one object per namespace.
    """
    return {
        "pod_selector": {},
        "policy_types": ["Ingress", "Egress"],
        "ingress": _ingress(rules),
        "egress": _egress(rules),
    }


def isolation_policy(
    resource_name: str,
    *,
    metadata: k8s.meta.v1.ObjectMetaArgsDict,
    rules: NetworkRules,
    opts: pulumi.ResourceOptions,
) -> k8s.networking.v1.NetworkPolicy:
    """The namespace's isolation policy (`tenancy-isolation`)."""
    return k8s.networking.v1.NetworkPolicy(
        resource_name, metadata=metadata, spec=isolation_policy_spec(rules), opts=opts
    )


def database_egress_policy(
    prefix: str,
    ns_name: str,
    labels: dict[str, str],
    cidrs: Sequence[pulumi.Input[str]],
    ports: list[int],
    opts: pulumi.ResourceOptions,
    namespaces: Sequence[str] = (),
) -> k8s.networking.v1.NetworkPolicy:
    """Egress from the tenant's pods to its own database endpoints, and nowhere else.

    Only for namespaces with databases outside them: cloud databases (by address) and in-cluster
    shared instances (by namespace); in-namespace databases need no rule. Policies are additive,
    so this opens exactly these destinations and ports on top of the isolation policy.
    """
    peers: list[k8s.networking.v1.NetworkPolicyPeerArgsDict] = [{"ip_block": {"cidr": cidr}} for cidr in cidrs]
    peers += [{"namespace_selector": {"match_labels": {_METADATA_NAME: namespace}}} for namespace in namespaces]
    return k8s.networking.v1.NetworkPolicy(
        f"{prefix}-databases",
        metadata={"name": DATABASES_POLICY, "namespace": ns_name, "labels": labels},
        spec={
            "pod_selector": {},
            "policy_types": ["Egress"],
            "egress": [
                {
                    "to": peers,
                    "ports": [{"protocol": "TCP", "port": port} for port in ports],
                }
            ],
        },
        opts=opts,
    )
