"""Stack settings for the network model (`tenancy:network`): what tenant namespaces may reach, and who reaches them.

Every tenant namespace is closed by default (components/guardrails/network.py). This model lists the
holes a stack opens for all of its tenants, and the named egress entries a tenant file may ask for
(`egress: [name]`). Safe defaults: no operator, no API server, no egress entry; the cloud's identity
endpoints are open because the platform itself hands tenants a workload identity that needs them.
Ingress from platform namespaces stays where it always was (`tenancy:platformNamespaces`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from components.model.core.fields import DnsLabel, StrictModel

Port = Annotated[int, Field(ge=1, le=65535)]
Protocol = Literal["TCP", "UDP", "SCTP"]

# Never reachable through "internet": private, shared, link-local (metadata servers), loopback and
# multicast ranges, IPv4 and IPv6. Cluster, node and database networks live inside these.
NON_INTERNET_CIDRS = (
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",
    "100.64.0.0/10",  # shared address space (carrier NAT; GKE and EKS allow it for pods)
    "127.0.0.0/8",
    "169.254.0.0/16",  # link-local: metadata servers
    "172.16.0.0/12",
    "192.0.0.0/24",  # IETF protocol assignments
    "192.168.0.0/16",
    "198.18.0.0/15",  # benchmarking; GKE allows it for pods and services, AWS for VPCs
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved; GKE allows it for pods and services
)
NON_INTERNET_CIDRS_V6 = (
    "::1/128",
    "::ffff:0:0/96",  # IPv4-mapped: every private IPv4 address again
    "64:ff9b::/96",  # NAT64 (AWS DNS64/NAT64 reaches private IPv4 addresses of the VPC)
    "64:ff9b:1::/48",  # local-use NAT64
    "2001::/32",  # Teredo (IPv4 tunnelled)
    "2002::/16",  # 6to4 (IPv4 tunnelled)
    "fc00::/7",  # unique local
    "fe80::/10",  # link-local
    "ff00::/8",  # multicast
)


# `tenancy:network.mode` that renders the isolation as ClusterNetworkPolicy (components/guardrails/cluster_network.py).
CLUSTER_MODE = "clusterNetworkPolicy"


# Namespaces granted a stack egress entry carry `egress.tenancy.io/<entry>: granted` (ClusterNetworkPolicy
# mode selects them by it). Entry names are DNS labels, so the key is a valid label key.
EGRESS_GRANT_PREFIX = "egress.tenancy.io/"


def egress_grant_label(entry: str) -> str:
    """The namespace label key that grants one stack egress entry."""
    return f"{EGRESS_GRANT_PREFIX}{entry}"


def _cidr(value: str) -> str:
    """A CIDR in canonical form; host bits set (10.0.0.1/8) are refused, they usually hide a typo."""
    try:
        return str(ipaddress.ip_network(value, strict=True))
    except ValueError as error:
        raise ValueError(f"{value!r} is not a CIDR: {error}") from None


Cidr = Annotated[str, AfterValidator(_cidr)]

# A DNS name of letters, digits and hyphens, labels of 1-63 characters, at least two labels.
_HOST_NAME = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$")


def _host(value: str) -> str:
    """An exact host name (`api.example.com`) or one `*.` wildcard label in front (`*.example.com`).

    GKE's FQDNNetworkPolicy takes these as `name` and `pattern`; its pattern `*.company.com` matches
    `api.company.com` but neither `eu.api.company.com` nor `company.com`
    (https://cloud.google.com/kubernetes-engine/docs/how-to/fqdn-network-policies). A `*` anywhere
    else, a trailing dot, upper case or a longer name than DNS allows is refused.
    """
    name = value.removeprefix("*.")
    if len(name) > 253 or not _HOST_NAME.match(name) or name.rpartition(".")[2].isdigit():
        raise ValueError(
            f"{value!r} is not a host name: lower-case DNS labels such as api.example.com, "
            "optionally with one leading `*.` wildcard label (*.example.com); addresses go in cidrs"
        )
    return value


Host = Annotated[str, AfterValidator(_host)]


class IpTarget(StrictModel):
    """Addresses with ports; `except` carves ranges out of `cidr` (NetworkPolicy ipBlock semantics)."""

    cidr: Cidr
    except_: Annotated[list[Cidr], Field(alias="except")] = []

    @model_validator(mode="after")
    def _inside(self) -> IpTarget:
        outer = ipaddress.ip_network(self.cidr)
        for carved in self.except_:
            inner = ipaddress.ip_network(carved)
            if inner.version != outer.version or not inner.subnet_of(outer):  # type: ignore[arg-type]
                raise ValueError(f"except {carved} is not inside {self.cidr}")
        return self


class EgressTarget(StrictModel):
    """Destinations by address and the ports open to them (empty ports = every port)."""

    # Destination address ranges (IPv4 or IPv6 CIDRs), at least one.
    cidrs: Annotated[list[Cidr], Field(min_length=1)]
    # Destination ports opened (empty: every port).
    ports: list[Port] = []
    # `TCP`, `UDP` or `SCTP`: the protocol of `ports`.
    protocol: Protocol = "TCP"


class EgressEntry(StrictModel):
    """A named egress a tenant file may ask for: listed CIDRs, the internet without private ranges, or
    host names (where the stack's cloud enforces them: `CloudCapabilities.egress_hosts`)."""

    # Destination address ranges (IPv4 or IPv6 CIDRs), such as a partner's API or a VPN range; set exactly
    # one of this, `internet` or `hosts`.
    cidrs: list[Cidr] = []
    # The whole internet except NON_INTERNET_CIDRS(_V6) and the stack's `internetExcludes`: never the
    # cluster, nodes, databases or metadata, as long as those use non-internet ranges or are excluded.
    internet: bool = False
    # Destination host names, exact (`api.example.com`) or with one leading wildcard label
    # (`*.example.com`: one label deep, not the name itself), for SaaS APIs without stable addresses.
    # Only on clouds whose dataplane enforces them (GKE: an FQDNNetworkPolicy, docs/network.md).
    hosts: list[Host] = []
    # Destination ports opened (empty: every port); `[443]` is the usual choice.
    ports: list[Port] = []
    # `TCP`, `UDP` or `SCTP`: the protocol of `ports`.
    protocol: Protocol = "TCP"

    @model_validator(mode="after")
    def _one_kind(self) -> EgressEntry:
        if [bool(self.cidrs), self.internet, bool(self.hosts)].count(True) != 1:
            raise ValueError(
                "set exactly one of cidrs (a list of CIDRs), internet: true or hosts (a list of host names)"
            )
        return self

    def ip_targets(self, excluded: Sequence[str] = ()) -> list[IpTarget]:
        """The ipBlocks this entry opens (none for a hosts entry: an FQDN policy opens those);
        `excluded`: the stack's `internetExcludes`, carved out of an internet entry beside the
        non-internet ranges."""
        if self.hosts:
            return []
        if not self.internet:
            return [IpTarget(cidr=cidr) for cidr in self.cidrs]
        carved_v4, carved_v6 = internet_carve_outs(excluded)
        return [
            IpTarget.model_validate({"cidr": "0.0.0.0/0", "except": carved_v4}),
            IpTarget.model_validate({"cidr": "::/0", "except": carved_v6}),
        ]


def internet_carve_outs(excluded: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """(IPv4, IPv6) ranges an internet entry never reaches: the non-internet ranges and `excluded`."""
    v4 = [*NON_INTERNET_CIDRS, *(c for c in excluded if ipaddress.ip_network(c).version == 4)]
    v6 = [*NON_INTERNET_CIDRS_V6, *(c for c in excluded if ipaddress.ip_network(c).version == 6)]
    return v4, v6


class OperatorAccess(StrictModel):
    """A platform operator whose pods reach tenant pods (CloudNativePG: 8000 status, 5432 Postgres)."""

    # Namespace the operator's pods run in.
    namespace: DnsLabel
    # Labels that select the operator's pods in that namespace (empty: every pod there).
    pod_labels: dict[str, str] = {}
    # Ports of tenant pods the operator may reach, at least one.
    ports: Annotated[list[Port], Field(min_length=1)]


class TenantPeer(StrictModel):
    """Another tenant whose pods may open connections to this tenant's pods, in the same environment
    only, and only when that tenant lists this one in `connectsTo` (mutual consent)."""

    # The other tenant's name; its file must list this tenant in `connectsTo`.
    tenant: DnsLabel
    # Ports of this tenant's pods it may reach (empty: every port).
    ports: list[Port] = []
    # `TCP`, `UDP` or `SCTP`: the protocol of the ports above.
    protocol: Protocol = "TCP"


def unique_peers(peers: list[TenantPeer]) -> list[TenantPeer]:
    """Validator: each tenant is named once in `acceptsFrom`."""
    names = [peer.tenant for peer in peers]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"tenants must be unique; repeated: {', '.join(repeated)}")
    return peers


class NetworkSettings(StrictModel):
    """`tenancy:network`: the platform's holes in tenant isolation, the same for every tenant of a stack."""

    # networkPolicy: one namespaced isolation policy per tenant namespace (works on every CNI).
    # clusterNetworkPolicy: the isolation as ClusterNetworkPolicy (policy.networking.k8s.io/v1alpha2,
    # components/guardrails/cluster_network.py) so tenants may write any NetworkPolicy beneath it.
    # Choosing it asserts the cluster's CNI implements that API: nothing here can check it.
    mode: Literal["networkPolicy", "clusterNetworkPolicy"] = "networkPolicy"
    # Operators beyond those the cloud's data backend brings (components/clouds/<cloud>/network.py).
    operators: dict[DnsLabel, OperatorAccess] = {}
    # Tenant pods reach the API server here (CloudNativePG instances watch their Cluster object).
    # The API server's endpoint addresses, not the `kubernetes` Service IP: CNIs judge egress after
    # the Service address is translated.
    api_server: EgressTarget | None = None
    # Open the cloud's workload identity endpoints (GKE metadata server, EKS Pod Identity agent).
    identity_endpoints: bool = True
    # Named egress entries tenant files may ask for (`egress: [name]`).
    egress: dict[DnsLabel, EgressEntry] = {}
    # Addresses of this cluster that are public, carved out of every `internet: true` entry beside the
    # private ranges: the pod, service and node ranges of an IPv6 cluster (global addresses), public
    # ranges used for pods, the cluster's own load balancers.
    internet_excludes: list[Cidr] = []


class CloudNetworkFacts(StrictModel):
    """What a cloud brings to the network model: facts of the platform it runs, not stack choices.

    Each cloud module (components/clouds/<cloud>/network.py) provides one; shared code only reads it.
    """

    # Where pods get their cloud identity (metadata server, Pod Identity agent); opened when
    # `identityEndpoints` is true. Node credentials (IMDS on AWS) are never among them.
    identity_endpoints: list[EgressTarget] = []
    # Operators the cloud's data backend installs and that must reach tenant database pods.
    operators: dict[DnsLabel, OperatorAccess] = {}
