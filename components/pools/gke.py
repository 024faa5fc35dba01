"""A `gke` pool: one GKE node pool, tainted and labelled for its tenants, billed to its cost code."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.model.core.labels import pool_cost_labels, pool_node_labels, pool_taint
from components.model.settings.pools import GkePool

# GKE spells taint effects in the API's enum form.
_GKE_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
# With a dedicated node service account, access is decided by its IAM roles, not by scopes.
_CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


def gke_node_pool(
    parent: pulumi.Resource, name: str, *, pool: GkePool, cluster_name: str, region: str
) -> gcp.container.NodePool:
    """Register the node pool in the stack's cluster (in the stack's GCP region) as a child of `parent`."""
    taint = pool_taint(name)
    node_config: gcp.container.NodePoolNodeConfigArgsDict = {
        "machine_type": pool.machine_type,
        "disk_size_gb": pool.disk_size_gb,
        "disk_type": pool.disk_type,
        "spot": pool.spot,
        # Kubernetes node labels: what tenant pods select (and the policy bundle requires).
        "labels": pool_node_labels(name, pool.cost_code),
        # GCE labels on the VMs and disks: these reach the billing export, so cost is attributable.
        "resource_labels": pool_cost_labels(name, pool.cost_code),
        "taints": [{"key": taint["key"], "value": taint["value"], "effect": _GKE_EFFECT[taint["effect"]]}],
        # Pods see the GKE metadata server, never the node's credentials: Workload Identity.
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
    }
    if pool.service_account is not None:
        node_config["service_account"] = pool.service_account
        node_config["oauth_scopes"] = [_CLOUD_PLATFORM_SCOPE]
    return gcp.container.NodePool(
        # Auto-named (`<pool>-gke-<random>`) so a change that replaces the pool (machine type)
        # creates the new pool before the old one is drained and deleted.
        f"{name}-gke",
        cluster=cluster_name,
        location=region,
        node_locations=pool.zones,
        autoscaling={
            # total_*: minNodes/maxNodes count the whole pool, not each zone of a regional cluster.
            "total_min_node_count": pool.min_nodes,
            "total_max_node_count": pool.max_nodes,
            # ANY lets the autoscaler chase spot capacity wherever it exists; BALANCED spreads zones.
            "location_policy": "ANY" if pool.spot else "BALANCED",
        },
        management={"auto_repair": True, "auto_upgrade": True},
        # Surge one node and never take one away first, so tenants keep their capacity in upgrades.
        upgrade_settings={"strategy": "SURGE", "max_surge": 1, "max_unavailable": 0},
        node_config=node_config,
        opts=pulumi.ResourceOptions(parent=parent),
    )
