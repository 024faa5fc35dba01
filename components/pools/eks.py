"""An `eks` pool: an EKS managed node group and the launch template that tags its instances."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.model.core.labels import pool_cost_labels, pool_node_labels, pool_taint
from components.model.settings.pools import EksPool

_EKS_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
# Where the node's writable storage lives: the root volume on AL2023, the data volume on Bottlerocket.
_DATA_DEVICE = {"AL2023": "/dev/xvda", "BOTTLEROCKET": "/dev/xvdb"}


def eks_node_group(
    parent: pulumi.Resource, name: str, *, pool: EksPool, cluster_name: str
) -> tuple[aws.ec2.LaunchTemplate, aws.eks.NodeGroup]:
    """Register the launch template and the node group as children of `parent`."""
    child = pulumi.ResourceOptions(parent=parent)
    tags = pool_cost_labels(name, pool.cost_code)
    # Node group tags stay on the node group; only a launch template's tag specifications reach
    # the EC2 instances and volumes that the bill is made of.
    template = aws.ec2.LaunchTemplate(
        f"{name}-eks-nodes",
        description=f"tenancy node pool {name}",
        update_default_version=True,
        block_device_mappings=[
            {
                "device_name": _DATA_DEVICE[pool.ami_type.split("_")[0]],
                "ebs": {
                    "volume_size": pool.disk_size_gb,
                    "volume_type": "gp3",
                    "encrypted": "true",
                    "delete_on_termination": "true",
                },
            }
        ],
        # IMDSv2 only, one hop: pods (not on the host network) cannot reach the node role's
        # credentials; they get their own through EKS Pod Identity or IRSA.
        metadata_options={"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": 1},
        tag_specifications=[
            {"resource_type": resource_type, "tags": tags}
            for resource_type in ("instance", "volume", "network-interface")
        ],
        tags=tags,
        opts=child,
    )
    taint = pool_taint(name)
    group = aws.eks.NodeGroup(
        # Auto-named so a replacement (instance types, subnets) is created before the old group goes.
        f"{name}-eks",
        cluster_name=cluster_name,
        node_role_arn=pool.node_role_arn,
        subnet_ids=pool.subnet_ids,
        instance_types=pool.instance_types,
        capacity_type="SPOT" if pool.spot else "ON_DEMAND",
        ami_type=pool.ami_type,
        scaling_config={"min_size": pool.min_nodes, "max_size": pool.max_nodes, "desired_size": pool.min_nodes},
        update_config={"max_unavailable": pool.max_unavailable},
        labels=pool_node_labels(name, pool.cost_code),
        taints=[{"key": taint["key"], "value": taint["value"], "effect": _EKS_EFFECT[taint["effect"]]}],
        launch_template={"id": template.id, "version": template.latest_version.apply(str)},
        tags=tags,
        # The cluster autoscaler owns the current size; `up` must not shrink the pool back to min.
        opts=pulumi.ResourceOptions(parent=parent, ignore_changes=["scalingConfig.desiredSize"]),
    )
    return template, group
