"""The tenant spec: the model of one `tenants/<name>.yaml` file.

It is validated on its own here (shape, formats, names, pinned versions); checks that need every
tenant or the stack settings (unique names, disjoint domains, known node pools) live in catalog.py.
The sections for data and delivery are part of the format from the start so tenant files written
today stay valid as the platform grows.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, EmailStr, Field, model_validator

from components.model.fields import ComputeAmounts, DnsLabel, Domain, QuotaSpec, StrictModel, quantity_value
from components.model.labels import MAX_DNS_LABEL, max_tenant_name_length, namespace_name

Lifecycle = Literal["active", "suspended", "decommissioned"]

# Exact versions only: `1.2.3`, `1.2.3-rc.1`, `v2.0.1`. A range (`^1.2`, `~1`, `>=1`, `1.x`, `*`)
# would let an upstream release change a tenant without a reviewed change to its file.
_PINNED_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
_IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
_FLOATING_TAGS = {"latest", "stable", "main", "master", "edge", "nightly"}


def _pinned(value: str) -> str:
    if not _PINNED_VERSION.match(value):
        raise ValueError(f"{value!r} is not a pinned version (use an exact version such as 1.4.2, not a range)")
    return value


PinnedVersion = Annotated[str, AfterValidator(_pinned)]


def _unique_names(items: list[Any]) -> list[Any]:
    names = [item.name for item in items]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"names must be unique; repeated: {', '.join(duplicates)}")
    return items


def _unique(values: list[str]) -> list[str]:
    duplicates = sorted({v for v in values if values.count(v) > 1})
    if duplicates:
        raise ValueError(f"duplicate entries: {', '.join(duplicates)}")
    return values


class AccessSpec(StrictModel):
    """Identity-provider groups per role. Each role maps to one shared ClusterRole."""

    admin: list[str] = []
    operator: list[str] = []
    viewer: list[str] = []


class QuotaChoice(StrictModel):
    """Either a named tier from stack config or explicit amounts, never both."""

    tier: DnsLabel | None = None
    custom: QuotaSpec | None = None

    @model_validator(mode="after")
    def _one_of(self) -> QuotaChoice:
        if (self.tier is None) == (self.custom is None):
            raise ValueError("set exactly one of tier (a name from quotaTiers) or custom (explicit amounts)")
        return self


DatabaseName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,30}$")]
# The keys of every `db-<name>` credentials Secret, the same on every cloud (components/clouds).
DatabaseKey = Literal["host", "port", "database", "username", "password"]
DATABASE_KEYS: tuple[DatabaseKey, ...] = ("host", "port", "database", "username", "password")


class DatabaseSpec(StrictModel):
    """A database the tenant owns, one per environment it is placed in."""

    name: DatabaseName
    engine: Literal["postgres", "mysql"]
    version: Annotated[str, Field(pattern=r"^\d+(\.\d+)?$")]
    size: Literal["small", "medium", "large"] = "small"
    storage_gb: Annotated[int, Field(ge=10, le=65536)] = 20
    # Connection pool size (PgBouncer / Cloud SQL managed pooling); Postgres only.
    pool_size: Annotated[int, Field(ge=1, le=10000)] | None = None
    # None: the stack default. dedicated = own instance; shared = a database on a shared instance.
    placement: Literal["dedicated", "shared"] | None = None
    environments: list[DnsLabel] | None = None

    @model_validator(mode="after")
    def _pool_for_postgres(self) -> DatabaseSpec:
        if self.pool_size is not None and self.engine != "postgres":
            raise ValueError("poolSize is only available for engine postgres")
        return self


class SecretSpec(StrictModel):
    """A per-tenant secret stored in the cloud secret manager under the tenant's key."""

    name: DnsLabel
    # generated: the platform creates a random value. external: someone fills it in out of band.
    source: Literal["generated", "external"]
    length: Annotated[int, Field(ge=16, le=256)] = 32
    # Key inside the Kubernetes Secret the value is delivered under.
    key: Annotated[str, Field(pattern=r"^[-._a-zA-Z0-9]+$")] = "value"
    environments: list[DnsLabel] | None = None


class ChartSource(StrictModel):
    """A Helm chart at a pinned version from an HTTPS repository or an OCI registry."""

    repository: Annotated[str, Field(pattern=r"^(https|oci)://[^\s]+$")]
    name: Annotated[str, Field(pattern=r"^[a-z0-9][-a-z0-9_.]*$")]
    version: PinnedVersion
    # Credentials of a private repository: one of the tenant's secrets or shared secrets
    # (HTTPS: keys username/password; OCI: a docker config JSON).
    secret: DnsLabel | None = None


