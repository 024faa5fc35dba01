"""The Cloud DNS role cert-manager and external-dns get on the stack's zones: record sets and changes
only, as data with its sources (issue 44, 6).

`roles/dns.admin` holds `dns.managedZones.setIamPolicy` and `dns.managedZones.delete`
(https://cloud.google.com/iam/docs/roles-permissions/dns): a compromised solver could grant itself
more or delete the zone. No predefined Cloud DNS role holds record-set writes without those, so this
is a custom role; Cloud DNS takes custom roles on a managed zone
(https://cloud.google.com/dns/docs/zones/iam-per-resource-zones). Its permissions are cert-manager's
documented least-privilege set ("dns.resourceRecordSets.*, dns.changes.*, dns.managedZones.list",
https://cert-manager.io/docs/configuration/acme/dns01/google/), which also covers what external-dns's
google provider calls on a zone (ResourceRecordSets.List, Changes.Create; provider/google/google.go,
v0.21.0), plus `dns.managedZones.get` for reading the zone it is bound on. external-dns's project-wide
zone list is `roles/dns.reader` on the project (edge.py).

The bootstrap creates the role (it is the project's, not the stack's: a deleted custom role's name
"can take up to 30 more days (i.e. between 7 and 37 days after deletion)" to be free again, pulumi-gcp
10.2.0 `projects/iam_custom_role.py`, so no stack should own and delete it);
the program reads it before granting it, so a missing one fails the preview by name.
"""

from __future__ import annotations

DNS_RECORDS_ROLE_ID = "tenancyDnsRecords"
DNS_RECORDS_PERMISSIONS = (
    "dns.changes.create",
    "dns.changes.get",
    "dns.changes.list",
    "dns.managedZones.get",
    "dns.managedZones.list",
    "dns.resourceRecordSets.create",
    "dns.resourceRecordSets.delete",
    "dns.resourceRecordSets.get",
    "dns.resourceRecordSets.list",
    "dns.resourceRecordSets.update",
)
# What the role must never hold (roles/dns.admin's zone administration).
NEVER = ("dns.managedZones.setIamPolicy", "dns.managedZones.delete", "dns.managedZones.update")


def dns_records_role(project: str) -> str:
    """The custom role's full name, as IAM bindings name it."""
    return f"projects/{project}/roles/{DNS_RECORDS_ROLE_ID}"
