"""Each cloud's part of the edge (components/clouds/<cloud>/edge.py), by the stack's cloud.

Like components/clouds/registry.py for the cloud itself: shared code asks here, never which cloud
it runs on. The cloud SDKs are imported only by the cloud that needs them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from components.edge.identity import CertificateMapRef, EdgeIdentity
from components.model.settings.stack import StackSettings


def edge_identity(
    name: str, settings: StackSettings, parent: pulumi.Resource, opts: pulumi.ResourceOptions
) -> EdgeIdentity:
    """The stack's cloud identities for the edge's controllers; children named `<name>-...` under `parent`."""
    if settings.cloud == "gcp":
        from components.clouds.gcp.edge import gcp_edge_identity

        return gcp_edge_identity(name, settings, parent, opts)
    if settings.cloud == "aws":
        from components.clouds.aws.edge import aws_edge_identity

        return aws_edge_identity(name, settings, parent, opts)
    return EdgeIdentity()


def edge_certificate_map(
    name: str, settings: StackSettings, stack: str, hostnames: Sequence[str], parent: pulumi.Resource
) -> CertificateMapRef:
    """The cloud certificate map holding a certificate for each of the Gateway's names (GKE only:
    the one cloud whose Gateway takes certificates from a map, edge_contracts.py)."""
    if settings.cloud != "gcp":
        raise ValueError(f"no certificate map on {settings.cloud}: only the GKE Gateway takes one")
    from components.clouds.gcp.certificate_map import gcp_certificate_map

    return gcp_certificate_map(name, settings, stack, hostnames, parent)
