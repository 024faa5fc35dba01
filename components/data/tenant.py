"""Per-tenant data: databases, KMS-backed secrets, workload identity and their delivery.

Builder functions that register children of the Tenant component (like namespace.py) rather than
a component of their own: a TenantData component would add a registered resource per tenant for no
behaviour. What differs per cloud is in `components/clouds/`; this module decides what exists, in
which namespace, and under which lifecycle guard.

Per tenant (cloud): one key, one identity with its bindings. Per environment with data: the
`workload` ServiceAccount, one SecretStore, one egress NetworkPolicy to its databases. Per
database: the instance (dedicated) or nothing (shared), database, user, password, the credentials
secret and its delivery. Per secret: the secret, its value (generated), a read grant and an
ExternalSecret. On local: Kubernetes Secrets and operator objects only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import (
    WORKLOAD_ACCOUNT,
    DataBackend,
    DatabaseEndpoint,
    DatabaseRequest,
    Guard,
    SecretRequest,
    TenantIdentity,
    generate_password,
)
from components.clouds.local.data import credentials_secret_name
from components.guardrails.namespace import EnvironmentResources
from components.guardrails.network import database_egress_policy
from components.model.labels import (
    MANAGED_BY_VALUE,
    PLATFORM_OWNED_KEY,
    TENANT_KEY,
    cost_labels,
    kubernetes_labels,
    platform_labels,
)
from components.model.stack import StackSettings
from components.model.tenant_file import TenantSpec

SECRET_STORE = "tenancy-secrets"
SHARED_STORE = "tenancy-shared"
_ESO_VERSION = "external-secrets.io/v1"


@dataclass
class PlatformData:
    """Cluster-wide data parts every tenant refers to: the backend and shared secret sources."""

    backend: DataBackend
    # local only: shared secrets' source data, read once per stack from the platform namespace.
    local_shared: dict[str, pulumi.Output[Any]] = field(default_factory=dict)


@dataclass
class TenantData:
    """What the tenant's team needs to know about its data (no secret values)."""

    databases: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    secrets: dict[str, list[str]] = field(default_factory=dict)
    identity: pulumi.Output[str] | None = None
    # environment -> its `workload` ServiceAccount, where one exists: apps run as it, after it.
    workload_accounts: dict[str, pulumi.Resource] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {"databases": self.databases, "secrets": self.secrets}
        if self.identity is not None:
            summary["identity"] = {"principal": self.identity, "serviceAccount": WORKLOAD_ACCOUNT}
        return summary


def build_platform_data(settings: StackSettings, opts: pulumi.ResourceOptions) -> dict[str, Any]:
    """Register the cluster-wide data parts (platform stack) and return what tenants need from
    them, for the platform output (never a secret): key ring (gcp), platform key (aws), shared
    instances (gcp, aws; local registers its shared MariaDB instances, tenants need nothing back)."""
    guard = Guard(base=opts, protect=settings.protection.protect_data)
    data = settings.data
    labels = {"managed-by": MANAGED_BY_VALUE, "tenant": "platform", "cost-center": "platform"}
    values: dict[str, Any] = {}
    provider: dict[str, Any] | None = None
    if settings.cloud == "gcp" and settings.gcp is not None:
        from components.clouds.gcp import data as gcp

        values = gcp.platform(settings.gcp, data, labels, guard)
        if data.shared_secrets:
            provider = gcp.shared_store_provider(settings.gcp, settings.cluster.name, data, guard)
    elif settings.cloud == "aws" and settings.aws is not None:
        from components.clouds.aws import data as aws
        from components.clouds.aws import shared as aws_shared

        values = aws_shared.platform(settings.aws, data, labels, guard)
        if data.shared_secrets:
            provider = aws.shared_store_provider(settings.aws, settings.cluster.name, data, labels, guard)
    elif settings.cloud == "local":
        from components.clouds.local import shared as local_shared

        local_shared.platform(data, guard)
    if provider is not None:
        # Only namespaces of tenants may use it; which secret each gets is its ExternalSecret's.
        k8s.apiextensions.CustomResource(
            "shared-secret-store",
            api_version=_ESO_VERSION,
            kind="ClusterSecretStore",
            metadata={"name": SHARED_STORE, "labels": platform_labels()},
            spec={
                "provider": provider,
                "conditions": [
                    {"namespaceSelector": {"matchExpressions": [{"key": TENANT_KEY, "operator": "Exists"}]}}
                ],
            },
            opts=guard.plain(),
        )
    return values


