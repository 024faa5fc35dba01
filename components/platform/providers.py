"""Providers shared by every tenant: one per cluster and one per cloud account.

Never a provider per tenant: each provider is a separate plugin process of hundreds of MB, and a
thousand of them would exhaust the machine running `pulumi up`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.model.labels import MANAGED_BY_VALUE
from components.model.stack import StackSettings


@dataclass
class Providers:
    """The explicit providers of this stack; children receive them through `providers=`."""

    kubernetes: k8s.Provider
    # The GCP or AWS provider when `cloud` is gcp or aws; None on a local cluster.
    cloud: pulumi.ProviderResource | None

    def options(self) -> pulumi.ResourceOptions:
        """Resource options that hand both providers down to a component and its children."""
        providers: list[pulumi.ProviderResource] = [self.kubernetes]
        if self.cloud is not None:
            providers.append(self.cloud)
        return pulumi.ResourceOptions(providers=providers)


def kubernetes_provider(settings: StackSettings) -> k8s.Provider:
    """The cluster's provider: the configured kubeconfig context, or the current one."""
    return k8s.Provider(
        "cluster",
        context=settings.cluster.context,
        # Server-side apply lets other controllers (autoscalers) own fields such as replicas.
        enable_server_side_apply=True,
    )


def cloud_provider(settings: StackSettings) -> pulumi.ProviderResource | None:
    """The cloud account's provider, with the platform's labels/tags applied to everything."""
    if settings.cloud == "gcp" and settings.gcp is not None:
        import pulumi_gcp as gcp

        return gcp.Provider(
            "gcp",
            project=settings.gcp.project,
            region=settings.gcp.region,
            default_labels={"managed-by": MANAGED_BY_VALUE},
        )
    if settings.cloud == "aws" and settings.aws is not None:
        import pulumi_aws as aws

        return aws.Provider(
            "aws",
            region=settings.aws.region,
            default_tags={"tags": {"managed-by": MANAGED_BY_VALUE}},
        )
    return None


def providers(settings: StackSettings) -> Providers:
    """Create the stack's providers once."""
    return Providers(kubernetes=kubernetes_provider(settings), cloud=cloud_provider(settings))
