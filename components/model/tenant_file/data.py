"""The data sections of a tenant file: `databases` and `secrets`.

Shapes and formats only; whether the stack's cloud can run an engine, version or placement is a
cross-check against the stack (data_checks.py).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from components.model.core.fields import (
    DnsLabel,
    StrictModel,
)
from components.model.tenant_file.reserved_names import reserved

DatabaseName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,30}$")]
# The keys of every `db-<name>` credentials Secret, the same on every cloud (components/clouds).
DatabaseKey = Literal["host", "port", "database", "username", "password"]
DATABASE_KEYS: tuple[DatabaseKey, ...] = ("host", "port", "database", "username", "password")


class DatabaseSpec(StrictModel):
    """A database the tenant owns, one per environment it is placed in."""

    # The database's name (lower case, digits, `_`; at most 31 characters), unique in the file. Its credentials
    # Secret is `db-<name>` with `_` as `-`; apps refer to the database by this name.
    name: DatabaseName
    # `postgres` or `mysql`. local: CloudNativePG or mariadb-operator in the namespace; gcp: Cloud SQL; aws:
    # RDS.
    engine: Literal["postgres", "mysql"]
    # Major (or major.minor) engine version, such as `16` or `8.0`; it must be one the stack's cloud offers
    # (data_checks.py lists them in the error).
    version: Annotated[str, Field(pattern=r"^\d+(\.\d+)?$")]
    # Instance size, `small`, `medium` or `large`. gcp: Cloud SQL machine `db-custom-1-3840`, `-2-7680`, `-4-15360`
    # (Enterprise Plus: `db-perf-optimized-N-2/4/8`); aws: `db.t4g.small`, `db.m7g.large`, `db.m7g.xlarge`; local
    # Postgres: 1, 2 or 3 CloudNativePG instances.
    size: Literal["small", "medium", "large"] = "small"
    # Disk size in GB (10-65536) of a dedicated instance; counts against the namespace's storage quota on local.
    storage_gb: Annotated[int, Field(ge=10, le=65536)] = 20
    # Connection pool size; Postgres, dedicated placement only: a PgBouncer Pooler on local, Cloud
    # SQL managed pooling on gcp (the instance becomes Enterprise Plus); refused on aws and shared.
    pool_size: Annotated[int, Field(ge=1, le=10000)] | None = None
    # None: the stack default. dedicated = own instance; shared = a database on a shared instance.
    placement: Literal["dedicated", "shared"] | None = None
    # Environments that get this database (each its own); None means every environment of the tenant.
    environments: list[DnsLabel] | None = None

    @model_validator(mode="after")
    def _pool_for_postgres(self) -> DatabaseSpec:
        if self.pool_size is not None and self.engine != "postgres":
            raise ValueError("poolSize is only available for engine postgres")
        return self

    @model_validator(mode="after")
    def _not_reserved(self) -> DatabaseSpec:
        # The engine would refuse it on the first `up` (reserved_names.py, with sources).
        if reserved(self.engine, self.name):
            raise ValueError(f"name {self.name!r} is reserved by {self.engine}; choose another database name")
        return self


class SecretSpec(StrictModel):
    """A per-tenant secret stored in the cloud secret manager under its environment's key."""

    # The secret's name (a DNS label), unique in the file: the Kubernetes Secret apps mount and the name
    # `apps[].secrets` and `chart.secret` refer to.
    name: DnsLabel
    # generated: the platform creates a random value. external: someone fills it in out of band.
    source: Literal["generated", "external"]
    # Length in characters of a generated value (16-256); ignored for `source: external`.
    length: Annotated[int, Field(ge=16, le=256)] = 32
    # Key inside the Kubernetes Secret the value is delivered under.
    key: Annotated[str, Field(pattern=r"^[-._a-zA-Z0-9]+$")] = "value"
    # Environments that get this secret (each its own value); None means every environment of the tenant.
    environments: list[DnsLabel] | None = None


def credentials_secret_name(database: str) -> str:
    """The Kubernetes Secret holding a database's credentials, `db-<name>` (`_` becomes `-`), on
    every cloud: apps refer to it by this name whatever delivers it."""
    return "db-" + database.replace("_", "-")
