"""A tenant environment's databases: each registered by the cloud, its credentials delivered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.clouds.base import DataBackend, DatabaseEndpoint, DatabaseRequest
from components.data.scope import EnvironmentScope
from components.model.tenant_file.data import DatabaseSpec, credentials_secret_name


def register_databases(
    *,
    scope: EnvironmentScope,
    backend: DataBackend,
    databases: Sequence[DatabaseSpec],
    placement: str,
) -> tuple[list[DatabaseEndpoint], dict[str, dict[str, Any]]]:
    """Register `databases` (the environment's, from the tenant file); return their endpoints and
    what the team's outputs show of each (no secret). `placement`: the stack default."""
    endpoints: list[DatabaseEndpoint] = []
    summary: dict[str, dict[str, Any]] = {}
    for database in databases:
        request = DatabaseRequest(
            tenant=scope.tenant,
            environment=scope.environment,
            namespace=scope.namespace,
            name=database.name,
            engine=database.engine,
            version=database.version,
            size=database.size,
            storage_gb=database.storage_gb,
            pool_size=database.pool_size,
            placement=database.placement or placement,
            labels=scope.labels,
            prefix=f"{scope.prefix}-db-{database.name.replace('_', '-')}",
            namespace_resource=scope.namespace_resource,
            kubernetes_labels=scope.kubernetes_labels,
        )
        endpoint = backend.database(request, scope.identity, scope.guard)
        endpoints.append(endpoint)
        secret_name = credentials_secret_name(database.name)
        if scope.delivery is not None:
            backend.delivery.database(
                scope.delivery, prefix=request.prefix, secret_name=secret_name, credentials=endpoint.credentials
            )
        summary[database.name] = {
            "host": endpoint.host,
            "port": endpoint.port,
            "database": endpoint.database,
            "username": endpoint.username,
            "instance": endpoint.instance,
            "credentialsSecret": secret_name,
        }
        if request.placement == "dedicated":
            # The instance's size as this deployment asked for it: the next plan refuses a shrink
            # (components/model/checks/storage.py).
            summary[database.name]["storageGb"] = database.storage_gb
    return endpoints, summary
