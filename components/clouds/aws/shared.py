"""Shared RDS instances (`placement: shared` on AWS): the instances once per stack, and per tenant
database a database and a login on one of them.

RDS has no API for databases or users inside an instance (Cloud SQL has), so Pulumi speaks SQL to
the instance through the engines' own providers, `pulumi_postgresql` and `pulumi_mysql`: one
provider per shared instance and stack, never one per tenant (each provider is a plugin process).
The runner of `pulumi up` (and of refreshes) must therefore reach shared instances over the
network (docs/data-and-secrets.md, "Shared instances on AWS").

The admin password is a `pulumi_random` password (a Pulumi secret from the provider onwards), set
as the instance's master password and kept as JSON in Secrets Manager under the platform key: for
people (break-glass) and as the one place every stack reads it from. A tenants shard reads it by
the secret version's id from the platform stack's output, which therefore carries no secret and
stays readable. RDS-managed master passwords (`manage_master_user_password`) were rejected: RDS
rotates them on its own schedule under a version id nobody knows in advance, so the providers
could only follow them through an invoke at every run, unknown in the preview of a new instance.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_mysql as mysql
import pulumi_postgresql as postgresql

from components.clouds.aws.rds import rds_instance
from components.clouds.aws.security_groups import members_group
from components.clouds.base import (
    ENGINE_PORTS,
    DatabaseLogin,
    DatabaseRequest,
    Guard,
    PlatformValues,
    generate_password,
    shared_names,
)
from components.model.clouds import AwsSettings
from components.model.data import DataSettings, SharedInstance

# The master user of shared instances (16 characters at most for MySQL, not a reserved word).
ADMIN_USER = "tenancy_admin"
# Every privilege on its own database, nothing on the instance (no GRANT OPTION).
_MYSQL_PRIVILEGES = ["ALL PRIVILEGES"]


def admin_secret_name(instance: str) -> str:
    """The Secrets Manager name of a shared instance's admin credentials (outside every tenant's path)."""
    return f"tenancy/platform/db/{instance}/admin"


def platform(settings_aws: AwsSettings, data: DataSettings, labels: dict[str, str], guard: Guard) -> dict[str, Any]:
    """Register the platform key and the shared instances; return what tenants need, no secret:
    `{"key": arn, "sharedInstances": {name: {"identifier", "address", "adminSecretVersion",
    "securityGroup"}}}`."""
    if not data.shared_instances:
        return {}
    # A shared instance serves several tenants, so no tenant's key fits it: the platform's own.
    key = aws.kms.Key(
        "tenancy-platform-key",
        description="tenancy platform data: shared database instances and their admin credentials",
        enable_key_rotation=True,
        deletion_window_in_days=30,
        tags=labels,
        opts=guard.data(),
    )
    aws.kms.Alias(
        "tenancy-platform-key-alias", name="alias/tenancy/platform", target_key_id=key.key_id, opts=guard.plain()
    )
    shared = {
        name: _shared_instance(name, instance, key, settings_aws, data, labels, guard)
        for name, instance in sorted(data.shared_instances.items())
    }
    return {"key": key.arn, "sharedInstances": shared}


def _shared_instance(
    name: str,
    instance: SharedInstance,
    key: aws.kms.Key,
    settings_aws: AwsSettings,
    data: DataSettings,
    labels: dict[str, str],
    guard: Guard,
) -> dict[str, Any]:
    """One shared RDS instance and its admin credentials (under the platform key)."""
    password = generate_password(f"shared-{name}-admin-password", 32, guard)
    # Pods of the environments with a database here join this group (docs/adr/0009).
    clients = members_group(
        f"shared-{name}-clients",
        f"tenancy shared instance {name}: the pods of environments with a database on it",
        settings_aws,
        labels,
        guard.plain(),
    )
    rds = rds_instance(
        f"shared-{name}",
        engine=instance.engine,
        version=instance.version,
        size=instance.size,
        storage_gb=instance.storage_gb,
        username=ADMIN_USER,
        password=password,
        kms_key=key.arn,
        security_groups=[clients.id],
        final_snapshot=f"tenancy-shared-{name}-final",
        settings_aws=settings_aws,
        data=data,
        tags=labels,
        opts=guard.data(),
    )
    version = _admin_secret(name, instance, rds, password, key, data, labels, guard)
    return {
        "identifier": rds.identifier,
        "address": rds.address,
        "adminSecretVersion": version.id,
        "securityGroup": clients.id,
    }


def _admin_secret(
    name: str,
    instance: SharedInstance,
    rds: aws.rds.Instance,
    password: pulumi.Output[str],
    key: aws.kms.Key,
    data: DataSettings,
    labels: dict[str, str],
    guard: Guard,
) -> aws.secretsmanager.SecretVersion:
    """The instance's admin credentials in Secrets Manager, under the platform key."""
    secret = aws.secretsmanager.Secret(
        f"shared-{name}-admin",
        name=admin_secret_name(name),
        description=f"tenancy: admin credentials of shared {instance.engine} instance {name}",
        kms_key_id=key.arn,
        recovery_window_in_days=data.secret_recovery_days,
        tags=labels,
        opts=guard.data(),
    )
    # The keys of RDS's own credentials secrets, so people and tools read it the usual way.
    document = pulumi.Output.json_dumps(
        {
            "engine": instance.engine,
            "host": rds.address,
            "port": ENGINE_PORTS[instance.engine],
            "username": ADMIN_USER,
            "password": password,
            "dbInstanceIdentifier": rds.identifier,
        }
    )
    secret_document: pulumi.Output[str] = pulumi.Output.secret(document)
    version = aws.secretsmanager.SecretVersion(
        f"shared-{name}-admin-version",
        secret_id=secret.id,
        secret_string=secret_document,
        opts=guard.data(),
    )
    return version


