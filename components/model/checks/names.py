"""Names a tenant file may not use: reserved tenant names and access groups (issue 13, hole 8).

A tenant's name ends up in namespaces (`tenant-<name>-<env>`), Pulumi resource names, KMS key
aliases (`alias/tenancy/<name>`), secret paths (`tenancy/<name>/...`) and cloud identities. The
platform uses the same places for its own things (`alias/tenancy/platform`,
`tenancy/platform/db/<instance>/admin`, `tenancy-*` resources and namespaces), so a tenant called
`platform` or `tenancy-shared` would share a key alias or a secret path with the platform and its
cloud identity could read the platform's database admin credentials. Kubernetes reserves `kube-*`
and `system*` for itself, and `default` is the namespace everything lands in by accident.

Access groups are bound to tenant roles. Kubernetes gives every caller built-in groups
(`system:authenticated` to every authenticated identity, `system:serviceaccounts[:<ns>]` to
every service account): binding one of them would hand the tenant's role to the whole cluster.
Any `system:` group is the API server's, never an identity provider's, so the whole prefix is
refused. Group names also travel to admission as one comma-separated annotation
(labels.GROUPS_KEY), so a comma would split one group into two.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

from components.model.core.errors import Problem

RESERVED_TENANT_NAMES = frozenset({"default", "kube", "platform", "system", "tenancy"})
# Prefixes of names Kubernetes (`kube-`, `system…`) or the platform (`tenancy…`) keeps for itself.
RESERVED_TENANT_PREFIXES = ("kube-", "system", "tenancy")
RESERVED_GROUP_PREFIX = "system:"


def reserved_tenant_name(name: str) -> str | None:
    """Why `name` may not name a tenant, or None when it may."""
    if name in RESERVED_TENANT_NAMES:
        return f"{name!r} is reserved for the platform or Kubernetes"
    for prefix in RESERVED_TENANT_PREFIXES:
        if name.startswith(prefix):
            return f"{name!r} starts with {prefix!r}, which is reserved for the platform or Kubernetes"
    return None


def _tenant_name(value: str) -> str:
    reason = reserved_tenant_name(value)
    if reason is not None:
        raise ValueError(f"{reason}; choose another tenant name")
    return value


def _access_group(value: str) -> str:
    if not value.strip():
        raise ValueError("a group name cannot be empty or blank")
    if value != value.strip() or any(c.isspace() for c in value):
        raise ValueError(f"{value!r} contains whitespace; identity-provider group names never do")
    if "," in value:
        raise ValueError(f"{value!r} contains ',', which would split it into two groups in admission")
    if value.startswith(RESERVED_GROUP_PREFIX):
        raise ValueError(
            f"{value!r} is a Kubernetes system group (every identity, service account or node of the cluster "
            "may carry it); bind an identity-provider group instead"
        )
    return value


TenantNameCheck = AfterValidator(_tenant_name)
AccessGroup = Annotated[
    str,
    AfterValidator(_access_group),
    WithJsonSchema({"type": "string", "pattern": r"^(?!system:)[^\s,]+$", "minLength": 1}),
]


def file_name_problems(name: object, stem: str, label: str, files_by_name: dict[str, str]) -> list[Problem]:
    """The file's `name` against its file name and the files read before it (recorded in `files_by_name`)."""
    if not isinstance(name, str):
        return []
    problems = []
    if name != stem:
        problems.append(Problem(label, "name", f"{name!r} must match the file name {stem!r}"))
    if name in files_by_name:
        problems.append(Problem(label, "name", f"tenant {name!r} is already defined in {files_by_name[name]}"))
    else:
        files_by_name[name] = label
    return problems
