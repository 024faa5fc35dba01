"""The NodePool component: one pool of nodes that some tenants' pods are held to.

Every pool, whatever its kind, is the same contract with the rest of the platform: its nodes carry
the label `tenancy.io/pool=<pool>` and the taint `tenancy.io/pool=<pool>:NoSchedule`
(components/model/core/labels.py), its tenants' namespaces carry the same label, and the policy bundle holds
their pods to it. The kind only decides who makes the nodes: GKE, an EKS managed node group,
Karpenter, or an operator with `kubectl` (`existing`).

Pools are per stack, never per tenant: several tenants share one, so a pool adds nothing to the
resources each tenant costs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pulumi

from components.model.core.labels import NODE_POOL_KEY, pool_node_labels, pool_taint
from components.model.settings.clouds import GcpSettings
from components.model.settings.pools import EksPool, GkePool, KarpenterPool, NodePoolSettings
from components.model.tenant_file.spec import TenantSpec
from components.pools.eks import eks_node_group
from components.pools.gke import gke_node_pool
from components.pools.karpenter import karpenter_pool


@dataclass
class NodePoolArgs:
    """One configured pool, where its nodes join, and the tenants placed on it."""

    pool: NodePoolSettings
    # The stack's cluster (`tenancy:cluster.name`): every kind of pool joins it by name.
    cluster_name: str
    # The stack's GCP section (None outside cloud gcp): a gke pool lives in its region.
    gcp: GcpSettings | None = None
    tenants: list[str] = field(default_factory=list)


def tenants_on(pool: str, specs: Iterable[TenantSpec]) -> list[str]:
    """Names of the tenants placed on `pool`, sorted; decommissioned ones have no pods left to place."""
    return sorted(spec.name for spec in specs if spec.node_pool == pool and spec.lifecycle != "decommissioned")


class NodePool(pulumi.ComponentResource):
    """A node pool (`tenancy:index:NodePool`): the cloud's nodes for it, tainted and labelled."""

    kind: str
    cost_code: str
    tenants: list[str]
    # The cloud or cluster resources that make the nodes; empty for `existing` pools.
    resources: list[pulumi.Resource]
    # What every node of the pool carries: labels, and the taint as `kubectl taint` writes it.
    node_labels: dict[str, str]
    taint: str

    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:NodePool", name, None, opts)
        pool, cluster_name = args.pool, args.cluster_name
        self.kind = pool.kind
        self.cost_code = pool.cost_code
        self.tenants = sorted(args.tenants)
        self.resources = []
        if isinstance(pool, GkePool):
            if args.gcp is None:  # the settings model refuses gke pools outside cloud gcp
                raise ValueError(f"node pool {name!r} is a gke pool but the stack has no gcp section")
            region = args.gcp.region
            self.resources.append(gke_node_pool(self, name, pool=pool, cluster_name=cluster_name, region=region))
        elif isinstance(pool, EksPool):
            self.resources.extend(eks_node_group(self, name, pool=pool, cluster_name=cluster_name))
        elif isinstance(pool, KarpenterPool):
            self.resources.extend(karpenter_pool(self, name, pool=pool, cluster_name=cluster_name))
        # `existing`: nothing to create; an operator labels and taints the nodes (see docs/node-pools.md).
        taint = pool_taint(name)
        self.node_labels = pool_node_labels(name, pool.cost_code)
        self.taint = f"{taint['key']}={taint['value']}:{taint['effect']}"
        self.register_outputs(
            {"kind": self.kind, "costCode": self.cost_code, "tenants": self.tenants, "taint": self.taint}
        )

    def summary(self) -> dict[str, object]:
        """What operators and the tenants' teams need about the pool, for the stack outputs."""
        return {
            "kind": self.kind,
            "costCode": self.cost_code,
            "tenants": self.tenants,
            "nodeSelector": {NODE_POOL_KEY: self.node_labels[NODE_POOL_KEY]},
            "taint": self.taint,
        }
