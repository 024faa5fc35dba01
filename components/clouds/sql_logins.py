"""Tenant logins on shared database instances, spoken in SQL (both clouds; docs/adr/0015).

A shared instance serves many tenants, so each tenant database gets a login that owns its database
and nothing else. The clouds' own user APIs cannot give that: RDS has none, and a user created
through the Cloud SQL API joins `cloudsqlsuperuser` (Postgres: CREATEROLE, CREATEDB; MySQL 8: the
role of the same name with privileges on every database). So Pulumi speaks SQL to the instance
through the engines' own providers, `pulumi_postgresql` and `pulumi_mysql`, logged in as the
platform's admin user: one provider per shared instance and stack, never one per tenant (each
provider is a plugin process). The runner of `pulumi up` must therefore reach shared instances.

Each cloud says where the instance is, how the admin password is read back and how TLS is spoken
(`SqlLogins` subclasses); the SQL objects and their names are the same on both.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass

import pulumi
import pulumi_mysql as mysql
import pulumi_postgresql as postgresql

from components.clouds.base import (
    ENGINE_PORTS,
    DatabaseRequest,
    Guard,
    PlatformValues,
    generate_password,
    shared_names,
)
from components.model.settings.data import DataSettings

# The admin user of shared instances (16 characters at most for MySQL, not a reserved word).
ADMIN_USER = "tenancy_admin"
# Every privilege on its own database, nothing on the instance (no GRANT OPTION).
MYSQL_PRIVILEGES = ["ALL PRIVILEGES"]


def admin_document(
    engine: str, host: pulumi.Input[str], password: pulumi.Output[str], instance: pulumi.Input[str]
) -> pulumi.Output[str]:
    """The admin credentials as JSON with the keys of RDS's own credentials secrets, a Pulumi secret,
    so people and tools read either cloud's copy the same way."""
    document = pulumi.Output.json_dumps(
        {
            "engine": engine,
            "host": host,
            "port": ENGINE_PORTS[engine],
            "username": ADMIN_USER,
            "password": password,
            "dbInstanceIdentifier": instance,
        }
    )
    secret: pulumi.Output[str] = pulumi.Output.secret(document)
    return secret


def admin_password(document: str | None) -> str:
    """The password out of the admin secret's JSON document."""
    if not document:  # an unreadable version fails the run rather than configuring an empty password
        raise ValueError("the admin secret of a shared instance has no value")
    return str(json.loads(document)["password"])


@dataclass(frozen=True)
class SharedLogin:
    """One tenant database on a shared instance: its name, its login and the login's password."""

    database: str
    username: str
    password: pulumi.Output[str]


class SqlLogins(ABC):
    """Databases and logins on the stack's shared instances, through one SQL provider each."""

    def __init__(self, data: DataSettings, values: PlatformValues, opts: pulumi.ResourceOptions) -> None:
        self._data = data
        self._values = values
        # Stack-level options (the cloud provider) for the admin secret reads; no tenant parent.
        self._opts = opts
        self._providers: dict[str, pulumi.ProviderResource] = {}

    @abstractmethod
    def host(self, instance: str) -> pulumi.Output[str]:
        """The address the runner and the tenants' pods reach the instance at."""

    @abstractmethod
    def admin_document(self, instance: str) -> pulumi.Output[str | None]:
        """The admin secret's JSON document, read back by the id the platform exported."""

    @abstractmethod
    def mysql_tls(self) -> str:
        """The MySQL provider's `tls` setting on this cloud."""

    def provider(self, instance: str) -> pulumi.ProviderResource:
        """The instance's SQL provider, registered on first use (a stack whose tenants use no shared
        database runs no SQL provider) and named after the instance, so the first tenant to ask
        for it does not matter."""
        if instance in self._providers:
            return self._providers[instance]
        engine = self._data.shared_instances[instance].engine
        document: pulumi.Output[str | None] = pulumi.Output.secret(self.admin_document(instance))
        password = document.apply(admin_password)
        host = self.host(instance)
        provider: pulumi.ProviderResource
        if engine == "postgres":
            provider = postgresql.Provider(
                f"shared-{instance}-postgresql",
                host=host,
                port=ENGINE_PORTS[engine],
                database="postgres",
                username=ADMIN_USER,
                password=password,
                # Neither cloud's admin user is a superuser; the provider then grants itself the
                # roles it needs (to hand a database to its owner) instead of assuming it may.
                superuser=False,
                # Encrypted; verifying the server needs the cloud's CA on the runner (sslrootcert).
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
                tls=self.mysql_tls(),
            )
        self._providers[instance] = provider
        return provider

    def register(self, instance: str, request: DatabaseRequest, guard: Guard) -> SharedLogin:
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
                privileges=MYSQL_PRIVILEGES,
                opts=opts,
            )
        return SharedLogin(database=database_name, username=username, password=password)