class ImageSource(StrictModel):
    """A container image pinned by tag or digest (a digest is the stronger pin)."""

    repository: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._/:-]*[a-z0-9]$")]
    tag: str | None = None
    digest: str | None = None
    port: Annotated[int, Field(ge=1, le=65535)] | None = None
    # Pull credentials for a private registry: one of the tenant's secrets or shared secrets.
    pull_secret: DnsLabel | None = None

    @model_validator(mode="after")
    def _pinned(self) -> ImageSource:
        if self.tag is None and self.digest is None:
            raise ValueError("pin the image with a tag or a digest")
        if self.tag is not None and (not _IMAGE_TAG.match(self.tag) or self.tag in _FLOATING_TAGS):
            raise ValueError(f"tag {self.tag!r} is not a pinned tag (floating tags such as latest are refused)")
        if self.digest is not None and not _DIGEST.match(self.digest):
            raise ValueError(f"digest {self.digest!r} is not a sha256 digest")
        return self


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_names(value: dict[str, str]) -> dict[str, str]:
    bad = sorted(name for name in value if not _ENV_NAME.match(name))
    if bad:
        raise ValueError(f"not environment variable names: {', '.join(bad)} (letters, digits and '_')")
    return value


# A Helm value path as Flux `valuesFrom[].targetPath` takes it: `a.b.c`, `a.list[0].b`.
ValuePath = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9_-]+(\[[0-9]{1,5}\])*(\.[A-Za-z0-9_-]+(\[[0-9]{1,5}\])*)*$", max_length=250)
]


class AppDatabase(StrictModel):
    """One of the tenant's databases an app uses, by name; its credentials reach the app.

    Image apps get every key as an environment variable (`DB_<NAME>_<KEY>`). Chart apps get them
    as Helm values: at the paths `values` names (any chart that takes its database settings as
    values), or, without `values`, every key under `tenancy.databases.<name>`.
    """

    name: DatabaseName
    # Chart apps only: the Helm value path each credential key is set at.
    values: dict[DatabaseKey, ValuePath] | None = None

    def env_names(self) -> dict[DatabaseKey, str]:
        """Image apps: key -> environment variable, `orders` -> `DB_ORDERS_HOST`, ..."""
        return {key: f"DB_{self.name.upper()}_{key.upper()}" for key in DATABASE_KEYS}

    def value_paths(self) -> dict[DatabaseKey, str]:
        """Chart apps: key -> Helm value path; only the mapped keys when `values` is given."""
        if self.values is not None:
            return dict(self.values)
        return {key: f"tenancy.databases.{self.name}.{key}" for key in DATABASE_KEYS}


def _database_reference(value: Any) -> Any:
    """`orders` is short for `{name: orders}`."""
    return {"name": value} if isinstance(value, str) else value


AppDatabaseRef = Annotated[
    AppDatabase, BeforeValidator(_database_reference, json_schema_input_type=DatabaseName | AppDatabase)
]


class AppResources(StrictModel):
    """Requests and limits of an image app's container; the namespace's LimitRange fills gaps."""

    requests: ComputeAmounts = ComputeAmounts()
    limits: ComputeAmounts = ComputeAmounts()

    @model_validator(mode="after")
    def _requests_within_limits(self) -> AppResources:
        for resource in ("cpu", "memory"):
            request, limit = getattr(self.requests, resource), getattr(self.limits, resource)
            if request is not None and limit is not None and quantity_value(request) > quantity_value(limit):
                raise ValueError(f"requests.{resource} ({request}) is above limits.{resource} ({limit})")
        return self


class AppSpec(StrictModel):
    """One component of the tenant's instance at a pinned version.

    There is deliberately no replica count: autoscalers own it (the platform never reverts it).
    """

    name: DnsLabel
    chart: ChartSource | None = None
    image: ImageSource | None = None
    # Helm values of a chart app.
    values: dict[str, Any] = {}
    # Image apps only (a chart takes its settings through `values`): environment variables,
    # secrets mounted read-only at /var/run/secrets/tenancy/<name>, and container resources.
    env: Annotated[dict[str, str], AfterValidator(_env_names)] = {}
    secrets: Annotated[list[DnsLabel], AfterValidator(_unique)] = []
    resources: AppResources | None = None
    # The tenant's databases this app uses (image and chart apps; see AppDatabase).
    databases: Annotated[list[AppDatabaseRef], AfterValidator(_unique_names)] = []
    environments: list[DnsLabel] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> AppSpec:
        if (self.chart is None) == (self.image is None):
            raise ValueError("set exactly one of chart or image")
        if self.chart is not None and (self.env or self.secrets or self.resources is not None):
            raise ValueError("env, secrets and resources apply to image apps; give a chart its settings in values")
        if self.image is not None and self.values:
            raise ValueError("values are Helm chart values; an image app takes env, secrets and resources")
        return self

    def secret_references(self) -> list[tuple[str, str]]:
        """(field path below the app, secret name) for every secret this app uses."""
        references = [(f"secrets.{index}", secret) for index, secret in enumerate(self.secrets)]
        if self.chart is not None and self.chart.secret is not None:
            references.append(("chart.secret", self.chart.secret))
        if self.image is not None and self.image.pull_secret is not None:
            references.append(("image.pullSecret", self.image.pull_secret))
        return references


