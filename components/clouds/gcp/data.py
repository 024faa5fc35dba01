"""Tenant data on GCP: per tenant environment a CryptoKey in the platform key ring and a Google
service account bound to that environment's `workload` Kubernetes service account only; Cloud SQL
and Secret Manager under the environment's key, each secret readable by its environment's account.

The cluster-wide parts (key ring, shared instances, the shared-secrets identity) are in
`platform.py`; both use this module's Cloud SQL settings and roles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.clouds.base import (
    WORKLOAD_ACCOUNT,
    DatabaseEgress,
    DatabaseEndpoint,
    DatabaseLogin,
    DatabaseRequest,
    DeliveryTarget,
    Guard,
    PlatformValues,
    SecretRequest,
    TenantIdentity,
    deliver_credentials,
    endpoint_egress,
    generate_password,
)
from components.clouds.eso import EsoDelivery
from components.clouds.gcp.cloud_sql import machine
from components.clouds.gcp.disk_size import Disk, deployed, disk, disk_options
from components.clouds.gcp.name_rules import cloud_sql_instance_name
from components.clouds.gcp.shared import GcpSharedLogins
from components.clouds.legacy_keys import (
    adopts_legacy_key,
    instance_options,
    key_options,
    last_outputs,
    legacy_gcp_key_name,
)
from components.model.settings.clouds import GcpSettings
from components.model.settings.data import DataSettings

SECRET_ACCESSOR = "roles/secretmanager.secretAccessor"
KEY_USER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
_DAY = 86400
_MAX_KEY_NAME = 63


def database_version(engine: str, version: str) -> str:
    """Cloud SQL's version enum: `POSTGRES_16`, `MYSQL_8_0`."""
    return f"{'POSTGRES' if engine == 'postgres' else 'MYSQL'}_{version.replace('.', '_')}"


def service_account_id(tenant: str, environment: str) -> str:
    """A GSA id (6-30 characters) per tenant environment that stays unique for long names: a
    readable prefix of both plus a hash of the pair (`-` may occur in either, so the hash decides)."""
    digest = hashlib.sha256(f"{tenant}/{environment}".encode()).hexdigest()[:8]
    return f"t-{tenant[:12].rstrip('-')}-{environment[:6].rstrip('-')}-{digest}"


def key_name(tenant: str, environment: str, generation: int = 1) -> str:
    """The environment's CryptoKey in the platform ring; `_` is in no tenant or environment name.
    A re-used tenant name's keys carry their generation (`_g2`): the old tenant's CryptoKeys can
    never be deleted, so their names stay taken (key_reuse.py). Past CryptoKey's 63 characters a
    readable prefix keeps a hash of the whole."""
    name = f"tenancy_{tenant}_{environment}" + (f"_g{generation}" if generation > 1 else "")
    if len(name) <= _MAX_KEY_NAME:
        return name
    return f"{name[: _MAX_KEY_NAME - 9]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def workload_member(project: str, namespace: str) -> str:
    """The workload identity principal of the tenant's Kubernetes service account."""
    return f"serviceAccount:{project}.svc.id.goog[{namespace}/{WORKLOAD_ACCOUNT}]"


@dataclass
class GcpPlatform(PlatformValues):
    """Cluster-wide GCP resources every tenant refers to, as the platform stack exports them:
    `{"keyRing": id, "sharedInstances": {name: {"name", "connectionName", "privateIp",
    "adminSecretVersion"}}}` (the admin secret's version id, never its value)."""

    def key_ring(self) -> pulumi.Output[str]:
        # The ring once the service agents may use its keys, nothing else of the platform's: a
        # tenant key never waits for a shared instance (PlatformValues.value).
        return self.value("keyRing")


def _key(identity: TenantIdentity) -> pulumi.Output[str]:
    if identity.key is None:  # every GCP identity carries its environment's key
        raise ValueError("a GCP tenant identity without a key")
    return identity.key


