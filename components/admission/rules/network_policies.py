"""Rule 7, tenant NetworkPolicies: a tenant may open paths inside its own namespace and to the egress
its tenant file was granted, on the granted ports, never to another tenant, the platform namespaces
or other addresses.

Attack and legitimate use, played through the layers in order:
- RBAC (components/platform/roles.py) lets admins and the deployer write NetworkPolicies in their
  own namespaces only.
- The platform's own policy (`tenancy-isolation`, labelled platform-owned) is locked by the
  platform-owned rule; this rule skips objects carrying that label, since only platform identities
  may write them.
- NetworkPolicies are additive: a tenant's policy can only open more, so every peer it names is
  checked. A rule must name its peers: an ingress rule without `from` (or an egress rule without
  `to`) admits every source (destination), addresses included.
- Pod and namespace peers must select pods of the policy's own namespace (no namespaceSelector, or
  one on `kubernetes.io/metadata.name` equal to that namespace: the API server sets that label and
  nobody can forge it). In the ClusterNetworkPolicy mode too, although its Admin tier denies every
  other namespace first: a policy admitted there stays stored when the stack switches back to the
  namespaced mode, and would then open the platform namespaces.
- Egress ipBlock peers: the CIDR and `except` list must be exactly one the stack granted this
  tenant (Namespace annotation `tenancy.io/egress-cidrs`, written from the tenant file's `egress`),
  and the rule must stay on that grant's protocol and ports (numbered ports in the list, no range;
  any port of the grant's protocol when the grant lists none).
- Ingress ipBlock peers (clients of a LoadBalancer Service): only where the tenant file sets
  `allowLoadBalancer` (Namespace annotation `tenancy.io/allow-load-balancer`), any CIDR, and the
  rule must list its ports: a tenant opens its load balancer's ports, never every port.
- Ports: protocol TCP, UDP or SCTP; a numbered port 1..65535 or a named port (IANA service name);
  endPort only after a numbered port, >= it and <= 65535. The API server's own validation refuses
  these too; the rule keeps them in one place with the grant check that depends on them.
CIDR containment needs the Kubernetes-only `cidr()` library, which the offline CEL engine lacks, so
an ipBlock must equal a granted one (its `except` may carve out more).
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Validation,
    Variable,
    literal,
    namespace_annotation_list,
    resource_rule,
)
from components.model.core.labels import (
    ALLOW_LOAD_BALANCER_KEY,
    DNS_KEY,
    EGRESS_CIDRS_KEY,
    PLATFORM_INGRESS_KEY,
    PLATFORM_OWNED_KEY,
)

_METADATA_NAME = literal("kubernetes.io/metadata.name")
_ANNOTATIONS = "namespaceObject.metadata.annotations"
_LOAD_BALANCER = literal(ALLOW_LOAD_BALANCER_KEY)
_ALLOWS_LOAD_BALANCER = (
    f"has({_ANNOTATIONS}) && {_LOAD_BALANCER} in {_ANNOTATIONS} && {_ANNOTATIONS}[{_LOAD_BALANCER}] == 'true'"
)
_OWN_NAMESPACE = (
    "(!has(p.namespaceSelector) || (!has(p.namespaceSelector.matchExpressions)"
    " && has(p.namespaceSelector.matchLabels) && size(p.namespaceSelector.matchLabels) == 1"
    f" && {_METADATA_NAME} in p.namespaceSelector.matchLabels"
    f" && p.namespaceSelector.matchLabels[{_METADATA_NAME}] == request.namespace))"
)
# A grant is `cidr!except!except@PROTOCOL/port/port` (no port: every port). The ipBlock's cidr is
# the head of the address part, and every part of it is that cidr or listed in the ipBlock's except.
_BLOCK_OF = (
    "g.split('@')[0].split('!')[0] == p.ipBlock.cidr && g.split('@')[0].split('!').all(x, x == p.ipBlock.cidr"
    " || (has(p.ipBlock.except) && x in p.ipBlock.except))"
)
_GRANTED_BLOCK = f"variables.granted.exists(g, {_BLOCK_OF})"
_NO_SELECTORS = "!has(p.podSelector) && !has(p.namespaceSelector)"
# A peer naming exactly one namespace by the label the API server sets, and that name.
_NAMED_NAMESPACE = (
    "(has(p.namespaceSelector) && !has(p.namespaceSelector.matchExpressions)"
    " && has(p.namespaceSelector.matchLabels) && size(p.namespaceSelector.matchLabels) == 1"
    f" && {_METADATA_NAME} in p.namespaceSelector.matchLabels)"
)
_PEER_NAMESPACE = f"p.namespaceSelector.matchLabels[{_METADATA_NAME}]"
# Paths the platform already opens (namespace annotations, components/guardrails/network.py):
# ingress from a platform namespace (any podSelector narrows it further), egress to the DNS pods (a
# podSelector carrying every DNS label; more labels or expressions narrow it further).
# An entry with a third part (`ns@TCP/port@key=value;key=value`, the Gateway's proxies) admits the
# namespace only together with a podSelector carrying every one of those labels (more narrow it).
_ENTRY_PODS = (
    "(size(e.split('@')) < 3 || e.split('@')[2].split(';').all(l, has(p.podSelector)"
    " && has(p.podSelector.matchLabels) && l.split('=')[0] in p.podSelector.matchLabels"
    " && p.podSelector.matchLabels[l.split('=')[0]] == l.split('=')[1]))"
)
_PLATFORM_PEER = (
    f"({_NAMED_NAMESPACE} && variables.platformIngress.exists(e, e.split('@')[0] == {_PEER_NAMESPACE}"
    f" && {_ENTRY_PODS}))"
)
_DNS_PEER = (
    f"({_NAMED_NAMESPACE} && variables.dns.exists(x, !x.contains('=') && x == {_PEER_NAMESPACE})"
    " && has(p.podSelector) && variables.dns.filter(x, x.contains('=')).all(l, has(p.podSelector.matchLabels)"
    " && l.split('=')[0] in p.podSelector.matchLabels"
    " && p.podSelector.matchLabels[l.split('=')[0]] == l.split('=')[1]))"
)
_EGRESS_PEER_OK = f"(has(p.ipBlock) ? ({_NO_SELECTORS} && {_GRANTED_BLOCK}) : ({_OWN_NAMESPACE} || {_DNS_PEER}))"
_INGRESS_PEER_OK = (
    f"(has(p.ipBlock) ? ({_NO_SELECTORS} && variables.allowLoadBalancer) : ({_OWN_NAMESPACE} || {_PLATFORM_PEER}))"
)
# A numbered port, one port (no range), as an int: the API server stores ports as numbers or IANA
# names, so text never stands for a number here.
_ONE_NUMBERED_PORT = "has(q.port) && type(q.port) == int && (!has(q.endPort) || q.endPort == q.port)"
# Rule r stays on the ports platform namespace entry e opens: all (`name`), or the listed TCP ports.
_PLATFORM_PORTS = (
    f"variables.platformIngress.exists(e, e.split('@')[0] == {_PEER_NAMESPACE} && (size(e.split('@')) == 1"
    " || (has(r.ports) && size(r.ports) > 0 && r.ports.all(q, (has(q.protocol) ? q.protocol : 'TCP')"
    f" == e.split('@')[1].split('/')[0] && {_ONE_NUMBERED_PORT} && string(q.port) in e.split('@')[1].split('/')))))"
)
# DNS is open on port 53, UDP and TCP, only.
_DNS_PORTS = (
    "(has(r.ports) && size(r.ports) > 0 && r.ports.all(q, (has(q.protocol) ? q.protocol : 'TCP') in ['UDP', 'TCP']"
    f" && {_ONE_NUMBERED_PORT} && q.port == 53))"
)
# The rule's ports stay within grant g: its protocol always (a rule without ports opens every
# protocol), and the numbered ports it lists when it lists any.
_PORTS_IN_GRANT = (
    "(has(r.ports) && size(r.ports) > 0 && r.ports.all(q,"
    " (has(q.protocol) ? q.protocol : 'TCP') == g.split('@')[1].split('/')[0]"
    " && (size(g.split('@')[1].split('/')) == 1 || (has(q.port) && type(q.port) == int"
    " && (!has(q.endPort) || q.endPort == q.port) && string(q.port) in g.split('@')[1].split('/')))))"
)
# An ingress rule admitting addresses lists its ports (numbered or named), each one.
_INGRESS_ADDRESSES_PORTED = (
    "!has(object.spec.ingress) || object.spec.ingress.all(r, !has(r.from) || !r.from.exists(p, has(p.ipBlock))"
    " || (has(r.ports) && size(r.ports) > 0 && r.ports.all(q, has(q.port))))"
)
_PORT_OK = (
    "(!has(q.protocol) || q.protocol in ['TCP', 'UDP', 'SCTP'])"
    " && (!has(q.port) || (type(q.port) == int ? (q.port >= 1 && q.port <= 65535)"
    " : (size(q.port) <= 15 && q.port.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && q.port.matches('[a-z]'))))"
    " && (!has(q.endPort) || (has(q.port) && type(q.port) == int && q.endPort >= q.port && q.endPort <= 65535))"
)
_RULES = "((has(object.spec.ingress) ? object.spec.ingress : []) + (has(object.spec.egress) ? object.spec.egress : []))"


def _message(text: str) -> str:
    return f"'NetworkPolicy ' + object.metadata.name + ' of tenant ' + variables.tenant + ' {text}'"


def _variables() -> list[Variable]:
    return [
        TENANT_VARIABLE,
        {"name": "granted", "expression": namespace_annotation_list(EGRESS_CIDRS_KEY)},
        {"name": "platformIngress", "expression": namespace_annotation_list(PLATFORM_INGRESS_KEY)},
        {"name": "dns", "expression": namespace_annotation_list(DNS_KEY)},
        {
            "name": "dnsPeer",
            "expression": "size(variables.dns) == 0 ? 'none' : 'namespaceSelector kubernetes.io/metadata.name: '"
            " + variables.dns.filter(x, !x.contains('=')).join('') + ' and podSelector matchLabels '"
            " + variables.dns.filter(x, x.contains('=')).join(', ')",
        },
        {"name": "allowLoadBalancer", "expression": _ALLOWS_LOAD_BALANCER},
        {
            "name": "peersNamed",
            "expression": "(!has(object.spec.ingress) || object.spec.ingress.all(r, has(r.from) && size(r.from) > 0))"
            " && (!has(object.spec.egress) || object.spec.egress.all(r, has(r.to) && size(r.to) > 0))",
        },
        {
            "name": "peersOk",
            "expression": "(!has(object.spec.ingress) || object.spec.ingress.all(r, !has(r.from)"
            f" || r.from.all(p, {_INGRESS_PEER_OK}))) && (!has(object.spec.egress) || object.spec.egress.all(r,"
            f" !has(r.to) || r.to.all(p, {_EGRESS_PEER_OK})))",
        },
        {
            "name": "portsValid",
            "expression": f"{_RULES}.all(r, !has(r.ports) || r.ports.all(q, {_PORT_OK}))",
        },
        {"name": "ingressAddressesPorted", "expression": _INGRESS_ADDRESSES_PORTED},
        {
            "name": "platformPortsOk",
            "expression": "!has(object.spec.ingress) || object.spec.ingress.all(r, !has(r.from) || r.from.all(p,"
            f" has(p.ipBlock) || !{_PLATFORM_PEER} || {_PLATFORM_PORTS}))",
        },
        {
            "name": "dnsPortsOk",
            "expression": "!has(object.spec.egress) || object.spec.egress.all(r, !has(r.to) || r.to.all(p,"
            f" has(p.ipBlock) || !{_DNS_PEER} || {_DNS_PORTS}))",
        },
        {
            "name": "egressPortsGranted",
            "expression": "!has(object.spec.egress) || object.spec.egress.all(r, !has(r.to) || r.to.all(p,"
            f" !has(p.ipBlock) || variables.granted.exists(g, {_BLOCK_OF} && {_PORTS_IN_GRANT})))",
        },
    ]


def _platform_path_validations() -> list[Validation]:
    """Peers that repeat a platform path stay on the ports the platform opens for it."""
    return [
        {
            "expression": "variables.platformPortsOk",
            "message_expression": _message(
                "may admit a platform namespace only on the ports the platform opens to it (' + "
                "variables.platformIngress.join(', ') + '): list those numbered TCP ports, or leave the rule to the"
                " platform, which opens them already"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "variables.dnsPortsOk",
            "message_expression": _message(
                "may reach cluster DNS (' + variables.dnsPeer + ') only on port 53, UDP and TCP: write ports:"
                " [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]"
            ),
            "reason": "Forbidden",
        },
    ]


def _validations() -> list[Validation]:
    peers = (
        "may only name pods of its own namespace (no namespaceSelector, or kubernetes.io/metadata.name: '"
        " + request.namespace + '), ingress from the platform namespaces (namespaceSelector kubernetes.io/"
        "metadata.name: one of ' + (size(variables.platformIngress) == 0 ? 'none' : variables.platformIngress"
        ".map(e, e.split('@')[0]).join(', ')) + '), egress to cluster DNS (' + variables.dnsPeer + '),"
        " egress to the ipBlocks granted by the tenant file egress (' + variables.granted.join(', ') + ')"
        " and ingress from addresses only with allowLoadBalancer; switch off chart values that open every"
        " namespace or address (networkPolicy.allowExternalEgress and the like, docs/network.md)"
    )
    return [
        {
            "expression": "variables.peersNamed",
            "message_expression": _message(
                "must name the peers of every rule: a rule without from/to admits every address"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "variables.peersOk",
            "message_expression": _message(peers),
            "reason": "Forbidden",
        },
        {
            "expression": "variables.portsValid",
            "message_expression": _message(
                "has an invalid port: protocol TCP, UDP or SCTP; port 1-65535 or a service name;"
                " endPort >= port and <= 65535"
            ),
            "reason": "Invalid",
        },
        {
            "expression": "variables.ingressAddressesPorted",
            "message_expression": _message(
                "must list the ports of an ingress rule from addresses: a load balancer opens its ports, not every port"
            ),
            "reason": "Forbidden",
        },
        *_platform_path_validations(),
        {
            "expression": "variables.egressPortsGranted",
            "message_expression": _message(
                "may reach a granted ipBlock only on the granted protocol and ports ('"
                " + variables.granted.join(', ') + ')"
            ),
            "reason": "Forbidden",
        },
    ]


def policies() -> list[PolicyDefinition]:
    owned = literal(PLATFORM_OWNED_KEY)
    return [
        PolicyDefinition(
            name="tenancy-network-policies",
            rule="network_policies",
            resource_rules=[resource_rule("networking.k8s.io", ["networkpolicies"], ["CREATE", "UPDATE"])],
            match_conditions=[
                {
                    # The platform's own policies are guarded by the platform-owned rule.
                    "name": "tenant-authored",
                    "expression": f"!has(object.metadata.labels) || !({owned} in object.metadata.labels)",
                }
            ],
            variables=_variables(),
            validations=_validations(),
        )
    ]
