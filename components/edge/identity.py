"""What each cloud gives the edge's controllers: workload identity, and the DNS-01 solver.

cert-manager answers ACME DNS-01 challenges and external-dns writes records in the stack's zones;
both act as a cloud identity bound to their Kubernetes service accounts (GKE Workload Identity,
EKS Pod Identity), never a key in a Secret. Each cloud's part is in components/clouds/<cloud>/edge.py,
picked by components/clouds/edge.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

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
    # Per chart role, what its pods need before they start (EKS: the Pod Identity association; the
    # agent hands credentials to pods started after it exists).
    ready: dict[str, list[pulumi.Resource]] = field(default_factory=dict)


def service_account_values(name: str, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chart's `serviceAccount` values: created, with a fixed name (and annotations on GKE)."""
    account: dict[str, Any] = {"create": True, "name": name}
    if annotations:
        account["annotations"] = annotations
    return {"serviceAccount": account}


@dataclass
class CertificateMapRef:
    """A cloud certificate map the platform Gateway names (GKE): its name, what the Gateway waits for
    (the map, not its certificates: a name still waiting for its owner's DNS record holds back no
    other), and per tenant domain the DNS record its owner publishes to prove it."""

    name: pulumi.Input[str]
    ready: list[pulumi.Resource] = field(default_factory=list)
    dns_records: dict[str, pulumi.Input[dict[str, str]]] = field(default_factory=dict)
