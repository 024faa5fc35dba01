"""EKS network facts: the Pod Identity agent, and what is deliberately not opened.

EKS Pod Identity: the agent DaemonSet listens on 169.254.170.23:80 (IPv4) and [fd00:ec2::23]:80
(IPv6) on every node; the SDKs reach it through AWS_CONTAINER_CREDENTIALS_FULL_URI. IRSA needs no
link-local endpoint (the SDK calls STS with the projected token; STS is an internet or VPC endpoint
the stack's egress allow-list names). IMDS (169.254.169.254) is never opened: it serves the node's
role, which is the platform's, not the tenant's.
"""

from __future__ import annotations

from components.model.settings.network import CloudNetworkFacts, EgressTarget

NETWORK = CloudNetworkFacts(
    identity_endpoints=[EgressTarget(cidrs=["169.254.170.23/32", "fd00:ec2::23/128"], ports=[80])],
)
