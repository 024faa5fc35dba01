"""Rules that relate fields of one tenant file to each other (names against environments, apps
against the tenant's databases and secrets), each reported with the exact field path."""

from __future__ import annotations

import re
from typing import Any

from components.model.checks.isolation import isolation_problems
from components.model.core.labels import MAX_DNS_LABEL, max_tenant_name_length, namespace_name
from components.model.tenant_file.spec import TenantSpec


def consistency_problems(spec: TenantSpec) -> list[tuple[str, str]]:
    """Rules that relate fields of one file to each other, as (field path, message) pairs.

    They live outside the model's validators so each problem can name the exact field.
    """
    problems: list[tuple[str, str]] = []
    longest = max(spec.environments, key=len)
    if len(namespace_name(spec.name, longest)) > MAX_DNS_LABEL:
        problems.append(
            (
                "name",
                f"{spec.name!r} is too long: namespace {namespace_name(spec.name, longest)!r} would exceed "
                f"{MAX_DNS_LABEL} characters "
                f"(at most {max_tenant_name_length(spec.environments)} for these environments)",
            )
        )
    problems += _lifecycle_problems(spec)
    sections: list[tuple[str, list[Any]]] = [
        ("databases", spec.databases),
        ("secrets", spec.secrets),
        ("apps", spec.apps),
    ]
    if spec.gitops is not None:
        sections.append(("gitops", [spec.gitops]))
    for section, items in sections:
        for index, item in enumerate(items):
            unknown = sorted(set(item.environments or []) - set(spec.environments))
            if unknown:
                where = f"{section}.environments" if section == "gitops" else f"{section}.{index}.environments"
                problems.append((where, f"environments the tenant does not have: {', '.join(unknown)}"))
    # Databases deliver their credentials as Secret `db-<name>`; secrets and shared secrets keep
    # their own names. Two of them under one name would overwrite each other in the namespace.
    credential_secrets = {"db-" + database.name.replace("_", "-"): database.name for database in spec.databases}
    for index, secret in enumerate(spec.secrets):
        if secret.name in credential_secrets:
            problems.append(
                (
                    f"secrets.{index}.name",
                    f"{secret.name!r} clashes with the credentials Secret of database "
                    f"{credential_secrets[secret.name]!r}",
                )
            )
    own_secrets = {secret.name for secret in spec.secrets} | set(credential_secrets)
    for index, shared in enumerate(spec.shared_secrets):
        if shared in own_secrets:
            problems.append((f"sharedSecrets.{index}", f"{shared!r} clashes with one of the tenant's own secrets"))
    gitops_secret = spec.gitops.secret if spec.gitops is not None else None
    if gitops_secret is not None and gitops_secret not in {s.name for s in spec.secrets}:
        problems.append(("gitops.secret", f"{gitops_secret!r} is not one of the tenant's secrets"))
    # Group names (commas, blanks, `system:` groups) are checked by the field type: name_checks.py.
    problems += _app_secret_problems(spec)
    problems += _app_database_problems(spec)
    problems += isolation_problems(spec)
    problems += _gitops_ref_problems(spec)
    return problems


def _gitops_ref_problems(spec: TenantSpec) -> list[tuple[str, str]]:
    """Per-environment refs name environments GitOps applies to; two environments following one
    branch need `sharedBranchAcknowledged` (each environment is its own trust zone: dev never
    changes prod by Git ref either, DESIGN.md "Security")."""
    gitops = spec.gitops
    if gitops is None:
        return []
    environments = [e for e in (gitops.environments or spec.environments) if e in spec.environments]
    problems = [
        (f"gitops.refs.{env}", f"GitOps does not apply to environment {env!r} (gitops.environments)")
        for env in sorted(set(gitops.refs) - set(environments))
    ]
    by_branch: dict[str, list[str]] = {}
    for env in environments:
        branch = gitops.ref_for(env).branch
        if branch is not None:
            by_branch.setdefault(branch, []).append(env)
    for branch, sharing in sorted(by_branch.items()):
        if len(sharing) > 1 and not gitops.shared_branch_acknowledged:
            last = sharing[-1]
            problems.append(
                (
                    "gitops.ref",
                    f"environments {', '.join(sharing)} all follow branch {branch!r}: whoever may push to it for "
                    f"{sharing[0]} changes {last} too. Give {last} its own revision (gitops.refs: {{{last}: "
                    f"{{tag: v1.0.0}}}} or {{{last}: {{branch: {last}}}}} on a protected branch), or, where every "
                    "change to that branch is reviewed, say so with gitops.sharedBranchAcknowledged: true "
                    "(docs/delivery.md#one-branch-or-one-per-environment)",
                )
            )
    return problems


