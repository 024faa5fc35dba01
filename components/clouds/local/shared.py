"""Shared MySQL on a local cluster: platform MariaDB instances, and per tenant database a
MariaDB operator `Database`, `User` and `Grant` on one of them.

The instances and every per-tenant object live in the platform namespace
`tenancy:data.sharedInstancesNamespace`, never in a tenant's: the operator's `User` and `Grant`
may point at any MariaDB, so a tenant able to write them could grant itself another tenant's
database. The tenant gets only its `db-<name>` Secret, and egress to that namespace.

Postgres is not offered shared here: CloudNativePG declares roles inside its `Cluster` object (one
object for every tenant, which no tenant shard could own) and its `Database` object is not among
the CRDs this platform validates against, so data_checks.py refuses it with the way out.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import (
    DatabaseLogin,
    DatabaseRequest,
    Guard,
    InNamespace,
    PlatformValues,
    shared_names,
)
from components.clouds.local.passwords import program_password, secret_data, written_once
from components.model.core.await_rules import wait_for
from components.model.core.labels import platform_labels
from components.model.settings.data import DataSettings

_API_VERSION = "k8s.mariadb.com/v1alpha1"
# Every privilege on its own database, nothing on the server (no GRANT OPTION).
_PRIVILEGES = ["ALL PRIVILEGES"]


def instance_name(instance: str) -> str:
    """The MariaDB object (and its Service) of a shared instance."""
    return f"shared-{instance}"


def platform(data: DataSettings, guard: Guard) -> dict[str, Any]:
    """Register the platform namespace and its shared MariaDB instances (platform part); return
    `{name: {"name": MariaDB object, "namespace": its namespace}}`, the names tenants' objects
    refer to, as outputs of the objects: a tenant's Database, User and Grant then wait for the
    namespace and the instance they go into (tools/plan/engine_rules.py)."""
    if not data.shared_instances:
        return {}
    # It holds every shared database: protected like the data in it.
    namespace = k8s.core.v1.Namespace(
        "shared-databases-namespace",
        metadata={"name": data.shared_instances_namespace, "labels": platform_labels()},
        opts=guard.data(),
    )
    # It holds data: what is in it is never deleted with it (InNamespace), each object gets its own delete.
    inside = InNamespace(namespace, holds_data=True)
    names: dict[str, Any] = {}
    for name, instance in sorted(data.shared_instances.items()):
        root = k8s.core.v1.Secret(
            f"shared-{name}-root",
            metadata={
                "name": f"{instance_name(name)}-root",
                "namespace": data.shared_instances_namespace,
                "labels": platform_labels(),
            },
            type="Opaque",
            data=secret_data({"password": program_password(32)}),
            opts=guard.data(**inside.options(), ignore_changes=written_once("password")),
        )
        mariadb = k8s.apiextensions.CustomResource(
            f"shared-{name}",
            api_version=_API_VERSION,
            kind="MariaDB",
            metadata={
                "name": instance_name(name),
                "namespace": data.shared_instances_namespace,
                "labels": platform_labels(),
                "annotations": wait_for(_API_VERSION, "MariaDB"),
            },
            spec={
                "image": data.local_mariadb_image,
                "replicas": 1,
                "rootPasswordSecretKeyRef": {"name": f"{instance_name(name)}-root", "key": "password"},
                "storage": {"size": f"{instance.storage_gb}Gi"},
            },
            opts=guard.data(**inside.options(root)),
        )
        names[name] = {
            "name": _after(mariadb, instance_name(name)),
            "namespace": namespace.metadata.apply(lambda metadata: metadata["name"]),
        }
    return names


def _after(resource: pulumi.Resource, value: str) -> pulumi.Output[str]:
    """`value`, as an output of `resource`: what reads it waits for the resource."""
    return resource.urn.apply(lambda _: value)


def shared_login(
    data: DataSettings, values: PlatformValues, request: DatabaseRequest, password: pulumi.Output[str], guard: Guard
) -> DatabaseLogin:
    """Register the tenant's database, user and grant on the shared instance serving it, in its
    namespace, both named through the platform's `values` so they wait for them."""
    instance = data.shared_instance(request.engine, request.version, request.environment)
    if instance is None or request.engine != "mysql":  # data_checks.py refuses these first
        raise LookupError(f"no shared {request.engine} {request.version} instance for {request.environment}")
    database, username = shared_names(request.tenant, request.environment, request.name)
    namespace = data.shared_instances_namespace
    # Object names follow the database name, `_` made DNS-safe; unique across tenants.
    object_name = database.replace("_", "-")
    reference = {"name": values.shared(instance, "name"), "namespace": values.shared(instance, "namespace")}
    metadata: k8s.meta.v1.ObjectMetaArgsDict = {
        "name": object_name,
        "namespace": reference["namespace"],
        "labels": request.kubernetes_labels,
    }
    # The operator reads the password from a Secret beside the User (references are namespace-local).
    login = k8s.core.v1.Secret(
        f"{request.prefix}-login",
        metadata={**metadata, "name": f"{object_name}-login"},
        type="Opaque",
        data=secret_data({"password": password}),
        opts=guard.data(ignore_changes=written_once("password")),
    )
    specs: dict[str, dict[str, object]] = {
        "Database": {"name": database, "characterSet": "utf8mb4", "collate": "utf8mb4_unicode_ci"},
        "User": {
            "name": username,
            "host": "%",
            "passwordSecretKeyRef": {"name": f"{object_name}-login", "key": "password"},
        },
        "Grant": {"privileges": _PRIVILEGES, "database": database, "table": "*", "username": username, "host": "%"},
    }
    for kind, spec in specs.items():
        k8s.apiextensions.CustomResource(
            f"{request.prefix}-{kind.lower()}",
            api_version=_API_VERSION,
            kind=kind,
            # Awaited on the operator's Ready condition (components/model/core/await_rules.py).
            metadata={**metadata, "annotations": wait_for(_API_VERSION, kind)},
            # Skip: deleting an object never drops the database or the user (offboarding retains data).
            spec={"mariaDbRef": reference, **spec, "cleanupPolicy": "Skip"},
            opts=guard.data(depends_on=[login]),
        )
    return DatabaseLogin(
        username=username,
        password=password,
        host=f"{instance_name(instance)}.{namespace}.svc",
        database=database,
        instance=instance_name(instance),
    )