class GitRef(StrictModel):
    """Which revision Flux follows: one of branch, tag, semver or commit."""

    branch: str | None = None
    tag: str | None = None
    commit: Annotated[str, Field(pattern=r"^[a-f0-9]{40}$")] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> GitRef:
        chosen = [k for k in ("branch", "tag", "commit") if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError("set exactly one of branch, tag or commit")
        return self


def _relative_path(value: str) -> str:
    parts = value.strip("/").split("/")
    if value.startswith("/") or ".." in parts:
        raise ValueError(f"path {value!r} must stay inside the repository (no leading '/' and no '..')")
    if "{" in value.replace("{environment}", "") or "}" in value.replace("{environment}", ""):
        raise ValueError(f"path {value!r}: the only placeholder is {{environment}}")
    return value


RepoPath = Annotated[str, AfterValidator(_relative_path)]


class GitOpsSpec(StrictModel):
    """The tenant's Git repository, applied to its namespaces by the cluster's Flux."""

    url: Annotated[str, Field(pattern=r"^(https://|ssh://)[^\s]+$")]
    ref: GitRef = GitRef(branch="main")
    # Path per environment; `{environment}` is replaced by the environment name.
    path: RepoPath = "./deploy/{environment}"
    # Name of a Secret (from `secrets`, source external) holding the Git credentials.
    secret: DnsLabel | None = None
    interval: Annotated[str, Field(pattern=r"^\d+(s|m|h)$")] = "5m"
    environments: list[DnsLabel] | None = None


class TenantSpec(StrictModel):
    """One tenant: a team, a customer or an app, and everything the platform runs for it."""

    name: DnsLabel
    display_name: Annotated[str, Field(min_length=1, max_length=200)]
    organization: str | None = None
    contact: EmailStr
    cost_center: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,63}$")]
    environments: Annotated[list[DnsLabel], Field(min_length=1), AfterValidator(_unique)] = ["dev", "prod"]
    # Stacks this tenant exists in; None means every stack.
    stacks: list[DnsLabel] | None = None
    lifecycle: Lifecycle = "active"
    access: AccessSpec = AccessSpec()
    quota: QuotaChoice | None = None
    node_pool: DnsLabel | None = None
    # Hostnames beyond the default `<name>.<suffix>`; `*.example.org` covers its subdomains.
    domains: Annotated[list[Domain], AfterValidator(_unique)] = []
    allow_load_balancer: bool = False
    databases: Annotated[list[DatabaseSpec], AfterValidator(_unique_names)] = []
    secrets: Annotated[list[SecretSpec], AfterValidator(_unique_names)] = []
    # Names of shared platform secrets (stack config) copied into this tenant's namespaces.
    shared_secrets: Annotated[list[DnsLabel], AfterValidator(_unique)] = []
    apps: Annotated[list[AppSpec], AfterValidator(_unique_names)] = []
    gitops: GitOpsSpec | None = None
    # Pin to a shard instead of the hash of the name (large installs split into shard stacks).
    shard: Annotated[int, Field(ge=0)] | None = None

    def in_environment(self, items: list[Any], environment: str) -> list[Any]:
        """The entries of a section (databases, secrets, apps) that apply to one environment."""
        return [item for item in items if item.environments is None or environment in item.environments]


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
    # The groups reach the admission policies as one comma-separated Namespace annotation.
    for role in ("admin", "operator", "viewer"):
        for index, group in enumerate(getattr(spec.access, role)):
            if "," in group or group != group.strip() or not group:
                message = f"{group!r} is not a usable group name (no commas or blanks)"
                problems.append((f"access.{role}.{index}", message))
    problems += _app_secret_problems(spec)
    problems += _app_database_problems(spec)
    return problems


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


class TenantFile(TenantSpec):
    """The file format: the spec plus per-stack overrides, which the catalog merges away."""

    # Per stack, a partial spec merged over the base: `overrides: {dev: {apps: [{name: web, ...}]}}`.
    overrides: dict[DnsLabel, dict[str, Any]] = {}
