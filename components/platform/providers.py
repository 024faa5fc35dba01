"""Providers shared by every tenant: one per cluster and one per cloud account.

Never a provider per tenant: each provider is a separate plugin process of hundreds of MB, and a
thousand of them would exhaust the machine running `pulumi up`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.protocol import Cloud
from components.model.checks.stack import cluster_context_problems
from components.model.core.errors import ConfigurationError
from components.model.settings.stack import ClusterSettings


@dataclass
class Providers:
    """The explicit providers of this stack; children receive them through `providers=`."""

    kubernetes: k8s.Provider
    # The cloud account's provider (GCP, AWS); None where the stack's cloud has no account.
    account: pulumi.ProviderResource | None

    def options(self) -> pulumi.ResourceOptions:
        """Resource options that hand both providers down to a component and its children."""
        providers: list[pulumi.ProviderResource] = [self.kubernetes]
        if self.account is not None:
            providers.append(self.account)
        return pulumi.ResourceOptions(providers=providers)


def kubernetes_provider(*, cluster: ClusterSettings) -> k8s.Provider:
    """The cluster's provider: the configured kubeconfig context, or the current one.

    `cluster_identifier` pins the provider's identity to the cluster's name. Without it the provider
    decides from the kubeconfig whether it points at another cluster, so renaming or switching a
    context (a CI runner's generated kubeconfig, `kubectl config rename-context`) would replace the
    provider and with it every Kubernetes object of every tenant. With it, only a changed cluster
    name replaces them; every other provider change is an update (the client's rate limit below
    included).
    """
    return k8s.Provider(
        "cluster",
        context=cluster.context,
        cluster_identifier=cluster.name,
        # Server-side apply lets other controllers (autoscalers) own fields such as replicas.
        enable_server_side_apply=True,
        # The client's rate limit bounds a first preview and a first `up` (docs/scale.md).
        kube_client_settings=k8s.KubeClientSettingsArgs(qps=cluster.client_qps, burst=cluster.client_burst),
    )


def providers(*, cluster: ClusterSettings, cloud: Cloud, source: str = "the stack config") -> Providers:
    """Create the stack's providers once; the cloud makes its own (components/clouds/registry.py).

    Refuses, before registering anything, a stack that would apply to whatever kubeconfig context
    is current where its cloud has no other way to find the cluster (issue 24).
    """
    problems = cluster_context_problems(cluster, source, required=cloud.capabilities.kube_context_required)
    if problems:
        raise ConfigurationError(problems)
    return Providers(kubernetes=kubernetes_provider(cluster=cluster), account=cloud.provider())
