"""The platform's certificate issuers: a cluster CA of its own on kind, ACME elsewhere (docs/edge.md)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.edge.identity import EdgeIdentity
from components.model.core.await_rules import wait_for
from components.model.core.labels import platform_labels
from components.model.settings.stack import StackSettings

CERT_MANAGER_API = "cert-manager.io/v1"
CA_SECRET = "tenancy-local-ca"
SELF_SIGNED_ISSUER = "tenancy-self-signed"


def issuer_name(stack: str) -> str:
    """The stack's ClusterIssuer: one per stack, so stacks sharing a cluster keep their own accounts."""
    return f"tenancy-{stack}"


def local_ca(
    name: str, settings: StackSettings, stack: str, opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """A self-signed issuer and the CA certificate it signs, for a cluster without ACME (kind)."""
    edge = settings.edge
    labels = platform_labels()
    self_signed = k8s.apiextensions.CustomResource(
        f"{name}-self-signed-issuer",
        api_version=CERT_MANAGER_API,
        kind="ClusterIssuer",
        metadata={
            "name": SELF_SIGNED_ISSUER,
            "labels": labels,
            "annotations": wait_for(CERT_MANAGER_API, "ClusterIssuer"),
        },
        spec={"selfSigned": {}},
        opts=opts,
    )
    return k8s.apiextensions.CustomResource(
        f"{name}-local-ca",
        api_version=CERT_MANAGER_API,
        kind="Certificate",
        # A ClusterIssuer reads its CA Secret from cert-manager's own namespace.
        metadata={
            "name": CA_SECRET,
            "namespace": edge.tls.chart.namespace,
            "labels": labels,
            "annotations": wait_for(CERT_MANAGER_API, "Certificate"),
        },
        spec={
            "isCA": True,
            "commonName": f"tenancy {stack} local CA",
            "secretName": CA_SECRET,
            "privateKey": {"algorithm": "ECDSA", "size": 256},
            "issuerRef": {"name": SELF_SIGNED_ISSUER, "kind": "ClusterIssuer", "group": "cert-manager.io"},
        },
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[self_signed])),
    )


def cluster_issuer(
    name: str, settings: StackSettings, stack: str, identity: EdgeIdentity, opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """The stack's ClusterIssuer: a local CA on kind, ACME with DNS-01 on the clouds; `opts` wait for cert-manager."""
    edge = settings.edge
    labels = platform_labels()
    if identity.dns01 is None or edge.tls.acme is None:
        # kind: a CA of the cluster's own (browsers warn; tests trust it explicitly).
        ca = local_ca(name, settings, stack, opts)
        spec: dict[str, Any] = {"ca": {"secretName": CA_SECRET}}
        depends: list[pulumi.Resource] = [ca]
    else:
        # Tenant domains prove themselves by a CNAME of `_acme-challenge.<domain>` into the stack's
        # zone (docs/edge.md); `cnameStrategy: Follow` makes cert-manager answer at the CNAME's target.
        solver = {"dns01": {**identity.dns01, "cnameStrategy": "Follow"}}
        spec = {
            "acme": {
                "server": edge.tls.acme.server,
                "email": edge.tls.acme.email,
                "privateKeySecretRef": {"name": f"{issuer_name(stack)}-acme-account"},
                "solvers": [solver],
            }
        }
        depends = []
    return k8s.apiextensions.CustomResource(
        f"{name}-issuer",
        api_version=CERT_MANAGER_API,
        kind="ClusterIssuer",
        metadata={
            "name": issuer_name(stack),
            "labels": labels,
            "annotations": wait_for(CERT_MANAGER_API, "ClusterIssuer"),
        },
        spec=spec,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=depends)),
    )
