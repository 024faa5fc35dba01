"""Rule 7, tenant NetworkPolicies: a tenant may open paths inside its own namespace and to the egress
its tenant file was granted, never to another tenant, the platform namespaces or other addresses.

Attack and legitimate use, played through the layers in order:
- RBAC (components/platform/roles.py) lets admins and the deployer write NetworkPolicies in their
  own namespaces only.
- The platform's own policy (`tenancy-isolation`, labelled platform-owned) is locked by the
  platform-owned rule; this rule skips objects carrying that label, since only platform identities
  may write them.
- NetworkPolicies are additive: a tenant's policy can only open more, so every peer it names is
  checked. A peer is acceptable when it selects pods of the policy's own namespace (no
  namespaceSelector, or a namespaceSelector on `kubernetes.io/metadata.name` equal to that
  namespace: the API server sets that label and nobody can forge it), or an ipBlock whose CIDR and
  `except` list are exactly one the stack granted this tenant (Namespace annotation
  `tenancy.io/egress-cidrs`, written from the tenant file's `egress`). `namespaceSelector: {}`
  (every namespace), selectors on forgeable labels, matchExpressions and any other ipBlock
  (0.0.0.0/0, metadata servers, node and cluster ranges) are denied.
CIDR containment needs the Kubernetes-only `cidr()` library, which the offline CEL engine lacks, so
an ipBlock must equal a granted one (its `except` may carve out more).
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    literal,
    namespace_annotation_list,
    resource_rule,
)
from components.model.labels import EGRESS_CIDRS_KEY, PLATFORM_OWNED_KEY

_METADATA_NAME = literal("kubernetes.io/metadata.name")
_OWN_NAMESPACE = (
    "(!has(p.namespaceSelector) || (!has(p.namespaceSelector.matchExpressions)"
    " && has(p.namespaceSelector.matchLabels) && size(p.namespaceSelector.matchLabels) == 1"
    f" && {_METADATA_NAME} in p.namespaceSelector.matchLabels"
    f" && p.namespaceSelector.matchLabels[{_METADATA_NAME}] == request.namespace))"
)
# A granted entry is `cidr!except!except`: the ipBlock's cidr is its head, and every part of it is
# either that cidr or listed in the ipBlock's except.
_GRANTED_BLOCK = (
    "variables.granted.exists(g, g.split('!')[0] == p.ipBlock.cidr && g.split('!').all(x, x == p.ipBlock.cidr"
    " || (has(p.ipBlock.except) && x in p.ipBlock.except)))"
)
_PEER_OK = (
    f"(has(p.ipBlock) ? (!has(p.podSelector) && !has(p.namespaceSelector) && {_GRANTED_BLOCK}) : {_OWN_NAMESPACE})"
)


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
            variables=[
                TENANT_VARIABLE,
                {"name": "granted", "expression": namespace_annotation_list(EGRESS_CIDRS_KEY)},
                {
                    "name": "ingressPeersOk",
                    "expression": "!has(object.spec.ingress) || object.spec.ingress.all(r, !has(r.from)"
                    f" || r.from.all(p, {_PEER_OK}))",
                },
                {
                    "name": "egressPeersOk",
                    "expression": "!has(object.spec.egress) || object.spec.egress.all(r, !has(r.to)"
                    f" || r.to.all(p, {_PEER_OK}))",
                },
            ],
            validations=[
                {
                    "expression": "variables.ingressPeersOk && variables.egressPeersOk",
                    "message_expression": (
                        "'NetworkPolicy ' + object.metadata.name + ' of tenant ' + variables.tenant"
                        " + ' may only name pods of its own namespace (no namespaceSelector, or"
                        " kubernetes.io/metadata.name: ' + request.namespace + ') and the ipBlocks granted by"
                        " the tenant file egress (' + variables.granted.join(', ') + ')'"
                    ),
                    "reason": "Forbidden",
                }
            ],
        )
    ]
