"""Each cloud's part of the edge (components/clouds/<cloud>/edge.py), by the stack's cloud.

Like components/clouds/registry.py for the cloud itself: shared code asks here, never which cloud
it runs on. The cloud SDKs are imported only by the cloud that needs them.
"""

from __future__ import annotations

import pulumi

from components.edge.identity import EdgeIdentity
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
