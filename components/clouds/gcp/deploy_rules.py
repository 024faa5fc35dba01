"""What the GCP deploy identity (the one that runs `pulumi up`) must hold, per resource type the
program registers, and the APIs each type calls; as data with sources.

The bootstrap grants exactly these roles (tools/operations/bootstrap.py), docs/runbooks/gke.md lists
them and the APIs to enable, and tests/clouds/test_gcp_deploy_rules.py checks that every GCP type
in the prod plan has a rule here. Sources: the permission each API method needs
(https://cloud.google.com/iam/docs/permissions-reference) and the roles that hold it
(https://cloud.google.com/iam/docs/understanding-roles):
- `gcp.projects.ServiceIdentity` calls services.generateServiceIdentity, which needs
  `serviceusage.services.generateServiceIdentity` (roles/serviceusage.serviceUsageAdmin; no smaller
  predefined role holds it) and serviceusage.googleapis.com.
- `gcp.dns.DnsManagedZoneIamMember` needs `dns.managedZones.getIamPolicy/setIamPolicy`
  (roles/dns.admin) and dns.googleapis.com.
- `gcp.projects.IAMMember` needs `resourcemanager.projects.setIamPolicy`
  (roles/resourcemanager.projectIamAdmin). The program grants one role on the project, external-dns's
  roles/dns.reader, so the binding carries a condition that lets it grant nothing else
  (https://cloud.google.com/iam/docs/setting-limits-on-granting-roles, `modifiedGrantsByRole`).
- `gcp.serviceaccount.*` needs `iam.serviceAccounts.create/delete` and, for the Workload Identity
  bindings, `iam.serviceAccounts.setIamPolicy` (roles/iam.serviceAccountAdmin). Held unconditioned on
  the project, setIamPolicy lets the deploy identity grant itself token creation on any account
  (issue 44, 7). IAM Conditions cannot name service accounts (iam.googleapis.com is not among the
  services that recognize resource attributes, https://cloud.google.com/iam/docs/conditions-resource-attributes),
  so the binding is limited by what it may grant: `roles/iam.workloadIdentityUser` and nothing else.
  `roles/iam.serviceAccountUser` (actAs) is needed only where a node pool runs as an account: it is
  granted on each pool's `serviceAccount` (gke-nodes@...), never on the project.
- `gcp.certificatemanager.*` (the Gateway's certificate map, ADR 0041) needs
  `certificatemanager.{certs,certmaps,certmapentries,dnsauthorizations}.create/update/delete`
  and certificatemanager.googleapis.com: roles/certificatemanager.owner, since the editor role has no
  `.delete` (https://cloud.google.com/iam/docs/roles-permissions/certificatemanager), so removing a
  domain, offboarding or a destroy would fail; the stack's own
  authorization record is a `gcp.dns.RecordSet` (roles/dns.admin above).
- The DNS record-set role of cert-manager and external-dns is a custom role the bootstrap creates
  (edge_roles.py); the program reads it (`gcp.projects.IAMCustomRole.get`, `iam.roles.get`:
  roles/iam.roleViewer) before granting it per zone, and reads each zone (`gcp.dns.ManagedZone.get`,
  `dns.managedZones.get`, in roles/dns.admin).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeployRule:
    """The role the deploy identity needs for one resource type, and the API it calls."""

    role: str
    api: str


PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"
SERVICE_ACCOUNT_ADMIN = "roles/iam.serviceAccountAdmin"
SERVICE_ACCOUNT_USER = "roles/iam.serviceAccountUser"
_PREFIX_RULES: dict[str, DeployRule] = {
    "gcp:container/": DeployRule("roles/container.admin", "container.googleapis.com"),
    "gcp:sql/": DeployRule("roles/cloudsql.admin", "sqladmin.googleapis.com"),
    "gcp:secretmanager/": DeployRule("roles/secretmanager.admin", "secretmanager.googleapis.com"),
    "gcp:kms/": DeployRule("roles/cloudkms.admin", "cloudkms.googleapis.com"),
    "gcp:serviceaccount/": DeployRule(SERVICE_ACCOUNT_ADMIN, "iam.googleapis.com"),
    "gcp:dns/": DeployRule("roles/dns.admin", "dns.googleapis.com"),
    "gcp:certificatemanager/": DeployRule("roles/certificatemanager.owner", "certificatemanager.googleapis.com"),
    "gcp:projects/serviceIdentity:": DeployRule("roles/serviceusage.serviceUsageAdmin", "serviceusage.googleapis.com"),
    "gcp:projects/iAMMember:": DeployRule(PROJECT_IAM_ADMIN, "cloudresourcemanager.googleapis.com"),
    # Read only (the bootstrap creates the role): iam.roles.get.
    "gcp:projects/iAMCustomRole:": DeployRule("roles/iam.roleViewer", "iam.googleapis.com"),
}
# Roles bound on the project only with a condition on what they may grant
# (role -> (roles it may grant, condition title, why)).
GRANTABLE: dict[str, tuple[tuple[str, ...], str, str]] = {
    PROJECT_IAM_ADMIN: (
        ("roles/dns.reader",),
        "tenancy-grants-dns-reader-only",
        "may grant `roles/dns.reader` (external-dns's zone list) and nothing else",
    ),
    SERVICE_ACCOUNT_ADMIN: (
        ("roles/iam.workloadIdentityUser",),
        "tenancy-grants-workload-identity-only",
        "may grant `roles/iam.workloadIdentityUser` on service accounts and nothing else (never token "
        "creation or actAs, on its own account or any other)",
    ),
}
CONDITIONED = {role: (title, why) for role, (_, title, why) in GRANTABLE.items()}
# Roles granted on single service accounts, never on the project.
ON_ACCOUNTS = {
    SERVICE_ACCOUNT_USER: "on each node pool's `serviceAccount` only (GKE node pools run as it; actAs), never on "
    "the project",
}
# Cloud SQL private IP through private services access.
EXTRA_APIS = ("servicenetworking.googleapis.com",)


def prefix_rules() -> dict[str, DeployRule]:
    """The rules by type prefix, for the runbook."""
    return dict(_PREFIX_RULES)


def rule_for(type_token: str) -> DeployRule | None:
    """The rule of a `gcp:` resource type (None: no rule, a gap the tests report)."""
    matches = [rule for prefix, rule in _PREFIX_RULES.items() if type_token.startswith(prefix)]
    return matches[-1] if matches else None


def deploy_roles() -> tuple[str, ...]:
    """Every role the deploy identity is granted on the project, in a stable order."""
    return tuple(dict.fromkeys(rule.role for rule in _PREFIX_RULES.values()))


def required_apis() -> tuple[str, ...]:
    """Every API the project must have enabled before the first `up`."""
    return tuple(sorted({*(rule.api for rule in _PREFIX_RULES.values()), *EXTRA_APIS}))


def grant_condition(role: str = PROJECT_IAM_ADMIN) -> str | None:
    """`gcloud --condition` for a role of GRANTABLE (None: bound without a condition)."""
    if role not in GRANTABLE:
        return None
    roles, title, _ = GRANTABLE[role]
    listed = ", ".join(f"'{granted}'" for granted in roles)
    expression = f"api.getAttribute('iam.googleapis.com/modifiedGrantsByRole', []).hasOnly([{listed}])"
    return f"expression={expression},title={title}"