def data_backend(settings: StackSettings, values: pulumi.Output[Any], opts: pulumi.ResourceOptions) -> PlatformData:
    """The stack's data backend, built once and shared by every tenant (no resource per tenant).

    `values` is what `build_platform_data` returned, from this program or the platform stack.
    """
    data = settings.data
    if settings.cloud == "gcp" and settings.gcp is not None:
        from components.clouds.gcp import data as gcp

        return PlatformData(backend=gcp.GcpData(settings.gcp, settings.cluster.name, data, gcp.GcpPlatform(values)))
    if settings.cloud == "aws" and settings.aws is not None:
        from components.clouds.aws import data as aws
        from components.clouds.base import PlatformValues

        backend = aws.AwsData(settings.aws, settings.cluster.name, data, PlatformValues(values), opts)
        return PlatformData(backend=backend)
    from components.clouds.local.data import LocalData

    # Read (never created) once per stack: the platform team keeps these Secrets in one namespace.
    sources = {
        name: k8s.core.v1.Secret.get(
            f"shared-secret-{name}", f"{data.shared_secrets_namespace}/{shared.remote_key}", opts=opts
        ).data
        for name, shared in sorted(data.shared_secrets.items())
    }
    return PlatformData(backend=LocalData(data), local_shared=sources)


def _guard(parent: pulumi.Resource, spec: TenantSpec, settings: StackSettings) -> Guard:
    return Guard(
        base=pulumi.ResourceOptions(parent=parent),
        protect=settings.protection.protect_data,
        release=spec.lifecycle == "decommissioned",
    )


def build_tenant_data(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    settings: StackSettings,
    platform: PlatformData,
    environments: dict[str, EnvironmentResources],
    retained_namespaces: Mapping[str, pulumi.Resource] | None = None,
) -> TenantData:
    """Register one tenant's data. `environments` is empty once it is decommissioned; then the
    data resources are registered released (unprotected, retained on delete) and nothing else."""
    backend = platform.backend
    guard = _guard(parent, spec, settings)
    result = TenantData()
    needs_identity = bool(spec.databases or spec.secrets or spec.shared_secrets)
    if not needs_identity:
        return result
    cloud_labels = cost_labels(spec.name, spec.cost_center)
    namespaces = [res.namespace_name for res in environments.values()]
    identity = backend.identity(spec.name, namespaces, cloud_labels, guard)
    result.identity = identity.principal
    namespace_resources: dict[str, pulumi.Resource | None] = {env: res.namespace for env, res in environments.items()}
    namespace_resources.update(retained_namespaces or {})
    data_environments = spec.environments if guard.release else list(environments)
    for environment in data_environments:
        namespace = environments[environment].namespace_name if environment in environments else None
        ns_name = namespace or f"tenant-{spec.name}-{environment}"
        _environment_data(
            name,
            spec,
            settings,
            platform,
            identity,
            guard,
            environment,
            ns_name,
            namespace_resources.get(environment),
            environments.get(environment),
            result,
        )
    return result


