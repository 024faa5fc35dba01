"""Interim lookup of each cloud's network facts, until the cloud registry carries them.

The cloud registry (one protocol per cloud: provider, platform parts, data, egress) will answer
this itself; this table keeps shared code from ever asking which cloud it has in the meantime.
"""

from __future__ import annotations

from components.clouds.aws.network import NETWORK as AWS
from components.clouds.gcp.network import NETWORK as GCP
from components.clouds.local.network import NETWORK as LOCAL
from components.model.network import CloudNetworkFacts

_FACTS = {"gcp": GCP, "aws": AWS, "local": LOCAL}


def network_facts(cloud: str) -> CloudNetworkFacts:
    """The network facts of a cloud (`gcp`, `aws`, `local`)."""
    return _FACTS[cloud]
