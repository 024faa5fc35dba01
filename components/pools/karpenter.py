"""A `karpenter` pool: a `karpenter.sh/v1` NodePool and the `karpenter.k8s.aws/v1` EC2NodeClass it uses.

Both are cluster-scoped custom resources applied through the cluster's Kubernetes provider; the
Karpenter controller (installed with the cluster) turns them into EC2 instances. The objects are
written in the CRDs' own camelCase, since custom resources get no name translation.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.model.core.labels import platform_labels, pool_cost_labels, pool_node_labels, pool_taint
from components.model.settings.pools import KarpenterPool

NODE_CLASS_GROUP = "karpenter.k8s.aws"
# The tag the Karpenter getting-started setup puts on the cluster's node subnets and security groups.
DISCOVERY_TAG = "karpenter.sh/discovery"


def requirements(pool: KarpenterPool) -> list[dict[str, Any]]:
    """Scheduling requirements of the nodes Karpenter may launch for this pool."""
    chosen: list[dict[str, Any]] = [
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": list(pool.architectures)},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(pool.capacity_types)},
    ]
    if pool.instance_families:
        chosen.append({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": pool.instance_families})
    else:
        # No families named: general-purpose, compute and memory families of recent generations,
        # as Karpenter's own examples do, rather than every exotic type EC2 sells.
        chosen.append({"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]})
        chosen.append({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]})
    if pool.instance_sizes:
        chosen.append({"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": pool.instance_sizes})
    return chosen


def node_class_spec(name: str, *, pool: KarpenterPool, cluster_name: str) -> dict[str, Any]:
    """The EC2NodeClass spec: AMI, role, network, disk and the tags that reach instances and volumes."""
    discovery = {DISCOVERY_TAG: cluster_name}
    data_device = "/dev/xvdb" if pool.ami_alias.startswith("bottlerocket") else "/dev/xvda"
    return {
        "role": pool.node_role,
        "amiSelectorTerms": [{"alias": pool.ami_alias}],
        "subnetSelectorTerms": [{"tags": dict(pool.subnet_selector or discovery)}],
        "securityGroupSelectorTerms": [{"tags": dict(pool.security_group_selector or discovery)}],
        # Karpenter copies these onto every instance, volume and network interface it launches.
        "tags": pool_cost_labels(name, pool.cost_code),
        # IMDSv2 only and one hop, so pods cannot borrow the node role (Karpenter's default, made explicit).
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": [
            {
                "deviceName": data_device,
                "rootVolume": True,
                "ebs": {
                    "volumeSize": f"{pool.disk_size_gb}Gi",
                    "volumeType": "gp3",
                    "encrypted": True,
                    "deleteOnTermination": True,
                },
            }
        ],
    }


def node_pool_spec(name: str, *, pool: KarpenterPool) -> dict[str, Any]:
    """The NodePool spec: what nodes look like, how far the pool may grow, and when it may shrink."""
    disruption = pool.disruption
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": pool_node_labels(name, pool.cost_code)},
            "spec": {
                "nodeClassRef": {"group": NODE_CLASS_GROUP, "kind": "EC2NodeClass", "name": name},
                "requirements": requirements(pool),
                "taints": [pool_taint(name)],
                "expireAfter": disruption.expire_after,
            },
        },
        "limits": {"cpu": pool.limits.cpu, "memory": pool.limits.memory},
        "disruption": {
            "consolidationPolicy": disruption.consolidation_policy,
            "consolidateAfter": disruption.consolidate_after,
            "budgets": [budget.model_dump(by_alias=True, exclude_none=True) for budget in disruption.budgets],
        },
    }
    if pool.weight is not None:
        spec["weight"] = pool.weight
    return spec


def karpenter_pool(
    parent: pulumi.Resource, name: str, *, pool: KarpenterPool, cluster_name: str
) -> tuple[k8s.apiextensions.CustomResource, k8s.apiextensions.CustomResource]:
    """Register the EC2NodeClass and the NodePool (named after the pool) as children of `parent`."""
    node_class = k8s.apiextensions.CustomResource(
        f"{name}-ec2nodeclass",
        api_version=f"{NODE_CLASS_GROUP}/v1",
        kind="EC2NodeClass",
        metadata={"name": name, "labels": platform_labels()},
        spec=node_class_spec(name, pool=pool, cluster_name=cluster_name),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    node_pool = k8s.apiextensions.CustomResource(
        f"{name}-nodepool",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={"name": name, "labels": platform_labels()},
        spec=node_pool_spec(name, pool=pool),
        # The class first: a NodePool pointing at a missing class is not ready and launches nothing.
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[node_class]),
    )
    return node_class, node_pool
