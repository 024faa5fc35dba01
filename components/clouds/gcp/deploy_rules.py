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
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeployRule:
    """The role the deploy identity needs for one resource type, and the API it calls."""

    role: str
    api: str


# Roles bound only with a condition (role -> the roles it may grant).
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"
_PREFIX_RULES: dict[str, DeployRule] = {
    "gcp:container/": DeployRule("roles/container.admin", "container.googleapis.com"),
    "gcp:sql/": DeployRule("roles/cloudsql.admin", "sqladmin.googleapis.com"),
    "gcp:secretmanager/": DeployRule("roles/secretmanager.admin", "secretmanager.googleapis.com"),
    "gcp:kms/": DeployRule("roles/cloudkms.admin", "cloudkms.googleapis.com"),
    "gcp:serviceaccount/": DeployRule("roles/iam.serviceAccountAdmin", "iam.googleapis.com"),
    "gcp:dns/": DeployRule("roles/dns.admin", "dns.googleapis.com"),
    "gcp:projects/serviceIdentity:": DeployRule("roles/serviceusage.serviceUsageAdmin", "serviceusage.googleapis.com"),
    "gcp:projects/iAMMember:": DeployRule(
        "roles/resourcemanager.projectIamAdmin", "cloudresourcemanager.googleapis.com"
    ),
}
# Roles bound only with a condition (role -> the roles it may grant).
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"
GRANTABLE_ON_PROJECT = ("roles/dns.reader",)
# Beyond the resource types: acting as the service accounts it creates (Workload Identity bindings),
# and Cloud SQL private IP through private services access.
EXTRA_ROLES = ("roles/iam.serviceAccountUser",)
EXTRA_APIS = ("servicenetworking.googleapis.com",)


def rule_for(type_token: str) -> DeployRule | None:
    """The rule of a `gcp:` resource type (None: no rule, a gap the tests report)."""
    matches = [rule for prefix, rule in _PREFIX_RULES.items() if type_token.startswith(prefix)]
    return matches[-1] if matches else None


def deploy_roles() -> tuple[str, ...]:
    """Every role the deploy identity is granted on the project, in a stable order."""
    roles = dict.fromkeys([*(rule.role for rule in _PREFIX_RULES.values()), *EXTRA_ROLES])
    return tuple(roles)


def required_apis() -> tuple[str, ...]:
    """Every API the project must have enabled before the first `up`."""
    return tuple(sorted({*(rule.api for rule in _PREFIX_RULES.values()), *EXTRA_APIS}))


def grant_condition() -> str | None:
    """`gcloud --condition` for PROJECT_IAM_ADMIN: it may grant GRANTABLE_ON_PROJECT only."""
    roles = ", ".join(f"'{role}'" for role in GRANTABLE_ON_PROJECT)
    expression = f"api.getAttribute('iam.googleapis.com/modifiedGrantsByRole', []).hasOnly([{roles}])"
    return f"expression={expression},title=tenancy-grants-dns-reader-only"
