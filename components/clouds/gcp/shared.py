"""Tenant databases and logins on shared Cloud SQL instances, through the SQL providers of
sql_logins.py (as on AWS): users created through the Cloud SQL API join `cloudsqlsuperuser`, which
would let one tenant's login reach every tenant's database on the instance (docs/adr/0015).

The providers log in as the instance's admin user (platform.py) at its private IP: the runner of
`pulumi up` must reach that address (docs/data-and-secrets.md, "Shared instances: the runner needs
to reach them").
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.clouds.base import DatabaseLogin, DatabaseRequest, Guard
from components.clouds.sql_logins import SqlLogins


class GcpSharedLogins(SqlLogins):
    """Databases and logins on the stack's shared Cloud SQL instances."""

    def host(self, instance: str) -> pulumi.Output[str]:
        return self._values.shared(instance, "privateIp")

    def admin_document(self, instance: str) -> pulumi.Output[str | None]:
        admin = gcp.secretmanager.SecretVersion.get(
            f"shared-{instance}-admin-read", self._values.shared(instance, "adminSecretVersion"), opts=self._opts
        )
        return admin.secret_data

    def mysql_tls(self) -> str:
        # The instances take encrypted connections only; verifying the server needs the
        # instance's server CA in the runner's trust store.
        return "skip-verify"

    def login(self, instance: str, request: DatabaseRequest, guard: Guard) -> DatabaseLogin:
        """The tenant's database and login on `instance`; its pods may reach the private IP only."""
        shared = self.register(instance, request, guard)
        private_ip = self.host(instance)
        return DatabaseLogin(
            username=shared.username,
            password=shared.password,
            host=private_ip,
            database=shared.database,
            instance=self._values.shared(instance, "connectionName"),
            egress_cidrs=[private_ip.apply(lambda ip: f"{ip}/32")],
        )