def _environment_data(
    name: str,
    spec: TenantSpec,
    settings: StackSettings,
    platform: PlatformData,
    identity: TenantIdentity,
    guard: Guard,
    environment: str,
    ns_name: str,
    namespace: pulumi.Resource | None,
    env_resources: EnvironmentResources | None,
    result: TenantData,
) -> None:
    backend = platform.backend
    prefix = f"{name}-{environment}"
    labels = cost_labels(spec.name, spec.cost_center, environment)
    k8s_labels = kubernetes_labels(spec.name, environment)
    databases = spec.in_environment(spec.databases, environment)
    secrets = spec.in_environment(spec.secrets, environment)
    delivered = env_resources is not None and backend.cloud != "local"
    inside = guard.plain(deleted_with=namespace, depends_on=[namespace] if namespace is not None else [])

    if delivered and (databases or secrets or spec.shared_secrets):
        # The tenant's cloud identity in this namespace: ESO authenticates as it, apps may run as it.
        result.workload_accounts[environment] = k8s.core.v1.ServiceAccount(
            f"{prefix}-workload",
            metadata={
                "name": WORKLOAD_ACCOUNT,
                "namespace": ns_name,
                "labels": k8s_labels,
                "annotations": identity.account_annotations,
            },
            opts=inside,
        )
    if delivered and (databases or secrets):
        k8s.apiextensions.CustomResource(
            f"{prefix}-secret-store",
            api_version=_ESO_VERSION,
            kind="SecretStore",
            metadata={"name": SECRET_STORE, "namespace": ns_name, "labels": k8s_labels},
            spec={"provider": backend.secret_store_provider(ns_name, identity)},
            opts=inside,
        )

    endpoints: list[DatabaseEndpoint] = []
    env_databases: dict[str, dict[str, Any]] = {}
    for database in databases:
        request = DatabaseRequest(
            tenant=spec.name,
            environment=environment,
            namespace=ns_name,
            name=database.name,
            engine=database.engine,
            version=database.version,
            size=database.size,
            storage_gb=database.storage_gb,
            pool_size=database.pool_size,
            placement=database.placement or settings.data.placement,
            labels=labels,
            prefix=f"{prefix}-db-{database.name.replace('_', '-')}",
            namespace_resource=namespace,
            kubernetes_labels=k8s_labels,
        )
        endpoint = backend.database(request, identity, guard)
        endpoints.append(endpoint)
        secret_name = credentials_secret_name(database.name)
        if delivered:
            _external_secret(
                f"{request.prefix}-delivery",
                ns_name,
                secret_name,
                k8s_labels,
                settings,
                inside,
                data_from=endpoint.credentials,
            )
        env_databases[database.name] = {
            "host": endpoint.host,
            "port": endpoint.port,
            "database": endpoint.database,
            "username": endpoint.username,
            "instance": endpoint.instance,
            "credentialsSecret": secret_name,
        }
    if env_databases:
        result.databases[environment] = env_databases

    secret_names: list[str] = []
    for secret in secrets:
        value = (
            generate_password(f"{prefix}-secret-{secret.name}-value", secret.length, guard)
            if secret.source == "generated"
            else None
        )
        remote = backend.store_secret(
            SecretRequest(
                tenant=spec.name,
                environment=environment,
                namespace=ns_name,
                name=secret.name,
                remote_name=remote_secret_name(backend.cloud, spec.name, environment, secret.name),
                value=value,
                labels=labels,
                prefix=f"{prefix}-secret-{secret.name}",
                namespace_resource=namespace,
                key=secret.key,
                kubernetes_labels=k8s_labels,
            ),
            identity,
            guard,
        )
        if delivered:
            _external_secret(
                f"{prefix}-secret-{secret.name}-delivery",
                ns_name,
                secret.name,
                k8s_labels,
                settings,
                inside,
                data=[{"secretKey": secret.key, "remoteRef": {"key": remote}}],
            )
        secret_names.append(secret.name)

    if env_resources is not None:
        for shared_name in spec.shared_secrets:
            _shared_secret(prefix, ns_name, shared_name, k8s_labels, settings, platform, inside)
            secret_names.append(shared_name)
        cidrs = [cidr for endpoint in endpoints for cidr in endpoint.egress_cidrs]
        peers = sorted({namespace for endpoint in endpoints for namespace in endpoint.egress_namespaces})
        ports = sorted({endpoint.port for endpoint in endpoints if endpoint.egress_cidrs or endpoint.egress_namespaces})
        if backend.cloud == "aws" and settings.aws is not None and endpoints:
            cidrs = list(settings.aws.database_cidrs)
            ports = sorted({endpoint.port for endpoint in endpoints})
        if cidrs or peers:
            owned = {**k8s_labels, PLATFORM_OWNED_KEY: "true"}
            database_egress_policy(prefix, ns_name, owned, cidrs, ports, inside, namespaces=peers)
    if secret_names:
        result.secrets[environment] = secret_names


def remote_secret_name(cloud: str, tenant: str, environment: str, secret: str) -> str:
    """The secret's name in the cloud secret manager; separators no tenant or secret name contains."""
    if cloud == "aws":
        return f"tenancy/{tenant}/{environment}/{secret}"
    return f"tenancy_{tenant}_{environment}_{secret}"


def _external_secret(
    resource_name: str,
    namespace: str,
    target: str,
    labels: dict[str, str],
    settings: StackSettings,
    opts: pulumi.ResourceOptions,
    data: list[dict[str, Any]] | None = None,
    data_from: str | None = None,
    store: tuple[str, str] = (SECRET_STORE, "SecretStore"),
    secret_type: str | None = None,
) -> None:
    spec: dict[str, Any] = {
        "refreshInterval": settings.data.refresh_interval,
        "secretStoreRef": {"name": store[0], "kind": store[1]},
        "target": {"name": target, "creationPolicy": "Owner"},
    }
    if secret_type is not None:
        spec["target"]["template"] = {"type": secret_type}
    if data is not None:
        spec["data"] = data
    if data_from is not None:
        # The credentials secret is a JSON document; each field becomes a key of the Secret.
        spec["dataFrom"] = [{"extract": {"key": data_from}}]
    k8s.apiextensions.CustomResource(
        resource_name,
        api_version=_ESO_VERSION,
        kind="ExternalSecret",
        metadata={"name": target, "namespace": namespace, "labels": labels},
        spec=spec,
        opts=opts,
    )


def _shared_secret(
    prefix: str,
    namespace: str,
    name: str,
    labels: dict[str, str],
    settings: StackSettings,
    platform: PlatformData,
    opts: pulumi.ResourceOptions,
) -> None:
    shared = settings.data.shared_secrets[name]
    if platform.backend.cloud == "local":
        # A copy of the platform's Secret; its data stays a Pulumi secret end to end.
        k8s.core.v1.Secret(
            f"{prefix}-shared-{name}",
            metadata={"name": name, "namespace": namespace, "labels": labels},
            type=shared.type,
            data=pulumi.Output.secret(platform.local_shared[name]),
            opts=opts,
        )
        return
    _external_secret(
        f"{prefix}-shared-{name}",
        namespace,
        name,
        labels,
        settings,
        opts,
        data=[{"secretKey": shared.key, "remoteRef": {"key": shared.remote_key}}],
        store=(SHARED_STORE, "ClusterSecretStore"),
        secret_type=shared.type,
    )