def _admin_password(document: str | None) -> str:
    """The password out of the admin secret's JSON document (RDS's own keys)."""
    if not document:  # an unreadable version fails the run rather than configuring an empty password
        raise ValueError("the admin secret of a shared instance has no value")
    return str(json.loads(document)["password"])


class SharedLogins:
    """Databases and logins on the stack's shared instances, through one SQL provider each."""

    def __init__(self, data: DataSettings, values: PlatformValues, opts: pulumi.ResourceOptions) -> None:
        self._data = data
        self._values = values
        # Stack-level options (the AWS provider) for the admin secret reads; no tenant parent.
        self._opts = opts
        self._providers: dict[str, pulumi.ProviderResource] = {}

    def provider(self, instance: str) -> pulumi.ProviderResource:
        """The instance's SQL provider, registered on first use (a stack whose tenants use no shared
        database runs no SQL provider) and named after the instance, so the first tenant to ask
        for it does not matter."""
        if instance in self._providers:
            return self._providers[instance]
        engine = self._data.shared_instances[instance].engine
        admin = aws.secretsmanager.SecretVersion.get(
            f"shared-{instance}-admin-read", self._values.shared(instance, "adminSecretVersion"), opts=self._opts
        )
        document: pulumi.Output[str | None] = pulumi.Output.secret(admin.secret_string)
        password = document.apply(_admin_password)
        host = self._values.shared(instance, "address")
        provider: pulumi.ProviderResource
        if engine == "postgres":
            provider = postgresql.Provider(
                f"shared-{instance}-postgresql",
                host=host,
                port=ENGINE_PORTS[engine],
                database="postgres",
                username=ADMIN_USER,
                password=password,
                # RDS's master user is not a superuser; the provider then grants itself the roles
                # it needs (to hand a database to its owner) instead of assuming it may.
                superuser=False,
                # Encrypted; verifying the server needs the RDS CA bundle on the runner (sslrootcert).
                sslmode="require",
                connect_timeout=15,
                expected_version=self._data.shared_instances[instance].version,
            )
        else:
            provider = mysql.Provider(
                f"shared-{instance}-mysql",
                endpoint=host.apply(lambda address: f"{address}:{ENGINE_PORTS['mysql']}"),
                username=ADMIN_USER,
                password=password,
                # Encrypted; verifying the server needs the RDS CA bundle in the runner's trust store.
                tls="skip-verify",
            )
        self._providers[instance] = provider
        return provider

    def login(self, instance: str, request: DatabaseRequest, guard: Guard) -> DatabaseLogin:
        """Register the tenant's database and its login on `instance`; the login owns the database
        and reaches nothing else on the instance."""
        provider = self.provider(instance)
        database_name, username = shared_names(request.tenant, request.environment, request.name)
        password = generate_password(f"{request.prefix}-password", 32, guard)
        # Database, login and grant share the data's lifecycle: released together, never dropped.
        opts = guard.data(provider=provider)
        if request.engine == "postgres":
            role = postgresql.Role(f"{request.prefix}-role", name=username, login=True, password=password, opts=opts)
            database = postgresql.Database(f"{request.prefix}-database", name=database_name, owner=role.name, opts=opts)
            # New databases let every role connect (PUBLIC); only the owner may here.
            postgresql.Grant(
                f"{request.prefix}-revoke-public",
                database=database.name,
                role="public",
                object_type="database",
                privileges=[],
                opts=opts,
            )
        else:
            mysql_database = mysql.Database(f"{request.prefix}-database", name=database_name, opts=opts)
            user = mysql.User(f"{request.prefix}-user", user=username, host="%", plaintext_password=password, opts=opts)
            mysql.Grant(
                f"{request.prefix}-grant",
                user=user.user,
                host=user.host,
                database=mysql_database.name,
                privileges=_MYSQL_PRIVILEGES,
                opts=opts,
            )
        return DatabaseLogin(
            username=username,
            password=password,
            host=self._values.shared(instance, "address"),
            database=database_name,
            instance=self._values.shared(instance, "identifier"),
            security_groups=[self._values.shared(instance, "securityGroup")],
        )
