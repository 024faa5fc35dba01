"""What differs per cloud for tenant data: databases, keys, secret stores and workload identity.

Each cloud (`gcp`, `aws`, `local`) implements `DataBackend` and `SecretDelivery`; components/data/
drives them the same way for every cloud (the `Cloud` protocol that builds them is in
protocol.py). The modules know nothing of tenant files: they receive plain requests
(`DatabaseRequest`, `SecretRequest`) and resource options decided by the caller, so the lifecycle
rules (protect, release) live in one place (components/lifecycle.py and `Guard`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi

# The ServiceAccount in each tenant namespace carrying its cloud identity (its SecretStore and apps).
WORKLOAD_ACCOUNT = "workload"
ENGINE_PORTS = {"postgres": 5432, "mysql": 3306}
# Postgres identifiers and MySQL database names stop at 63/64 characters.
_MAX_DATABASE_NAME = 63


def generate_password(name: str, length: int, guard: Guard) -> pulumi.Output[str]:
    """A random credential; `result` is a Pulumi secret from the provider onwards.

    Protected with the data it guards: replacing it would change a live database password.
    No special characters, so it survives URIs, env files and shells unquoted.
    """
    import pulumi_random as random

    password = random.RandomPassword(name, length=length, special=False, opts=guard.data())
    return pulumi.Output.secret(password.result)


@dataclass(frozen=True)
class Guard:
    """How data-bearing resources of one tenant (or of the platform) are registered.

    `protect`: Pulumi refuses to delete them (removing a tenant file fails the preview).
    `release`: step one of offboarding; they stay in the cloud when they leave Pulumi's state.
    `base`: parent and providers every resource registered through this guard gets.
    """

    base: pulumi.ResourceOptions
    protect: bool
    release: bool = False

    def data(self, **extra: Any) -> pulumi.ResourceOptions:
        """Options for databases, keys and secrets: protected while active, retained once released."""
        return pulumi.ResourceOptions.merge(
            self.base,
            pulumi.ResourceOptions(protect=self.protect and not self.release, retain_on_delete=self.release, **extra),
        )

    def plain(self, **extra: Any) -> pulumi.ResourceOptions:
        """Options for resources that hold no data (IAM bindings, identities, delivery objects)."""
        return pulumi.ResourceOptions.merge(self.base, pulumi.ResourceOptions(**extra))

    def data_access(self, **extra: Any) -> pulumi.ResourceOptions:
        """Options for a grant without which kept data cannot be read (a service agent's use of the
        keys), and what it stands on: protected, and retained always, so no removal, rename,
        replacement or `destroy --exclude-protected` revokes it. Without it the data is as unreadable
        as under a disabled key ("data that was encrypted with the key can't be accessed",
        https://cloud.google.com/kms/docs/enable-disable; https://cloud.google.com/sql/docs/postgres/cmek)."""
        return pulumi.ResourceOptions.merge(
            self.base, pulumi.ResourceOptions(protect=self.protect, retain_on_delete=True, **extra)
        )

    def used_by_data(self, **extra: Any) -> pulumi.ResourceOptions:
        """Options for what holds no data but kept data uses (an RDS instance's security group):
        unprotected, and retained with the data once released, so removing the tenant never
        deletes it from under a kept instance (AWS refuses: DependencyViolation).
        tools/plan/engine_rules.py (`kept_dependencies`) finds what lacks it."""
        return pulumi.ResourceOptions.merge(self.base, pulumi.ResourceOptions(retain_on_delete=self.release, **extra))


@dataclass(frozen=True)
class InNamespace:
    """How an object inside one tenant namespace is registered: after the namespace and its
    isolation (`ready`: the namespace, then its quota, limits and isolation policy), and deleted
    with the namespace only where the namespace holds no data.

    Where it holds data the namespace is protected (components/lifecycle.py `namespace_options`),
    and an update that skips its preview refuses its deletion only when it gets there: the engine
    has by then skipped the deletion of every object `deleted_with` it, because the namespace's
    deletion was scheduled, and dropped them from the state while they stay live (pulumi/pulumi
    pkg/resource/deploy/step.go `DeleteStep.Apply`: the protect check, then `isDeletedWith`). So
    there every object gets its own delete, which the state records, and waits for the isolation:
    the engine deletes dependents first and never deletes what a refused deletion depends on, so a
    refused removal leaves the data isolated (docs/real-run.md, tools/plan/engine_rules.py
    `protected_namespaces`)."""

    namespace: pulumi.Resource
    holds_data: bool
    # What an object in the namespace waits for (and is deleted before): the namespace and its isolation.
    ready: tuple[pulumi.Resource, ...] = ()

    @property
    def deleted_with(self) -> pulumi.Resource | None:
        """The namespace, where deleting it may take the object along; None where it holds data."""
        return None if self.holds_data else self.namespace

    def options(self, *after: pulumi.Resource | None) -> dict[str, Any]:
        """`deleted_with` and `depends_on` for an object inside, which also waits for `after`."""
        depends = [*(self.ready or (self.namespace,)), *(r for r in after if r is not None)]
        return {"deleted_with": self.deleted_with, "depends_on": depends}


def in_namespace_options(inside: InNamespace | None, *after: pulumi.Resource | None) -> dict[str, Any]:
    """`InNamespace.options`, or (no namespace registered: released cloud data) only `after`."""
    if inside is None:
        return {"depends_on": [r for r in after if r is not None]}
    return inside.options(*after)


@dataclass(frozen=True)
class TenantIdentity:
    """One tenant environment's workload identity and key, as the rest of its data refers to them.

    One per environment, never per tenant: an identity shared by dev and prod would let anything
    running in dev (where admins write ExternalSecrets) read prod's secrets and use prod's key.
    """

    # GSA email (gcp), role ARN (aws); None on local.
    principal: pulumi.Output[str] | None
    # KMS key id (gcp) / ARN (aws); None on local.
    key: pulumi.Output[str] | None
    # Annotations the tenant's Kubernetes service account needs (workload identity, IRSA).
    account_annotations: pulumi.Output[dict[str, str]] | dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DatabaseRequest:
    """One database of one tenant environment."""

    tenant: str
    environment: str
    namespace: str
    name: str
    engine: str
    version: str
    size: str
    storage_gb: int
    pool_size: int | None
    placement: str
    labels: dict[str, str]
    # Child resource name prefix, e.g. `acme-prod-db-orders`.
    prefix: str
    # The namespace as objects inside it are registered (local: in-cluster databases live in it);
    # None for released cloud data.
    namespace_resource: InNamespace | None
    # Kubernetes labels for in-cluster objects (local).
    kubernetes_labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DatabaseEndpoint:
    """Where a database is reached; the password is a Pulumi secret."""

    host: pulumi.Output[str] | str
    port: int
    database: str
    username: str
    # Name of the secret holding the credentials (cloud secret name, or Kubernetes Secret on local).
    credentials: str
    # CIDRs the tenant's pods may reach it at (NetworkPolicy egress); empty when no rule is needed.
    egress_cidrs: list[pulumi.Output[str] | str]
    # What the stack outputs show (instance name or connection name).
    instance: pulumi.Output[str] | str
    # Namespaces of in-cluster shared instances the tenant's pods may reach (local).
    egress_namespaces: list[str] = field(default_factory=list)
    # Security groups the environment's pods must join to reach it (aws, docs/adr/0009).
    security_groups: list[pulumi.Output[str] | str] = field(default_factory=list)


@dataclass(frozen=True)
class DatabaseLogin:
    """What a cloud backend created for one database: how to log in and where it runs."""

    username: str
    password: pulumi.Output[str]
    host: pulumi.Output[str] | str
    database: str
    instance: pulumi.Output[str] | str
    egress_cidrs: list[pulumi.Output[str] | str] = field(default_factory=list)
    security_groups: list[pulumi.Output[str] | str] = field(default_factory=list)


@dataclass(frozen=True)
class SecretRequest:
    """One secret of one tenant environment; `value` is None for secrets filled in out of band."""

    tenant: str
    environment: str
    namespace: str
    # Name in the tenant's namespace (Kubernetes Secret) and last part of the cloud name.
    name: str
    remote_name: str
    value: pulumi.Output[str] | None
    labels: dict[str, str]
    prefix: str
    namespace_resource: InNamespace | None
    # Key inside the Kubernetes Secret.
    key: str = "value"
    kubernetes_labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DatabaseEgress:
    """Where a tenant environment's pods may open connections to its databases (one NetworkPolicy)."""

    cidrs: list[pulumi.Output[str] | str]
    ports: list[int]
    # Namespaces of in-cluster shared instances.
    namespaces: list[str]

    @property
    def needed(self) -> bool:
        return bool(self.cidrs or self.namespaces)


def endpoint_egress(endpoints: Sequence[DatabaseEndpoint]) -> DatabaseEgress:
    """Egress to exactly the endpoints' addresses and shared namespaces, on their ports."""
    return DatabaseEgress(
        cidrs=[cidr for endpoint in endpoints for cidr in endpoint.egress_cidrs],
        ports=sorted({endpoint.port for endpoint in endpoints if endpoint.egress_cidrs or endpoint.egress_namespaces}),
        namespaces=sorted({namespace for endpoint in endpoints for namespace in endpoint.egress_namespaces}),
    )


@dataclass(frozen=True)
class DeliveryTarget:
    """One tenant namespace secrets are delivered into, and how objects there are registered."""

    # Child resource name prefix, e.g. `acme-prod`.
    prefix: str
    namespace: str
    labels: dict[str, str]
    identity: TenantIdentity
    # Options for objects inside the namespace (InNamespace.options).
    opts: pulumi.ResourceOptions


class SecretDelivery(Protocol):
    """How stored secrets reach a tenant namespace: External Secrets Operator on the clouds, nothing
    (they are written there) or a copy on a local cluster. Called only for namespaces that exist."""

    def workload_account(self, target: DeliveryTarget, *, stores: bool) -> pulumi.Resource | None:
        """The namespace's workload ServiceAccount (and SecretStore when `stores`), if this cloud
        delivers with the tenant's identity; apps run as the account."""
        ...

    def database(self, target: DeliveryTarget, *, prefix: str, secret_name: str, credentials: str) -> None:
        """Deliver a database's credentials (the remote name `credentials`) as Secret `secret_name`."""
        ...

    def secret(self, target: DeliveryTarget, *, prefix: str, name: str, key: str, remote: str) -> None:
        """Deliver one tenant secret, stored under `remote`, as Secret `name` with key `key`."""
        ...

    def shared_secret(self, target: DeliveryTarget, *, name: str) -> None:
        """Deliver the stack's shared secret `name` into the namespace."""
        ...


class DataBackend(Protocol):
    """The per-cloud operations components/data composes for every tenant."""

    @property
    def data_in_namespaces(self) -> bool:
        """Whether tenant data lives inside tenant namespaces (in-cluster databases, Kubernetes
        Secrets): such a namespace is kept like the data it holds (components/lifecycle.py)."""
        ...

    @property
    def delivery(self) -> SecretDelivery:
        """How the stored secrets reach the tenant's namespaces."""
        ...

    def identity(
        self, tenant: str, environment: str, namespace: str | None, labels: dict[str, str], guard: Guard
    ) -> TenantIdentity:
        """The environment's own key and identity, bound only to `namespace`'s workload account
        (None: the namespace is gone and only released data is registered, so no identity)."""
        ...

    def database(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> DatabaseEndpoint: ...

    def store_secret(self, request: SecretRequest, identity: TenantIdentity, guard: Guard) -> str:
        """Store a secret under the environment's key; returns the name its delivery refers to."""
        ...

    def generated_value(self, name: str, length: int, guard: Guard) -> pulumi.Output[str]:
        """A generated secret's value (a Pulumi secret): `generate_password` where the cloud stores it
        in its secret manager; the local cloud writes it once into its Secret (local/passwords.py)."""
        ...

    def remote_secret_name(self, tenant: str, environment: str, secret: str) -> str:
        """The secret's name in the cloud secret manager; separators no tenant or secret name contains."""
        ...

    def database_egress(self, endpoints: Sequence[DatabaseEndpoint]) -> DatabaseEgress:
        """What the environment's database egress policy opens (nothing: no policy)."""
        ...

    def database_access(self, target: DeliveryTarget, endpoints: Sequence[DatabaseEndpoint]) -> None:
        """What else the namespace needs for its pods to reach its databases, where the network
        policy cannot tell environments apart (aws: a SecurityGroupPolicy); nothing elsewhere."""
        ...


def shared_names(tenant: str, environment: str, database: str) -> tuple[str, str]:
    """(database, user) names of a tenant's database on a shared instance.

    The database name carries tenant and environment so tenants never collide; names past the
    engines' limit keep a readable prefix and end in a hash of the whole. The user name is a hash
    (16 characters: MySQL 5.7's limit) so it reveals nothing and never collides.
    """
    full = f"{tenant}-{environment}-{database}"
    digest = hashlib.sha256(full.encode()).hexdigest()
    name = full if len(full) <= _MAX_DATABASE_NAME else f"{full[: _MAX_DATABASE_NAME - 9]}-{digest[:8]}"
    return name, "u" + digest[:15]


@dataclass
class PlatformValues:
    """Cluster-wide values tenants read from the platform part, as the platform stack exports them
    (`{"sharedInstances": {name: {attribute: value}}, ...}`); never a secret, so a shard's
    StackReference to the platform stays readable. `values` is the platform's own dict where it is
    built in this program (each value depends on its own resources only), else the reference's Output."""

    values: pulumi.Output[dict[str, Any]] | dict[str, Any]

    def value(self, *path: str) -> pulumi.Output[Any]:
        """The value at `path` (`"sharedInstances", "pg16", "privateIp"`), and nothing else of the platform's."""

        def pick(values: Any) -> Any:
            for key in path:
                values = values[key]
            return values

        if isinstance(self.values, dict):
            return pulumi.Output.from_input(pick(self.values))
        return self.values.apply(pick)

    def shared(self, instance: str, attribute: str) -> pulumi.Output[Any]:
        return self.value("sharedInstances", instance, attribute)


def credential_values(login: DatabaseLogin, port: int) -> dict[str, pulumi.Input[str]]:
    """The keys of every database's credentials, on every cloud (`db-<name>` in the namespace)."""
    return {
        "username": login.username,
        "password": login.password,
        "host": login.host,
        "port": str(port),
        "database": login.database,
    }


def deliver_credentials(
    backend: DataBackend,
    request: DatabaseRequest,
    identity: TenantIdentity,
    guard: Guard,
    login: DatabaseLogin,
    remote: str,
) -> DatabaseEndpoint:
    """Store a database's credentials as one JSON secret under the environment's key (the keys the
    `db-<name>` Secret gets: username, password, host, port, database) and say where it is."""
    port = ENGINE_PORTS[request.engine]
    credentials = pulumi.Output.json_dumps(credential_values(login, port))
    backend.store_secret(
        SecretRequest(
            tenant=request.tenant,
            environment=request.environment,
            namespace=request.namespace,
            name=remote,
            remote_name=remote,
            value=pulumi.Output.secret(credentials),
            labels=request.labels,
            prefix=f"{request.prefix}-credentials",
            namespace_resource=request.namespace_resource,
        ),
        identity,
        guard,
    )
    return DatabaseEndpoint(
        host=login.host,
        port=port,
        database=login.database,
        username=login.username,
        credentials=remote,
        egress_cidrs=login.egress_cidrs,
        instance=login.instance,
        security_groups=login.security_groups,
    )
