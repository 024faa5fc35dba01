"""How identity-provider groups reach Kubernetes as the groups tenant files name (`tenancy:people`).

A tenant file binds roles to group names (`access.admin: [acme-admins]`); the API server only ever
sees a group when the cluster's authentication produces it. That mapping is configured outside
this program, per cloud, so the stack names it and the program refuses, at plan time, a tenant
group the mapping cannot produce (a binding nobody can ever match is an access bug found in
production):

- `googleGroups` (GKE Google Groups for RBAC, https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac):
  a group reaches RBAC as the group's email, and only groups nested in `gke-security-groups@<domain>`;
  tenant groups must be emails in `groupDomain`.
- `oidc` (an OIDC issuer: EKS identity provider config, a kube-apiserver `--oidc-*` / structured
  authentication configuration): groups come from the token's groups claim with `groupsPrefix`
  prepended (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#openid-connect-tokens);
  tenant groups must carry that prefix.
- `accessEntries` (EKS access entries, https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html):
  each entry lists its `kubernetesGroups` explicitly; tenant groups must be among `groups`, the
  groups the stack's access entries carry.
- `impersonation` (kind: `kubectl --as-group`) and `any` (the default: not checked) produce any name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, model_validator

from components.model.core.fields import StrictModel

if TYPE_CHECKING:
    from components.model.tenant_file.spec import TenantSpec

Mapping = Literal["any", "impersonation", "googleGroups", "oidc", "accessEntries"]


class PeopleSettings(StrictModel):
    """The stack's group mapping (docs/go-live.md, People)."""

    # How groups reach the API server: `any` (not checked), `impersonation` (kind: people act as
    # their groups with `kubectl --as-group`), `googleGroups` (GKE Google Groups for RBAC: groups are
    # emails in `groupDomain`), `oidc` (an OIDC issuer's group claim, prefixed by `groupsPrefix`),
    # `accessEntries` (EKS access entries: only the Kubernetes groups listed in `groups`).
    mapping: Mapping = "any"
    # googleGroups: the Google Workspace domain of the groups (`example.com`).
    group_domain: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.-]*\.[a-z]{2,63}$")] | None = None
    # oidc: the prefix the API server prepends to every group of the claim (`oidc:`; empty for none).
    groups_prefix: str = ""
    # accessEntries: every Kubernetes group the stack's access entries carry.
    groups: list[Annotated[str, Field(min_length=1)]] = []

    @model_validator(mode="after")
    def _complete(self) -> PeopleSettings:
        if self.mapping == "googleGroups" and self.group_domain is None:
            raise ValueError("mapping googleGroups needs groupDomain (the Google Workspace domain of the groups)")
        if self.mapping == "accessEntries" and not self.groups:
            raise ValueError("mapping accessEntries needs groups (the Kubernetes groups of the access entries)")
        return self

    def refusal(self, group: str) -> str | None:
        """Why the mapping cannot produce `group`, or None when it can."""
        if self.mapping == "googleGroups" and not group.endswith(f"@{self.group_domain}"):
            return f"Google Groups for RBAC gives groups as emails in {self.group_domain}: not {group!r}"
        if self.mapping == "oidc" and not group.startswith(self.groups_prefix):
            return f"the OIDC issuer's groups carry the prefix {self.groups_prefix!r}: {group!r} has not"
        if self.mapping == "accessEntries" and group not in self.groups:
            return f"no access entry of the stack carries the group {group!r} (people.groups: {', '.join(self.groups)})"
        return None


def people_problems(spec: TenantSpec, people: PeopleSettings) -> list[tuple[str, str]]:
    """(field, message) for every access group of the tenant the stack's mapping cannot produce."""
    problems = []
    for role in ("admin", "operator", "viewer"):
        for index, group in enumerate(getattr(spec.access, role)):
            why = people.refusal(group)
            if why is not None:
                problems.append((f"access.{role}.{index}", why))
    return problems
