"""Tenant data on a local cluster (kind, k3d): everything lives inside the tenant's namespace.

No KMS and no cloud secret manager: credentials are Pulumi secrets written straight into
Kubernetes Secrets (`stringData`, redacted in plans and encrypted in state). Postgres runs as a
CloudNativePG `Cluster` (plus a `Pooler` when a pool size is set), MySQL as a MariaDB operator
`MariaDB`. `placement: shared` (MySQL only) puts the database on a platform MariaDB instead
(`local_shared.py`). External secrets are empty Secrets the team fills in; Pulumi never reverts them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import (
    ENGINE_PORTS,
    DatabaseEgress,
    DatabaseEndpoint,
    DatabaseLogin,
    DatabaseRequest,
    DeliveryTarget,
    Guard,
    InNamespace,
    PlatformValues,
    SecretRequest,
    TenantIdentity,
    credential_values,
    endpoint_egress,
    in_namespace_options,
)
from components.clouds.local.delivery import LocalDelivery
from components.clouds.local.operator_pods import (
    MARIADB_CONTAINER_SECURITY_CONTEXT,
    MARIADB_POD_SECURITY_CONTEXT,
    pooler_template,
)
from components.clouds.local.passwords import program_password, secret_data, written_once
from components.clouds.local.shared import shared_login
from components.model.checks.quota_budget import POSTGRES_INSTANCES
from components.model.core.await_rules import wait_for
from components.model.settings.data import DataSettings
from components.model.tenant_file.data import credentials_secret_name

# On an external Secret: how its team fills it in (Pulumi creates it empty and never reverts it).
FILL_ANNOTATION = "tenancy.io/fill-with"

_CNPG_IMAGE = "ghcr.io/cloudnative-pg/postgresql"


def object_name(engine: str, database: str) -> str:
    """The operator object's name: `pg-<name>` or `mysql-<name>`; its Services derive from it."""
    return ("pg-" if engine == "postgres" else "mysql-") + database.replace("_", "-")


def credentials_secret(
    resource_name: str,
    metadata: k8s.meta.v1.ObjectMetaArgsDict,
    login: DatabaseLogin,
    port: int,
    opts: pulumi.ResourceOptions,
    extra: dict[str, pulumi.Output[str]] | None = None,
) -> k8s.core.v1.Secret:
    """A database's credentials Secret: the keys it has on every cloud, `basic-auth` as
    CloudNativePG's initdb expects, values Pulumi secrets."""
    return k8s.core.v1.Secret(
        resource_name,
        metadata=metadata,
        type="kubernetes.io/basic-auth",
        # Passwords through `data`, written once (passwords.py); the rest as plain `stringData`.
        data=secret_data({"password": login.password, **(extra or {})}),
        string_data={k: v for k, v in credential_values(login, port).items() if k != "password"},
        opts=opts,
    )