def _lifecycle_problems(spec: TenantSpec) -> list[tuple[str, str]]:
    """A decommissioned tenant says since when (its data's retention counts from that day); no
    other state carries the date, so a resumed tenant cannot keep a stale one."""
    if spec.lifecycle == "decommissioned" and spec.decommissioned_on is None:
        return [
            (
                "decommissionedOn",
                "required with lifecycle: decommissioned: the day it was set (YYYY-MM-DD); "
                "the stack's data.retentionDays count from it",
            )
        ]
    if spec.lifecycle != "decommissioned" and spec.decommissioned_on is not None:
        return [("decommissionedOn", f"only a decommissioned tenant has one (lifecycle is {spec.lifecycle})")]
    return []


def _app_secret_problems(spec: TenantSpec) -> list[tuple[str, str]]:
    """An app may only use secrets delivered to every environment it runs in."""
    problems: list[tuple[str, str]] = []
    own = {secret.name: secret for secret in spec.secrets}
    for index, app in enumerate(spec.apps):
        app_environments = app.environments or spec.environments
        for where, secret_name in app.secret_references():
            secret = own.get(secret_name)
            if secret is None and secret_name not in spec.shared_secrets:
                problems.append(
                    (f"apps.{index}.{where}", f"{secret_name!r} is not one of the tenant's secrets or sharedSecrets")
                )
                continue
            missing = sorted(set(app_environments) - set(secret.environments)) if secret and secret.environments else []
            if missing:
                problems.append(
                    (
                        f"apps.{index}.{where}",
                        f"{secret_name!r} is not delivered to {', '.join(missing)} where the app runs",
                    )
                )
    return problems


def _app_database_problems(spec: TenantSpec) -> list[tuple[str, str]]:
    """An app may only use the tenant's own databases, present in every environment it runs in,
    and their credentials may not collide with what the app sets itself (`env`, `values`)."""
    problems: list[tuple[str, str]] = []
    databases = {database.name: database for database in spec.databases}
    for index, app in enumerate(spec.apps):
        app_environments = app.environments or spec.environments
        own_env = set(app.env)
        paths: dict[str, str] = {}
        for position, reference in enumerate(app.databases):
            where = f"apps.{index}.databases.{position}"
            database = databases.get(reference.name)
            if database is None:
                known = ", ".join(sorted(databases)) or "none"
                problems.append((where, f"{reference.name!r} is not one of the tenant's databases (defined: {known})"))
                continue
            present = database.environments or spec.environments
            # Environments the tenant does not have are reported once, by the check above.
            missing = sorted((set(app_environments) & set(spec.environments)) - set(present))
            if missing:
                problems.append(
                    (
                        where,
                        f"database {reference.name!r} does not exist in {', '.join(missing)} where the app runs "
                        f"(it is in {', '.join(present)})",
                    )
                )
            if app.image is not None:
                if reference.values is not None:
                    message = "value paths apply to chart apps; an image app gets environment variables DB_<NAME>_<KEY>"
                    problems.append((f"{where}.values", message))
                clashes = sorted(own_env & set(reference.env_names().values()))
                if clashes:
                    problems.append((where, f"sets {', '.join(clashes)}, which the app's env sets too"))
                continue
            for key, path in reference.value_paths().items():
                # Default paths were not written by anyone: report them at the reference itself.
                at = f"{where}.values.{key}" if reference.values is not None else where
                overlapping = next((p for p in paths if _paths_overlap(p, path)), None)
                if overlapping is not None:
                    problems.append((at, f"{path!r} overlaps {overlapping!r}, the target of {paths[overlapping]}"))
                paths[path] = f"{reference.name}.{key}"
                if _covered_by(app.values, path):
                    problems.append((at, f"{path!r} is also set in the app's values (values would win)"))
    return problems


def _path_parts(path: str) -> list[str]:
    return re.findall(r"[^.\[\]]+|\[\d+\]", path)


def _paths_overlap(a: str, b: str) -> bool:
    """Whether one value path is the other or lies below it (`db` and `db.host`)."""
    first, second = _path_parts(a), _path_parts(b)
    shorter = min(len(first), len(second))
    return first[:shorter] == second[:shorter]


def _covered_by(values: dict[str, Any], path: str) -> bool:
    """Whether `values` sets a value path (`a.b[0].c`), itself or a value above it.

    Flux merges `spec.values` over `valuesFrom`, so whatever `values` sets there would win.
    """
    node: Any = values
    for part in _path_parts(path):
        if isinstance(node, list) and part.startswith("["):
            position = int(part[1:-1])
            if position >= len(node):
                return False
            node = node[position]
        elif isinstance(node, dict):
            if part not in node:
                return False
            node = node[part]
        else:
            # A scalar (or a list where a key is expected) above the path replaces it whole.
            return node is not None
    return True
