"""Providers shared by every tenant: one per cluster (and later one per cloud account).

Never a provider per tenant: each provider is a separate plugin process of hundreds of MB.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.settings import StackSettings


def kubernetes_provider(settings: StackSettings) -> k8s.Provider:
    """The cluster's provider: the configured kubeconfig context, or the current one."""
    return k8s.Provider(
        "cluster",
        context=settings.cluster.context,
        # Server-side apply lets other controllers (autoscalers) own fields such as replicas.
        enable_server_side_apply=True,
        opts=pulumi.ResourceOptions(),
    )
