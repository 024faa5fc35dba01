"""What each cloud gives the edge's controllers: workload identity, and the DNS-01 solver.

cert-manager answers ACME DNS-01 challenges and external-dns writes records in the stack's zones;
both act as a cloud identity bound to their Kubernetes service accounts (GKE Workload Identity,
EKS Pod Identity), never a key in a Secret. Each cloud's part is in components/clouds/<cloud>/edge.py;
this module only picks it, as components/clouds/registry.py picks the cloud.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.model.stack import StackSettings

# The service accounts the charts create (their `serviceAccount.name`), fixed so identities can bind them.
CERT_MANAGER_ACCOUNT = "cert-manager"
EXTERNAL_DNS_ACCOUNT = "external-dns"
LOAD_BALANCER_CONTROLLER_ACCOUNT = "aws-load-balancer-controller"


@dataclass
class EdgeIdentity:
    """Extra Helm values per chart role and the ClusterIssuer's DNS-01 solver (None: a local CA)."""

    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    dns01: dict[str, Any] | None = None
    # external-dns `provider.name` and extra values (zone filters are the provider's own flags).
    external_dns: dict[str, Any] = field(default_factory=dict)


def edge_identity(settings: StackSettings, parent: pulumi.Resource, opts: pulumi.ResourceOptions) -> EdgeIdentity:
    """The stack's cloud part of the edge (`opts` carries the cloud provider)."""
    if settings.cloud == "gcp":
        from components.clouds.gcp.edge import gcp_edge_identity

        return gcp_edge_identity(settings, parent, opts)
    if settings.cloud == "aws":
        from components.clouds.aws.edge import aws_edge_identity

        return aws_edge_identity(settings, parent, opts)
    return EdgeIdentity()


def service_account_values(name: str, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chart's `serviceAccount` values: created, with a fixed name (and annotations on GKE)."""
    account: dict[str, Any] = {"create": True, "name": name}
    if annotations:
        account["annotations"] = annotations
    return {"serviceAccount": account}
