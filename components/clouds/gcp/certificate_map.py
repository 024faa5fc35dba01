"""GKE part of the edge's certificates: a Certificate Manager map with one entry and one
Google-managed certificate per name the platform Gateway serves, each proven by DNS authorization.

Why a map: certificates from Secrets or pre-shared certificates are SSL certificates on the target
HTTPS proxy, at most 15 per proxy (https://cloud.google.com/load-balancing/docs/quotas), which
capped a GKE stack at 14 tenants with domains. The proxy of a global external Application Load
Balancer takes one certificate map instead, "thousands of entries by default" that "can scale to
millions" (https://cloud.google.com/certificate-manager/docs/deploy); the Gateway names it by the
annotation `networking.gke.io/certmap` and its listeners carry no `tls`
(https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway). Project quotas bound the
map instead (components/model/checks/edge_contracts.py).

Why DNS authorization (https://cloud.google.com/certificate-manager/docs/dns-authorizations): it
issues before the name points at the load balancer, covers wildcards (`*.<suffix>`, tenants'
`*.api.<domain>`), and is one CNAME, `_acme-challenge.<domain>`, the owner of the zone publishes
once: tenants already delegate exactly that record for their domains (docs/edge.md). Load balancer
authorization issues only once the name resolves to the load balancer and takes no wildcard. The
stack's own `_acme-challenge.<suffix>` CNAME is written here, in the stack's first zone; tenants'
records are theirs to publish, from the stack output `certificateDnsAuthorizations`.

One certificate per name (not per tenant): a name whose owner has not yet published its record
holds back no other name, and a map entry takes the certificates of its own hostname only
(https://cloud.google.com/certificate-manager/docs/map-entries).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.edge.identity import CertificateMapRef
from components.model.core.labels import cloud_label_value
from components.model.settings.stack import StackSettings
from components.model.tenant_file.hostnames import authorization_domains

# Certificate Manager ids fully match [a-z0-9-]{1,63} (the API reference, name_rules.py
# "certificate-manager").
_MAX_ID = 63
_NOT_ID = re.compile(r"[^a-z0-9-]")
_DIGEST = 10


def resource_id(stack: str, hostname: str) -> str:
    """A stable Certificate Manager id for one name of one stack: readable, always ending in a hash of
    the stack and the whole name. The readable part alone would collide: dots and hyphens both become
    `-` (`shop.acme.example`, `shop-acme.example`), `*.` reads as `wildcard.`, and certificates and
    authorizations are per project, shared by the project's stacks (`prod` with `eu.acme.example`,
    `prod-eu` with `acme.example`)."""
    readable = _NOT_ID.sub("-", f"tenancy-{stack}-{hostname.replace('*.', 'wildcard.')}".lower())
    digest = hashlib.sha256(f"{stack}/{hostname}".encode()).hexdigest()[:_DIGEST]
    return f"{readable[: _MAX_ID - _DIGEST - 1].rstrip('-')}-{digest}"


def map_name(stack: str) -> str:
    """The stack's certificate map: `tenancy-<stack>` (one per stack, so stacks sharing a project
    never share a map)."""
    return _NOT_ID.sub("-", f"tenancy-{stack}".lower())[:_MAX_ID]


def _first_record(field: str) -> Any:
    """Read one field of a DNS authorization's record (one CNAME per authorization)."""
    return lambda records: getattr(records[0], field)


def _record(records: Sequence[Any]) -> dict[str, str]:
    """The CNAME an authorization asks for, as its domain's owner publishes it."""
    return {"name": records[0].name, "type": records[0].type, "data": records[0].data}


def _stack_record(
    prefix: str,
    settings: StackSettings,
    authorization: gcp.certificatemanager.DnsAuthorization,
    child: pulumi.ResourceOptions,
) -> gcp.dns.RecordSet:
    """The stack's own authorization CNAME (`_acme-challenge.<suffix>`) in its first zone."""
    assert settings.gcp is not None
    return gcp.dns.RecordSet(
        f"{prefix}-dns-authorization-record",
        project=settings.gcp.project,
        managed_zone=settings.edge.zones[0],
        name=authorization.dns_resource_records.apply(_first_record("name")),
        type="CNAME",
        ttl=300,
        rrdatas=[authorization.dns_resource_records.apply(_first_record("data"))],
        opts=child,
    )


def gcp_certificate_map(
    prefix: str, settings: StackSettings, stack: str, hostnames: Sequence[str], parent: pulumi.Resource
) -> CertificateMapRef:
    """The map, an entry and a certificate per name, a DNS authorization per domain, and the stack's
    own authorization record in its first zone; children `<prefix>-...` under `parent`."""
    assert settings.gcp is not None  # the settings model requires tenancy:gcp on gcp
    project = settings.gcp.project
    # 300 writes a minute per project (https://cloud.google.com/certificate-manager/docs/quotas): the
    # provider retries a 429 until the timeout, which a first `up` of hundreds of names can reach.
    child = pulumi.ResourceOptions(
        parent=parent, custom_timeouts=pulumi.CustomTimeouts(create="60m", update="60m", delete="60m")
    )
    # `managed-by` comes from the provider's default labels (cloud.py).
    labels = {"stack": cloud_label_value(stack)}
    certificate_map = gcp.certificatemanager.CertificateMap(
        f"{prefix}-certificate-map", name=map_name(stack), project=project, labels=labels, opts=child
    )
    authorizations: dict[str, gcp.certificatemanager.DnsAuthorization] = {}
    for domain in authorization_domains(hostnames):
        authorizations[domain] = gcp.certificatemanager.DnsAuthorization(
            f"{prefix}-dns-authorization-{domain}",
            name=resource_id(stack, domain),
            domain=domain,
            # A record of its own per project (`_acme-challenge_<id>.<domain>`), not the fixed
            # `_acme-challenge.<domain>`: that name stays the tenant's delegation for cert-manager's
            # DNS-01 (issuers.py), and the domain can be authorized from a second project (a move).
            type="PER_PROJECT_RECORD",
            project=project,
            labels=labels,
            opts=child,
        )
    for hostname in hostnames:
        authorization = authorizations[hostname.removeprefix("*.")]
        certificate = gcp.certificatemanager.Certificate(
            f"{prefix}-certificate-{hostname}",
            name=resource_id(stack, hostname),
            project=project,
            labels=labels,
            managed=gcp.certificatemanager.CertificateManagedArgs(
                domains=[hostname], dns_authorizations=[authorization.id]
            ),
            opts=child,
        )
        gcp.certificatemanager.CertificateMapEntry(
            f"{prefix}-certificate-map-entry-{hostname}",
            name=resource_id(stack, hostname),
            project=project,
            labels=labels,
            map=certificate_map.name,
            hostname=hostname,
            certificates=[certificate.id],
            opts=child,
        )
    _stack_record(prefix, settings, authorizations[settings.domain_suffix], child)
    tenant_records = {
        domain: authorization.dns_resource_records.apply(_record)
        for domain, authorization in authorizations.items()
        if domain != settings.domain_suffix
    }
    return CertificateMapRef(name=certificate_map.name, ready=[certificate_map], dns_records=tenant_records)
