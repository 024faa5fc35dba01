"""Tenant data on a local cluster (kind, k3d): everything lives inside the tenant's namespace.

No KMS and no cloud secret manager: credentials are Pulumi secrets written straight into
Kubernetes Secrets (`stringData`, redacted in plans and encrypted in state). Postgres runs as a
CloudNativePG `Cluster` (plus a `Pooler` when a pool size is set), MySQL as a MariaDB operator
`MariaDB`. Placement does not apply: a local database is always the tenant's own.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.clouds import (
    ENGINE_PORTS,
    DatabaseEndpoint,
    DatabaseRequest,
    Guard,
    SecretRequest,
    TenantIdentity,
    generate_password,
)
from components.data_settings import DataSettings

_CNPG_IMAGE = "ghcr.io/cloudnative-pg/postgresql"
_INSTANCES = {"small": 1, "medium": 2, "large": 3}


def credentials_secret_name(database: str) -> str:
    """The Kubernetes Secret holding a database's credentials: `db-<name>` (`_` becomes `-`)."""
    return "db-" + database.replace("_", "-")


def object_name(engine: str, database: str) -> str:
    """The operator object's name: `pg-<name>` or `mysql-<name>`; its Services derive from it."""
    return ("pg-" if engine == "postgres" else "mysql-") + database.replace("_", "-")


def _connection(username: str, host: str, port: int, database: str) -> dict[str, pulumi.Input[str]]:
    """The non-secret keys of a credentials Secret, the same keys as on GCP and AWS."""
    return {"username": username, "host": host, "port": str(port), "database": database}


class LocalData:
    """In-namespace databases and Kubernetes Secrets; no identity, no key."""

    cloud = "local"

    def __init__(self, data: DataSettings) -> None:
        self._data = data

    def identity(self, tenant: str, namespaces: list[str], labels: dict[str, str], guard: Guard) -> TenantIdentity:
        # Pods reach their own in-namespace databases and Secrets; there is no cloud principal.
        return TenantIdentity(principal=None, key=None)

    def _in_namespace(
        self, guard: Guard, namespace: pulumi.Resource | None, after: list[pulumi.Resource] | None = None
    ) -> pulumi.ResourceOptions:
        # Data objects go with their namespace only when the namespace itself is deleted, which
        # protect/retain on the namespace prevents while data is kept.
        depends = [r for r in [namespace, *(after or [])] if r is not None]
        return guard.data(deleted_with=namespace, depends_on=depends)

    def database(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> DatabaseEndpoint:
        username = request.name
        password = generate_password(f"{request.prefix}-password", 32, guard)
        secret_name = credentials_secret_name(request.name)
        name = object_name(request.engine, request.name)
        opts = self._in_namespace(guard, request.namespace_resource)
        metadata: k8s.meta.v1.ObjectMetaArgsDict = {
            "name": secret_name,
            "namespace": request.namespace,
            "labels": request.kubernetes_labels,
        }
        port = ENGINE_PORTS[request.engine]
        if request.engine == "postgres":
            # basic-auth with username/password is the shape CloudNativePG's initdb expects.
            credentials = k8s.core.v1.Secret(
                f"{request.prefix}-credentials",
                metadata=metadata,
                type="kubernetes.io/basic-auth",
                string_data={
                    **_connection(username, f"{name}-rw.{request.namespace}.svc", port, request.name),
                    "password": password,
                },
                opts=opts,
            )
            k8s.apiextensions.CustomResource(
                f"{request.prefix}-cluster",
                api_version="postgresql.cnpg.io/v1",
                kind="Cluster",
                metadata={"name": name, "namespace": request.namespace, "labels": request.kubernetes_labels},
                spec={
                    "instances": _INSTANCES[request.size],
                    "imageName": f"{_CNPG_IMAGE}:{request.version}",
                    "storage": {"size": f"{request.storage_gb}Gi"},
                    "bootstrap": {
                        "initdb": {"database": request.name, "owner": username, "secret": {"name": secret_name}}
                    },
                },
                opts=self._in_namespace(guard, request.namespace_resource, [credentials]),
            )
            host = f"{name}-rw.{request.namespace}.svc"
            if request.pool_size is not None:
                pooler = f"{name}-pooler"
                # PgBouncer in front of the primary; clients connect to the pooler's Service.
                k8s.apiextensions.CustomResource(
                    f"{request.prefix}-pooler",
                    api_version="postgresql.cnpg.io/v1",
                    kind="Pooler",
                    metadata={"name": pooler, "namespace": request.namespace, "labels": request.kubernetes_labels},
                    spec={
                        "cluster": {"name": name},
                        "instances": 1,
                        "type": "rw",
                        "pgbouncer": {
                            "poolMode": "session",
                            "parameters": {"default_pool_size": str(request.pool_size)},
                        },
                    },
                    opts=guard.plain(
                        deleted_with=request.namespace_resource,
                        depends_on=[r for r in [request.namespace_resource] if r is not None],
                    ),
                )
                host = f"{pooler}.{request.namespace}.svc"
        else:
            credentials = k8s.core.v1.Secret(
                f"{request.prefix}-credentials",
                metadata=metadata,
                type="kubernetes.io/basic-auth",
                string_data={
                    **_connection(username, f"{name}.{request.namespace}.svc", port, request.name),
                    "password": password,
                    "root-password": generate_password(f"{request.prefix}-root-password", 32, guard),
                },
                opts=opts,
            )
            k8s.apiextensions.CustomResource(
                f"{request.prefix}-mariadb",
                api_version="k8s.mariadb.com/v1alpha1",
                kind="MariaDB",
                metadata={"name": name, "namespace": request.namespace, "labels": request.kubernetes_labels},
                spec={
                    "image": self._data.local_mariadb_image,
                    "replicas": 1,
                    "rootPasswordSecretKeyRef": {"name": secret_name, "key": "root-password"},
                    "database": request.name,
                    "username": username,
                    "passwordSecretKeyRef": {"name": secret_name, "key": "password"},
                    "storage": {"size": f"{request.storage_gb}Gi"},
                },
                opts=self._in_namespace(guard, request.namespace_resource, [credentials]),
            )
            host = f"{name}.{request.namespace}.svc"
        return DatabaseEndpoint(
            host=host,
            port=port,
            database=request.name,
            username=username,
            credentials=secret_name,
            # Same namespace: the isolation policy already allows it.
            egress_cidrs=[],
            instance=name,
        )

    def store_secret(self, request: SecretRequest, identity: TenantIdentity, guard: Guard) -> str:
        if request.value is None:
            # Filled in out of band (`kubectl create secret`): Pulumi has no value to write.
            return request.name
        k8s.core.v1.Secret(
            f"{request.prefix}-secret",
            metadata={"name": request.name, "namespace": request.namespace, "labels": request.kubernetes_labels},
            type="Opaque",
            string_data={request.key: request.value},
            opts=self._in_namespace(guard, request.namespace_resource),
        )
        return request.name

    def secret_store_provider(self, namespace: str, identity: TenantIdentity) -> dict[str, Any] | None:
        return None