def instance_settings(
    engine: str,
    size: str,
    disk_spec: Disk,
    data: DataSettings,
    gcp_settings: GcpSettings,
    labels: dict[str, str],
    pool_size: int | None = None,
) -> gcp.sql.DatabaseInstanceSettingsArgsDict:
    backups: gcp.sql.DatabaseInstanceSettingsBackupConfigurationArgsDict = {
        "enabled": True,
        "backup_retention_settings": {"retained_backups": data.backup_retention_days, "retention_unit": "COUNT"},
        "transaction_log_retention_days": min(data.backup_retention_days, 7),
    }
    # Point-in-time recovery: WAL archiving on Postgres, binary logs on MySQL.
    if engine == "postgres":
        backups["point_in_time_recovery_enabled"] = True
    else:
        backups["binary_log_enabled"] = True
    ip: gcp.sql.DatabaseInstanceSettingsIpConfigurationArgsDict = {"ipv4_enabled": False, "ssl_mode": "ENCRYPTED_ONLY"}
    if gcp_settings.network is not None:
        ip["private_network"] = gcp_settings.network
    # The edition is always named: left out, the API picks Enterprise Plus for PostgreSQL 16 and
    # later, which refuses `db-custom-*` machine types (cloud_sql.py).
    edition, tier = machine(size, pooled=pool_size is not None)
    settings: gcp.sql.DatabaseInstanceSettingsArgsDict = {
        "edition": edition,
        "tier": tier,
        # Sent on create and when raised, else Cloud SQL's (disk_size.py); autoresize up to a limit.
        "disk_size": disk_spec.size,
        "disk_autoresize": True,
        "disk_autoresize_limit": disk_spec.limit,
        "availability_type": "REGIONAL" if size == "large" else "ZONAL",
        # API-side deletion protection: no console, gcloud or API call deletes it.
        "deletion_protection_enabled": True,
        # Backups outlive the instance, and one last backup is taken when it is deleted.
        "retain_backups_on_delete": True,
        "final_backup_config": {"enabled": True, "retention_days": data.final_backup_retention_days},
        "backup_configuration": backups,
        "ip_configuration": ip,
        "user_labels": labels,
    }
    if pool_size is not None:
        # Managed connection pooling sized from the tenant's spec, on the Enterprise Plus edition
        # `machine` chose: only the environments of `tenancy:gcp.enterprisePlusEnvironments` get it.
        settings["connection_pool_configs"] = [
            {"connection_pooling_enabled": True, "flags": [{"name": "max_pool_size", "value": str(pool_size)}]}
        ]
    return settings


