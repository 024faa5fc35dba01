"""Shared RDS instances (`placement: shared` on AWS): the instances once per stack, and per tenant
database a database and a login on one of them.

RDS has no API for databases or users inside an instance, so Pulumi speaks SQL to the instance
(components/clouds/sql_logins.py, shared with GCP): the runner of `pulumi up` (and of refreshes)
must therefore reach shared instances over the network (docs/data-and-secrets.md, "Shared
instances: the runner needs to reach them").

The admin password is a `pulumi_random` password (a Pulumi secret from the provider onwards), set
as the instance's master password and kept as JSON in Secrets Manager under the platform key: for
people (break-glass) and as the one place every stack reads it from. A tenants shard reads it by
the secret version's id from the platform stack's output, which therefore carries no secret and
stays readable. RDS-managed master passwords (`manage_master_user_password`) were rejected: RDS
rotates them on its own schedule under a version id nobody knows in advance, so the providers
could only follow them through an invoke at every run, unknown in the preview of a new instance.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from components.clouds.aws import subnets
from components.clouds.aws.prerequisites import Prerequisites
from components.clouds.aws.rds import rds_instance
from components.clouds.aws.security_groups import members_group
from components.clouds.aws.subnets import Placement
from components.clouds.base import DatabaseLogin, DatabaseRequest, Guard, generate_password
from components.clouds.sql_logins import ADMIN_USER, SqlLogins, admin_document
from components.model.settings.clouds import AwsSettings
from components.model.settings.data import DataSettings, SharedInstance


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
    # The DB subnet groups the instances live in: prerequisites, read first (prerequisites.py).
    prerequisites = Prerequisites("platform-", guard.plain())
    shared = {
        name: _shared_instance(name, instance, key, settings_aws, data, labels, guard, prerequisites)
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
    prerequisites: Prerequisites,
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
        subnet_group=subnets.shared(settings_aws, instance).subnet_group,
        data=data,
        tags=labels,
        opts=guard.data(depends_on=prerequisites.subnet_group(subnets.shared(settings_aws, instance).subnet_group)),
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
    version = aws.secretsmanager.SecretVersion(
        f"shared-{name}-admin-version",
        secret_id=secret.id,
        secret_string=admin_document(instance.engine, rds.address, password, rds.identifier),
        opts=guard.data(),
    )
    return version


class SharedLogins(SqlLogins):
    """Databases and logins on the stack's shared RDS instances (sql_logins.py does the SQL)."""

    def host(self, instance: str) -> pulumi.Output[str]:
        return self._values.shared(instance, "address")

    def admin_document(self, instance: str) -> pulumi.Output[str | None]:
        admin = aws.secretsmanager.SecretVersion.get(
            f"shared-{instance}-admin-read", self._values.shared(instance, "adminSecretVersion"), opts=self._opts
        )
        return admin.secret_string

    def mysql_tls(self) -> str:
        # Encrypted; verifying the server needs the RDS CA bundle in the runner's trust store.
        return "skip-verify"

    def login(self, instance: str, request: DatabaseRequest, guard: Guard, placement: Placement) -> DatabaseLogin:
        """The tenant's database and login on `instance`, reached at its subnets' CIDRs and
        through its clients' group."""
        shared = self.register(instance, request, guard)
        return DatabaseLogin(
            username=shared.username,
            password=shared.password,
            host=self._values.shared(instance, "address"),
            database=shared.database,
            instance=self._values.shared(instance, "identifier"),
            egress_cidrs=list(placement.cidrs),
            security_groups=[self._values.shared(instance, "securityGroup")],
        )
