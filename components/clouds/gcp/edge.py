"""GKE part of the edge: Google service accounts for cert-manager and external-dns, record-set
rights on the stack's Cloud DNS zones only, bound to their Kubernetes service accounts by Workload
Identity.

cert-manager's Cloud DNS solver (https://cert-manager.io/docs/configuration/acme/dns01/google/) and
external-dns's google provider (https://kubernetes-sigs.github.io/external-dns/latest/docs/tutorials/gke/)
both document Workload Identity: a GSA with `roles/dns.admin`, `roles/iam.workloadIdentityUser` for
`<project>.svc.id.goog[<namespace>/<account>]`, and the `iam.gke.io/gcp-service-account` annotation.
Not `roles/dns.admin` here: the custom role of edge_roles.py (record sets and changes, never zone IAM
or deletion), granted per managed zone (Cloud DNS resource-level IAM), not on the project. Each zone
and the role are read first: they are prerequisites nothing here creates, and a missing one fails
the preview by name instead of the first `up` after keys and secrets exist (issue 44, 4). external-dns
also lists the project's managed zones before filtering them (provider/google/google.go `Zones`,
v0.21.0): a zone-level grant answers that list with 403, so its account also gets `roles/dns.reader`
on the project (read only: zones and records, no change; components/model/settings/edge_contracts.py).
Zones are scoped with `--zone-id-filter`, which matches a zone's name on Google; `--zone-name-filter`
is read by the Azure provider only.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.clouds.gcp.edge_roles import dns_records_role
from components.edge.identity import (
    CERT_MANAGER_ACCOUNT,
    EXTERNAL_DNS_ACCOUNT,
    EdgeIdentity,
    service_account_values,
)
from components.model.settings.stack import StackSettings

# Holds dns.managedZones.list on the project, and nothing that changes a zone.
DNS_READER = "roles/dns.reader"


def _prerequisites(
    prefix: str, settings: StackSettings, child: pulumi.ResourceOptions
) -> tuple[dict[str, gcp.dns.ManagedZone], gcp.projects.IAMCustomRole]:
    """Reads of the stack's zones and of the record-set role, which the grants wait for."""
    assert settings.gcp is not None
    project = settings.gcp.project
    zones = {
        zone: gcp.dns.ManagedZone.get(f"{prefix}-zone-{zone}", f"projects/{project}/managedZones/{zone}", opts=child)
        for zone in settings.edge.zones
    }
    role = gcp.projects.IAMCustomRole.get(f"{prefix}-dns-records-role", dns_records_role(project), opts=child)
    return zones, role


def _identity(
    prefix: str,
    role: str,
    namespace: str,
    account: str,
    settings: StackSettings,
    parent: pulumi.Resource,
    opts: pulumi.ResourceOptions,
    reads: tuple[dict[str, gcp.dns.ManagedZone], gcp.projects.IAMCustomRole],
) -> pulumi.Output[str]:
    """A GSA `tenancy-<role>` with record-set rights on the stack's zones, usable by `namespace/account`; its email."""
    assert settings.gcp is not None  # the settings model requires tenancy:gcp on gcp
    project = settings.gcp.project
    child = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(parent=parent))
    zones, records_role = reads
    gsa = gcp.serviceaccount.Account(
        f"{prefix}-{role}-identity", account_id=f"tenancy-{role}", display_name=f"tenancy {role}", opts=child
    )
    gcp.serviceaccount.IAMBinding(
        f"{prefix}-{role}-workload-identity",
        service_account_id=gsa.name,
        role="roles/iam.workloadIdentityUser",
        members=[f"serviceAccount:{project}.svc.id.goog[{namespace}/{account}]"],
        opts=child,
    )
    member = gsa.email.apply(lambda email: f"serviceAccount:{email}")
    for zone in settings.edge.zones:
        gcp.dns.DnsManagedZoneIamMember(
            f"{prefix}-{role}-dns-{zone}",
            project=project,
            managed_zone=zone,
            role=dns_records_role(project),
            member=member,
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[zones[zone], records_role])),
        )
    if role == "external-dns":
        gcp.projects.IAMMember(
            f"{prefix}-{role}-zone-list", project=project, role=DNS_READER, member=member, opts=child
        )
    return gsa.email


def gcp_edge_identity(
    prefix: str, settings: StackSettings, parent: pulumi.Resource, opts: pulumi.ResourceOptions
) -> EdgeIdentity:
    """Identities for cert-manager and external-dns, and the Cloud DNS solver in the first zone."""
    assert settings.gcp is not None
    edge = settings.edge
    identity = EdgeIdentity()
    if not (edge.tls.enabled or edge.external_dns.enabled):
        return identity
    reads = _prerequisites(prefix, settings, pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(parent=parent)))
    if edge.tls.enabled:
        email = _identity(
            prefix, "cert-manager", edge.tls.chart.namespace, CERT_MANAGER_ACCOUNT, settings, parent, opts, reads
        )
        identity.values["cert-manager"] = service_account_values(
            CERT_MANAGER_ACCOUNT, {"iam.gke.io/gcp-service-account": email}
        )
        identity.dns01 = {"cloudDNS": {"project": settings.gcp.project, "hostedZoneName": edge.zones[0]}}
    if edge.external_dns.enabled:
        email = _identity(
            prefix,
            "external-dns",
            edge.external_dns.chart.namespace,
            EXTERNAL_DNS_ACCOUNT,
            settings,
            parent,
            opts,
            reads,
        )
        identity.values["external-dns"] = service_account_values(
            EXTERNAL_DNS_ACCOUNT, {"iam.gke.io/gcp-service-account": email}
        )
        identity.external_dns = {
            "provider": {"name": "google"},
            "extraArgs": [f"--google-project={settings.gcp.project}", *[f"--zone-id-filter={z}" for z in edge.zones]],
        }
    return identity
