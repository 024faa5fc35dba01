"""The delivery sections of a tenant file: `apps` (chart or image, pinned) and `gitops`.

Versions are pinned exactly, so an upstream release never changes a tenant without a reviewed
change to its file.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from components.model.core.fields import (
    ComputeAmounts,
    DnsLabel,
    StrictModel,
    quantity_value,
    unique,
    unique_names,
)
from components.model.tenant_file.data import DATABASE_KEYS, DatabaseKey, DatabaseName
from components.model.tenant_file.hostnames import HostnameTemplate

# Exact versions only: `1.2.3`, `1.2.3-rc.1`, `v2.0.1`. A range (`^1.2`, `~1`, `>=1`, `1.x`, `*`)
# would let an upstream release change a tenant without a reviewed change to its file.
_PINNED_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
_IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
# A tag that names a branch or a channel moves with every push to it. Such a tag has no digit
# (`latest`, `main`, `develop`, `staging`), or starts with a branch prefix (`release-2.3`, `hotfix-12`);
# a version, a date or a commit hash has a digit and no such prefix (`1.29.4-alpine3.23`, `v2.3.0`).
_BRANCH_PREFIX = re.compile(r"^(release|releases|hotfix|feature|bugfix|branch)[-_.]", re.IGNORECASE)


def floating_tag(tag: str) -> bool:
    """Whether an image tag names a branch or channel that moves (see `_BRANCH_PREFIX`)."""
    return not any(character.isdigit() for character in tag) or bool(_BRANCH_PREFIX.match(tag))


def _pinned(value: str) -> str:
    if not _PINNED_VERSION.match(value):
        raise ValueError(f"{value!r} is not a pinned version (use an exact version such as 1.4.2, not a range)")
    return value


PinnedVersion = Annotated[str, AfterValidator(_pinned)]


class ChartSource(StrictModel):
    """A Helm chart at a pinned version from an HTTPS repository or an OCI registry."""

    # `https://` Helm repository URL (a Flux HelmRepository, one per distinct URL) or `oci://` registry path (an
    # OCIRepository per app) the chart is pulled from.
    repository: Annotated[str, Field(pattern=r"^(https|oci)://[^\s]+$")]
    # The chart's name in that repository.
    name: Annotated[str, Field(pattern=r"^[a-z0-9][-a-z0-9_.]*$")]
    # Exact chart version (`1.2.3`, `1.2.3-rc.1`, `v2.0.1`); ranges are refused so an upstream release never
    # changes the tenant unreviewed.
    version: PinnedVersion
    # Credentials of a private repository: one of the tenant's secrets or shared secrets
    # (HTTPS: keys username/password; OCI: a docker config JSON).
    secret: DnsLabel | None = None


class ImageSource(StrictModel):
    """A container image pinned by tag or digest (a digest is the stronger pin)."""

    # Image reference without tag or digest, such as `ghcr.io/acme/web`.
    repository: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._/:-]*[a-z0-9]$")]
    # An exact tag. A tag that names a branch or channel is refused: one without a digit (`latest`, `main`,
    # `develop`, `staging`) or with a branch prefix (`release-2.3`, `hotfix-12`, `feature-x1`), unless a digest
    # pins the image or `floatingTagAcknowledged` is set. Set a tag, a digest or both.
    tag: str | None = None
    # `sha256:<64 hex>`: the strongest pin (the tag may move, the digest cannot).
    digest: str | None = None
    # Container port the app listens on; when set, the container port `http` and a ClusterIP Service
    # named after the app on the same port are rendered. None: no Service.
    port: Annotated[int, Field(ge=1, le=65535)] | None = None
    # Pull credentials for a private registry: one of the tenant's secrets or shared secrets.
    pull_secret: DnsLabel | None = None
    # A tag that names a branch (`develop`, `release-2.3`) follows every push to it, unreviewed. Refused unless
    # the file says the app follows that branch on purpose (a dev build), like `gitops.sharedBranchAcknowledged`.
    floating_tag_acknowledged: bool = False

    @model_validator(mode="after")
    def _pinned(self) -> ImageSource:
        if self.tag is None and self.digest is None:
            raise ValueError("pin the image with a tag or a digest")
        if self.tag is not None and not _IMAGE_TAG.match(self.tag):
            raise ValueError(f"tag {self.tag!r} is not an image tag (letters, digits, '_', '.', '-'; at most 128)")
        if (
            self.tag is not None
            and self.digest is None
            and floating_tag(self.tag)
            and not self.floating_tag_acknowledged
        ):
            raise ValueError(
                f"tag {self.tag!r} names a branch or channel that moves with every push (a tag without a digit, or "
                "with a prefix such as release-), so the app would change unreviewed; pin a version tag (1.4.2), add "
                "a digest, or, for an app that follows that branch on purpose, set image.floatingTagAcknowledged: true "
                "(docs/delivery.md#image-tags)"
            )
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

    # A `databases[].name` of this tenant file; the database must exist in every environment the app runs in.
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

    # The app's name (a DNS label), unique in the file: names its HelmRelease or Deployment.
    name: DnsLabel
    chart: ChartSource | None = None
    image: ImageSource | None = None
    # Helm values of a chart app.
    values: dict[str, Any] = {}
    # Image apps only (a chart takes its settings through `values`): environment variables,
    # secrets mounted read-only at /var/run/secrets/tenancy/<name>, and container resources.
    env: Annotated[dict[str, str], AfterValidator(_env_names)] = {}
    # Names of the tenant's secrets or shared secrets an image app mounts read-only at
    # /var/run/secrets/tenancy/<name>.
    secrets: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    resources: AppResources | None = None
    # The tenant's databases this app uses (image and chart apps; see AppDatabase).
    databases: Annotated[list[AppDatabaseRef], AfterValidator(unique_names)] = []
    # Image apps with a port: hostnames the platform Gateway serves the app on, through an HTTPRoute in
    # the tenant's namespace (docs/edge.md); each must be served by every environment the app runs in.
    # `{suffix}` is the stack's domain suffix, `{environment}` the environment: `<tenant>-{environment}.{suffix}`.
    hostnames: Annotated[list[HostnameTemplate], AfterValidator(unique)] = []
    # Environments the app is installed in; None means every environment of the tenant.
    environments: list[DnsLabel] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> AppSpec:
        if (self.chart is None) == (self.image is None):
            raise ValueError("set exactly one of chart or image")
        if self.chart is not None and (self.env or self.secrets or self.resources is not None):
            raise ValueError("env, secrets and resources apply to image apps; give a chart its settings in values")
        if self.image is not None and self.values:
            raise ValueError("values are Helm chart values; an image app takes env, secrets and resources")
        if self.hostnames and (self.image is None or self.image.port is None):
            raise ValueError("hostnames need an image app with a port (a chart exposes itself through its values)")
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
    """Which revision Flux follows: exactly one of branch, tag or commit."""

    # Follow the newest commit of this branch.
    branch: str | None = None
    # Follow this tag.
    tag: str | None = None
    # Follow exactly this commit (40 hex characters).
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

    # `https://` or `ssh://` URL of the tenant's repository (the Flux GitRepository `url`).
    url: Annotated[str, Field(pattern=r"^(https://|ssh://)[^\s]+$")]
    ref: GitRef = GitRef(branch="main")
    # Path per environment; `{environment}` is replaced by the environment name.
    path: RepoPath = "./deploy/{environment}"
    # Name of a Secret (from `secrets`, source external) holding the Git credentials.
    secret: DnsLabel | None = None
    # How often Flux fetches the repository and re-applies the path (`30s`, `5m`, `1h`): the GitRepository and
    # Kustomization interval.
    interval: Annotated[str, Field(pattern=r"^\d+(s|m|h)$")] = "5m"
    # Environments that get a GitRepository and Kustomization; None means every environment of the tenant.
    environments: list[DnsLabel] | None = None
    # Per-environment revision instead of `ref` (prod on a tag or a protected branch of its own):
    # each environment's GitRepository follows its own ref (components/delivery/gitops.py).
    refs: dict[DnsLabel, GitRef] = {}
    # Two environments following one branch means whoever may push to it for dev changes prod.
    # Refused (consistency.py) unless the file says the branch is reviewed for every environment
    # it feeds: the monorepo-with-reviews setup of docs/delivery.md.
    shared_branch_acknowledged: bool = False

    def ref_for(self, environment: str) -> GitRef:
        """The revision `environment` follows: its entry in `refs`, else `ref`."""
        return self.refs.get(environment, self.ref)
