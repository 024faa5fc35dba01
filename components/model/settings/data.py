"""Stack defaults for tenant data (`tenancy:data`): database placement, shared instances, shared
platform secrets and the safety nets (backups, recovery windows) every cloud resource gets.

Tenants choose what they need (spec.py `databases`, `secrets`, `sharedSecrets`); the stack decides
where it runs and how long deleted data stays recoverable.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from components.model.core.fields import DnsLabel, StrictModel, unique

Engine = Literal["postgres", "mysql"]
Placement = Literal["dedicated", "shared"]
# `<environment>/<database>`, as tools.operations.key_migration lists a dedicated instance.
LegacyDatabase = Annotated[str, Field(pattern=r"^[a-z][-a-z0-9]*/[a-z][a-z0-9_]{0,30}$")]


class SharedInstance(StrictModel):
    """A database instance shared by tenants whose databases ask for `placement: shared`: Cloud SQL
    (gcp), RDS (aws) or a MariaDB in `sharedInstancesNamespace` (local, engine mysql only).

    Each tenant gets its own database and user on it; the instance is the platform's and is
    created once per stack, by the platform part.
    """

    # `postgres` or `mysql` (local: `mysql` only, a MariaDB); a tenant database lands on a shared instance of
    # its own engine.
    engine: Engine
    # Major (or major.minor) engine version, such as `16` or `8.0`; one the stack's cloud offers, and tenant
    # databases placed here must ask for it.
    version: Annotated[str, Field(pattern=r"^\d+(\.\d+)?$")]
    # Instance size, `small`, `medium` or `large`, as for a tenant database (gcp: Cloud SQL machine type,
    # aws: RDS instance class); `medium` by default since many tenants share it.
    size: Literal["small", "medium", "large"] = "medium"
    # Disk size of the instance in GB (10-65536), shared by all databases on it.
    storage_gb: Annotated[int, Field(ge=10, le=65536)] = 100
    # Environments whose databases it hosts; None means every environment.
    environments: list[DnsLabel] | None = None
    # aws: the DB subnets it lives in, `shared` (aws.dbSubnetGroup) or the one environment it serves
    # (aws.databaseSubnets.<env>). Chosen once: RDS cannot move an instance to another subnet group
    # of the same VPC, so an instance in an environment's subnets serves that environment only, and
    # one without this key lives in the shared subnets however many environments it serves
    # (docs/adr/0035-rds-placement-is-chosen-once.md).
    subnets: DnsLabel | None = None


class SharedSecret(StrictModel):
    """A platform secret (registry pull credentials, a licence key) tenants may opt into.

    Its value is kept out of band: in Secret Manager / Secrets Manager under `remoteKey` on GCP and
    AWS, or in a Kubernetes Secret named `remoteKey` in `sharedSecretsNamespace` on a local cluster.
    """

    # Where the value lives: the secret's name in Secret Manager (gcp) or Secrets Manager (aws), or the name of
    # the Kubernetes Secret in `sharedSecretsNamespace` (local).
    remote_key: Annotated[str, Field(pattern=r"^[A-Za-z0-9_/.-]{1,255}$")]
    # Kubernetes Secret type in the tenant namespace, e.g. kubernetes.io/dockerconfigjson.
    type: str = "Opaque"
    # Key inside the delivered Kubernetes Secret.
    key: Annotated[str, Field(pattern=r"^[-._a-zA-Z0-9]+$")] = "value"
    # Free text for people reading the stack file (what the secret is, who owns it); nothing is rendered from
    # it.
    description: str = ""


class LegacyKey(StrictModel):
    """A tenant whose stack was deployed before keys and identities were per environment
    (docs/runbooks/per-environment-keys.md): its one old key becomes `environment`'s key in place,
    and the listed dedicated databases of its other environments keep that key until moved."""

    # The environment that takes the old per-tenant key over, with no replacement (usually prod).
    environment: DnsLabel
    # `<environment>/<database>`: dedicated instances still encrypted with the old key. Their key
    # cannot change in place (Cloud SQL, RDS); remove an entry once the instance has been moved.
    databases: Annotated[list[LegacyDatabase], AfterValidator(unique)] = []


class DataSettings(StrictModel):
    """Everything a stack decides about tenant data."""

    # Stack default, `dedicated` (an instance per database) or `shared` (a database on one of
    # `sharedInstances`); a database may override it with its own `placement`.
    placement: Placement = "dedicated"
    # Shared database instances by name, for databases with `placement: shared` (created once per stack by the
    # platform part; docs/data-and-secrets.md).
    shared_instances: dict[DnsLabel, SharedInstance] = {}
    # local only: the platform namespace shared MariaDB instances run in (created by the platform).
    shared_instances_namespace: DnsLabel = "tenancy-databases"
    # Platform secrets by name that tenants may opt into with `sharedSecrets:` in their file; each is copied
    # into the tenant's namespaces by External Secrets.
    shared_secrets: dict[DnsLabel, SharedSecret] = {}
    # local only: where the platform team keeps the source Secrets of shared secrets.
    shared_secrets_namespace: DnsLabel = "tenancy-shared"
    # Where External Secrets Operator runs; the ClusterSecretStore authenticates from there.
    secrets_operator_namespace: DnsLabel = "external-secrets"
    # How often ESO re-reads secrets from the cloud (rotation reaches pods within this time).
    refresh_interval: Annotated[str, Field(pattern=r"^\d+(s|m|h)$")] = "1h"
    # AWS Secrets Manager keeps a deleted secret this many days before it is gone (7-30).
    secret_recovery_days: Annotated[int, Field(ge=7, le=30)] = 30
    # Automated backups kept this many days; point-in-time recovery covers the same window.
    backup_retention_days: Annotated[int, Field(ge=1, le=35)] = 14
    # How far the cloud may grow a database's disk on its own, as a multiple of its `storageGb`: RDS
    # storage autoscaling's `max_allocated_storage` and Cloud SQL's `disk_autoresize_limit`. Neither
    # disk shrinks again, so growth without a limit is a bill without one.
    storage_growth_factor: Annotated[int, Field(ge=1, le=10)] = 4
    # GCP: the final backup taken when an instance is deleted is kept this many days.
    final_backup_retention_days: Annotated[int, Field(ge=1, le=365)] = 30
    # Days a decommissioned tenant's data (databases, keys, secrets, namespaces kept for data)
    # is retained after its `decommissionedOn` before `tenancy offboard` prints the
    # commands that delete it.
    retention_days: Annotated[int, Field(ge=0, le=3650)] = 90
    # local: the MariaDB image that serves `engine: mysql` (MySQL wire-compatible).
    local_mariadb_image: str = "docker-registry1.mariadb.com/library/mariadb:11.4.5"
    # Names of offboarded tenants whose retained data has been deleted, so a new tenant may take
    # the name again (components/model/checks/released_names.py, docs/operations.md).
    reused_tenant_names: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    # gcp, aws: tenants deployed before per-environment keys, by name (tools.operations.key_migration writes it).
    legacy_keys: dict[DnsLabel, LegacyKey] = {}

    def legacy_key(self, tenant: str) -> LegacyKey | None:
        """The tenant's old per-tenant key settings, if its stack predates per-environment keys."""
        return self.legacy_keys.get(tenant)

    def keeps_legacy_key(self, tenant: str, environment: str, database: str) -> bool:
        """True for a dedicated instance that is still encrypted with the tenant's old key."""
        legacy = self.legacy_keys.get(tenant)
        return legacy is not None and f"{environment}/{database}" in legacy.databases

    def shared_instance(self, engine: str, version: str, environment: str) -> str | None:
        """The shared instance for a database: same engine and version, serving its environment."""
        for name, instance in sorted(self.shared_instances.items()):
            if (
                instance.engine == engine
                and instance.version == version
                and (instance.environments is None or environment in instance.environments)
            ):
                return name
        return None
