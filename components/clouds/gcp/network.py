"""GKE network facts: the metadata server that hands pods their Workload Identity.

On GKE with Workload Identity Federation, pods ask the GKE metadata server for tokens. GKE's
documentation for clusters with network policy names two addresses: 169.254.169.254:80 (what pods
dial; what Dataplane V2 judges) and 169.254.169.252:988 (where the metadata server listens on the
node, what Calico-based network policy judges). Both are node-local and serve the pod's own
identity only, so both are opened: the stack need not know which dataplane the cluster runs.
"""

from __future__ import annotations

from components.model.settings.network import CloudNetworkFacts, EgressTarget

NETWORK = CloudNetworkFacts(
    identity_endpoints=[
        EgressTarget(cidrs=["169.254.169.254/32"], ports=[80]),
        EgressTarget(cidrs=["169.254.169.252/32"], ports=[988]),
    ],
)