class LocalData:
    """In-namespace databases and Kubernetes Secrets; no identity, no key."""

    # Databases and Secrets live in the tenant's namespaces: deleting one would delete them.
    data_in_namespaces = True

    def __init__(self, data: DataSettings, delivery: LocalDelivery, storage_class: str, values: PlatformValues) -> None:
        self._data = data
        # What the platform part exports: shared instances' names (shared.py).
        self._values = values
        self.delivery = delivery
        self._storage_class = storage_class

    def database_access(self, target: DeliveryTarget, endpoints: Sequence[DatabaseEndpoint]) -> None:
        # In-cluster databases: the NetworkPolicies alone decide who reaches them.
        return None

    def identity(
        self, tenant: str, environment: str, namespace: str | None, labels: dict[str, str], guard: Guard
    ) -> TenantIdentity:
        # No cloud principal: each environment's Secrets and databases live in its own namespace,
        # so its pods' identity is that namespace's ServiceAccounts (per environment already).
        return TenantIdentity(principal=None, key=None)

    def _in_namespace(
        self,
        guard: Guard,
        namespace: InNamespace | None,
        after: list[pulumi.Resource] | None = None,
        ignore_changes: list[str] | None = None,
    ) -> pulumi.ResourceOptions:
        # A namespace holding data is never deleted with an object `deleted_with` it (InNamespace).
        return guard.data(**in_namespace_options(namespace, *(after or [])), ignore_changes=ignore_changes)

    def database(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> DatabaseEndpoint:
        password = program_password(32)
        secret_name = credentials_secret_name(request.name)
        name = object_name(request.engine, request.name)
        port = ENGINE_PORTS[request.engine]
        metadata: k8s.meta.v1.ObjectMetaArgsDict = {
            "name": secret_name,
            "namespace": request.namespace,
            "labels": request.kubernetes_labels,
        }
        extra: dict[str, pulumi.Output[str]] = {}
        if request.placement == "shared":
            # MySQL only (data_checks.py refuses the rest before anything is registered).
            login = shared_login(self._data, self._values, request, password, guard)
        else:
            service = f"{name}-rw" if request.engine == "postgres" else name
            login = DatabaseLogin(
                username=request.name,
                password=password,
                host=f"{service}.{request.namespace}.svc",
                database=request.name,
                instance=name,
            )
            if request.engine == "mysql":
                extra["root-password"] = program_password(32)
        credentials = credentials_secret(
            f"{request.prefix}-credentials",
            metadata,
            login,
            port,
            self._in_namespace(
                guard, request.namespace_resource, ignore_changes=written_once("password", "root-password")
            ),
            extra,
        )
        host = login.host
        if request.placement != "shared":
            # The tenant's own server in its namespace, bootstrapped from the credentials Secret.
            if request.engine == "postgres":
                host = self._postgres(request, name, secret_name, credentials, guard) or host
            else:
                self._mariadb(request, name, secret_name, credentials, guard)
        return DatabaseEndpoint(
            host=host,
            port=port,
            database=login.database,
            username=login.username,
            credentials=secret_name,
            # In-namespace databases need no rule; a shared one is in the platform's namespace.
            egress_cidrs=[],
            instance=login.instance,
            egress_namespaces=[self._data.shared_instances_namespace] if request.placement == "shared" else [],
        )

    def _postgres(
        self, request: DatabaseRequest, name: str, secret_name: str, credentials: pulumi.Resource, guard: Guard
    ) -> str | None:
        """A CloudNativePG Cluster (and Pooler); returns the pooler's host when there is one."""
        k8s.apiextensions.CustomResource(
            f"{request.prefix}-cluster",
            api_version="postgresql.cnpg.io/v1",
            kind="Cluster",
            # Awaited on the operator's Ready condition (components/model/core/await_rules.py).
            metadata={
                "name": name,
                "namespace": request.namespace,
                "labels": request.kubernetes_labels,
                "annotations": wait_for("postgresql.cnpg.io/v1", "Cluster"),
            },
            spec={
                "instances": POSTGRES_INSTANCES[request.size],
                "imageName": f"{_CNPG_IMAGE}:{request.version}",
                # Pods in tenant namespaces must pull Always (the workloads rule, MTB-PL1-CC-DI-1).
                "imagePullPolicy": "Always",
                "storage": {"size": f"{request.storage_gb}Gi", "storageClass": self._storage_class},
                "bootstrap": {
                    "initdb": {"database": request.name, "owner": request.name, "secret": {"name": secret_name}}
                },
            },
            opts=self._in_namespace(guard, request.namespace_resource, [credentials]),
        )
        if request.pool_size is None:
            return None
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
                # Both containers the operator adds pull Always (operator_pods.py).
                "template": pooler_template(),
                "pgbouncer": {
                    "poolMode": "session",
                    "parameters": {"default_pool_size": str(request.pool_size)},
                },
            },
            opts=guard.plain(**in_namespace_options(request.namespace_resource)),
        )
        return f"{pooler}.{request.namespace}.svc"

    def _mariadb(
        self, request: DatabaseRequest, name: str, secret_name: str, credentials: pulumi.Resource, guard: Guard
    ) -> None:
        """A MariaDB operator MariaDB in the tenant's namespace (serves `engine: mysql`)."""
        k8s.apiextensions.CustomResource(
            f"{request.prefix}-mariadb",
            api_version="k8s.mariadb.com/v1alpha1",
            kind="MariaDB",
            metadata={
                "name": name,
                "namespace": request.namespace,
                "labels": request.kubernetes_labels,
                "annotations": wait_for("k8s.mariadb.com/v1alpha1", "MariaDB"),
            },
            spec={
                "image": self._data.local_mariadb_image,
                "imagePullPolicy": "Always",
                "replicas": 1,
                "rootPasswordSecretKeyRef": {"name": secret_name, "key": "root-password"},
                "database": request.name,
                "username": request.name,
                "passwordSecretKeyRef": {"name": secret_name, "key": "password"},
                "storage": {"size": f"{request.storage_gb}Gi", "storageClassName": self._storage_class},
                # The operator sets neither context for Pod Security `restricted` (operator_pods.py).
                "podSecurityContext": MARIADB_POD_SECURITY_CONTEXT,
                "securityContext": MARIADB_CONTAINER_SECURITY_CONTEXT,
            },
            opts=self._in_namespace(guard, request.namespace_resource, [credentials]),
        )

    def store_secret(self, request: SecretRequest, identity: TenantIdentity, guard: Guard) -> str:
        metadata: k8s.meta.v1.ObjectMetaArgsDict = {
            "name": request.name,
            "namespace": request.namespace,
            "labels": request.kubernetes_labels,
        }
        if request.value is None:
            # External: the Secret exists (workloads can mount it) with no data; its team fills it
            # in. Pulumi never sets data, so server-side apply leaves the team's keys alone, and
            # `ignore_changes` keeps a refresh from proposing to take them out.
            patch = f'{{"stringData":{{"{request.key}":"<value>"}}}}'
            metadata["annotations"] = {
                FILL_ANNOTATION: f"kubectl -n {request.namespace} patch secret {request.name} -p '{patch}'"
            }
            k8s.core.v1.Secret(
                f"{request.prefix}-secret",
                metadata=metadata,
                type="Opaque",
                opts=self._in_namespace(guard, request.namespace_resource, ignore_changes=["data", "stringData"]),
            )
            return request.name
        k8s.core.v1.Secret(
            f"{request.prefix}-secret",
            metadata=metadata,
            type="Opaque",
            data=secret_data({request.key: request.value}),
            # The value is a program password (passwords.py): written by the first `up` only.
            opts=self._in_namespace(guard, request.namespace_resource, ignore_changes=written_once(request.key)),
        )
        return request.name

    def generated_value(self, name: str, length: int, guard: Guard) -> pulumi.Output[str]:
        # No resource: the Secret that store_secret writes keeps the first value (passwords.py).
        return program_password(length)

    def remote_secret_name(self, tenant: str, environment: str, secret: str) -> str:
        return f"tenancy_{tenant}_{environment}_{secret}"

    def database_egress(self, endpoints: Sequence[DatabaseEndpoint]) -> DatabaseEgress:
        # In-namespace databases need no rule; shared MariaDB instances are reached by namespace.
        return endpoint_egress(endpoints)