class GcpData:
    """Cloud SQL, Secret Manager and workload identity for one stack on GCP."""

    data_in_namespaces = False

    def __init__(
        self,
        settings_gcp: GcpSettings,
        cluster_name: str,
        data: DataSettings,
        shared: GcpPlatform,
        opts: pulumi.ResourceOptions,
    ) -> None:
        self._gcp = settings_gcp
        self._cluster = cluster_name
        self._data = data
        self._platform = shared
        # Stack-level reads of the shared instances' admin secrets: the stack's providers (`opts`),
        # no parent. The stack disables default providers, so a read without them is refused.
        self._shared = GcpSharedLogins(data, shared, opts)
        self._opts = opts
        # What the stack deployed last: the disk sizes tenants asked for then (disk_size.py).
        self._previous = last_outputs("a raised storageGb waits for the next run that can read them")
        self.delivery = EsoDelivery(data.refresh_interval, data.shared_secrets, self.secret_store_provider)

    def generated_value(self, name: str, length: int, guard: Guard) -> pulumi.Output[str]:
        return generate_password(name, length, guard)

    def remote_secret_name(self, tenant: str, environment: str, secret: str) -> str:
        # Secret Manager ids allow letters, digits, `-` and `_`: `_` is in no tenant or secret name.
        return f"tenancy_{tenant}_{environment}_{secret}"

    def database_egress(self, endpoints: Sequence[DatabaseEndpoint]) -> DatabaseEgress:
        # Cloud SQL private IPs are known addresses: open exactly those.
        return endpoint_egress(endpoints)

    def database_access(self, target: DeliveryTarget, endpoints: Sequence[DatabaseEndpoint]) -> None:
        # Each Cloud SQL instance has its own address: the egress NetworkPolicy tells them apart.
        return None

    def identity(
        self, tenant: str, environment: str, namespace: str | None, labels: dict[str, str], guard: Guard
    ) -> TenantIdentity:
        prefix = f"{tenant}-{environment}"
        # The environment's key: everything it stores is encrypted with it; rotated automatically.
        # A stack deployed before keys were per environment: one environment's key is the
        # tenant's old one, under its old name (a CryptoKey cannot be renamed; legacy_keys.py).
        adopted = adopts_legacy_key(self._data, tenant, environment)
        key = gcp.kms.CryptoKey(
            f"{prefix}-key",
            name=legacy_gcp_key_name(tenant)
            if adopted
            else key_name(tenant, environment, self._gcp.key_generations.get(tenant, 1)),
            key_ring=self._platform.key_ring(),
            rotation_period=f"{self._gcp.key_rotation_days * _DAY}s",
            labels=labels,
            opts=guard.data(**key_options(self._data, tenant, environment)),
        )
        if guard.release or namespace is None:
            # Offboarding: the key is kept, nobody needs to use it any more.
            return TenantIdentity(principal=None, key=key.id)
        account = gcp.serviceaccount.Account(
            f"{prefix}-identity",
            account_id=service_account_id(tenant, environment),
            display_name=f"tenancy tenant {tenant} environment {environment}",
            opts=guard.plain(),
        )
        # Authoritative: only this namespace's `workload` account may impersonate it.
        gcp.serviceaccount.IAMBinding(
            f"{prefix}-workload-identity",
            service_account_id=account.name,
            role="roles/iam.workloadIdentityUser",
            members=[workload_member(self._gcp.project, namespace)],
            opts=guard.plain(),
        )
        # No grant on the key: Cloud SQL and Secret Manager encrypt and decrypt with it through their
        # service agents (platform.py); a secret accessor reads CMEK-protected secrets without any
        # Cloud KMS role (https://cloud.google.com/secret-manager/docs/cmek), and the workload talks
        # to its database with a password, never to Cloud KMS.
        return TenantIdentity(
            principal=account.email,
            key=key.id,
            account_annotations=account.email.apply(lambda email: {"iam.gke.io/gcp-service-account": email}),
        )

    def database(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> DatabaseEndpoint:
        if request.placement == "shared":
            shared_name = self._data.shared_instance(request.engine, request.version, request.environment)
            if shared_name is None:  # catalog.py refuses such a tenant before anything is registered
                raise LookupError(f"no shared {request.engine} {request.version} instance for {request.environment}")
            # In SQL, not through the Cloud SQL API: an API user would be in cloudsqlsuperuser.
            login = self._shared.login(shared_name, request, guard)
        else:
            login = self._dedicated_login(request, identity, guard)
        remote = f"tenancy_{request.tenant}_{request.environment}_db_{request.name}"
        return deliver_credentials(self, request, identity, guard, login, remote)

    def _dedicated_login(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> DatabaseLogin:
        """A dedicated instance with its database and user (the tenant's alone, so the Cloud SQL
        API's user, a `cloudsqlsuperuser` member, reaches nothing of another tenant's)."""
        instance = self._instance(request, identity, guard)
        # ABANDON: deleting these from Pulumi leaves the database and user in place.
        gcp.sql.Database(
            f"{request.prefix}-database",
            name=request.name,
            instance=instance.name,
            deletion_policy="ABANDON",
            opts=guard.data(),
        )
        password = generate_password(f"{request.prefix}-password", 32, guard)
        gcp.sql.User(
            f"{request.prefix}-user",
            name=request.name,
            instance=instance.name,
            password=password,
            deletion_policy="ABANDON",
            opts=guard.data(),
        )
        private_ip = instance.private_ip_address
        return DatabaseLogin(
            username=request.name,
            password=password,
            host=private_ip,
            database=request.name,
            instance=instance.connection_name,
            egress_cidrs=[private_ip.apply(lambda ip: f"{ip}/32")],
        )

    def _instance(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> gcp.sql.DatabaseInstance:
        """A dedicated Cloud SQL instance, encrypted with its environment's key (CMEK)."""
        resource_name = f"{request.prefix}-instance"
        legacy_options = instance_options(
            self._data, request.tenant, request.environment, request.name, "encryptionKeyName"
        )
        disk_spec = disk(
            request.storage_gb,
            self._data.storage_growth_factor,
            deployed(self._previous, "tenants", request.tenant, "data", "databases", request.environment, request.name),
            self._gcp.project,
            self._opts,
        )
        return gcp.sql.DatabaseInstance(
            resource_name,
            # None: Pulumi's auto-name; past Cloud SQL's limit, a shortened one (name_rules.py).
            name=cloud_sql_instance_name(resource_name, self._gcp.project),
            database_version=database_version(request.engine, request.version),
            region=self._gcp.region,
            # The environment's key encrypts its dedicated instance (CMEK).
            encryption_key_name=_key(identity),
            deletion_protection=True,
            settings=instance_settings(
                request.engine,
                request.size,
                disk_spec,
                self._data,
                self._gcp,
                request.labels,
                pool_size=request.pool_size,
            ),
            # One still on the tenant's old key keeps it until moved (legacy_keys.py); the disk size
            # is Cloud SQL's once autoresize has grown it, unless raised (disk_size.py).
            opts=guard.data(**disk_options(legacy_options, disk_spec)),
        )

    def store_secret(self, request: SecretRequest, identity: TenantIdentity, guard: Guard) -> str:
        secret = gcp.secretmanager.Secret(
            f"{request.prefix}-secret",
            secret_id=request.remote_name,
            labels=request.labels,
            replication={
                "user_managed": {
                    "replicas": [
                        {"location": self._gcp.region, "customer_managed_encryption": {"kms_key_name": _key(identity)}}
                    ]
                }
            },
            deletion_protection=True,
            # A destroyed version stays recoverable for the recovery window.
            version_destroy_ttl=f"{self._data.secret_recovery_days * _DAY}s",
            opts=guard.data(),
        )
        if request.value is not None:
            gcp.secretmanager.SecretVersion(
                f"{request.prefix}-version",
                secret=secret.id,
                secret_data=request.value,
                # Replaced versions are disabled, not destroyed: an old value stays recoverable.
                deletion_policy="DISABLE",
                opts=guard.data(),
            )
        if identity.principal is not None:
            # Per secret, not a prefix condition: tenant names may prefix each other (acme, acme-eu).
            gcp.secretmanager.SecretIamMember(
                f"{request.prefix}-reader",
                secret_id=secret.id,
                role=SECRET_ACCESSOR,
                member=identity.principal.apply(lambda email: f"serviceAccount:{email}"),
                opts=guard.plain(),
            )
        return request.remote_name

    def secret_store_provider(self, namespace: str, identity: TenantIdentity) -> dict[str, Any]:
        return {
            "gcpsm": {
                "projectID": self._gcp.project,
                "auth": {
                    "workloadIdentity": {
                        "clusterLocation": self._gcp.cluster_location or self._gcp.region,
                        "clusterName": self._cluster,
                        "clusterProjectID": self._gcp.project,
                        "serviceAccountRef": {"name": WORKLOAD_ACCOUNT},
                    }
                },
            }
        }
