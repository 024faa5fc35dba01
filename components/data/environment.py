"""One tenant environment's data: its workload identity in the namespace, databases, secrets,
shared secrets, and the egress that lets its pods reach databases outside the namespace."""

from __future__ import annotations

from collections.abc import Sequence

from components.clouds.base import (
    DataBackend,
    DatabaseEndpoint,
    DeliveryTarget,
    Guard,
    InNamespace,
    TenantIdentity,
    in_namespace_options,
)
from components.data.databases import register_databases
from components.data.scope import EnvironmentScope
from components.data.secrets import register_secrets
from components.data.summary import TenantData
from components.guardrails.cluster_network import namespace_databases
from components.guardrails.network import database_egress_policy
from components.model.core.labels import PLATFORM_OWNED_KEY, cost_labels, kubernetes_labels
from components.model.settings.network import CLUSTER_MODE
from components.model.tenant_file.spec import TenantSpec


def environment_scope(
    *,
    name: str,
    spec: TenantSpec,
    environment: str,
    namespace: str,
    namespace_resource: InNamespace | None,
    delivered: bool,
    identity: TenantIdentity,
    guard: Guard,
) -> EnvironmentScope:
    """Decide names, labels and options once; `delivered`: the namespace exists and gets secrets."""
    prefix = f"{name}-{environment}"
    k8s_labels = kubernetes_labels(spec.name, environment)
    # Objects inside the namespace wait for it and its isolation; deleted with it where it holds no data.
    inside = guard.plain(**in_namespace_options(namespace_resource))
    return EnvironmentScope(
        tenant=spec.name,
        environment=environment,
        prefix=prefix,
        namespace=namespace,
        namespace_resource=namespace_resource,
        labels=cost_labels(spec.name, spec.cost_center, environment),
        kubernetes_labels=k8s_labels,
        identity=identity,
        guard=guard,
        delivery=DeliveryTarget(prefix, namespace, k8s_labels, identity, inside) if delivered else None,
    )


def environment_data(
    *,
    scope: EnvironmentScope,
    spec: TenantSpec,
    backend: DataBackend,
    placement: str,
    network_mode: str,
    result: TenantData,
) -> None:
    """Register the environment's data into `result`. `placement`: the stack's default placement;
    `network_mode`: the stack's `tenancy:network.mode`, which decides how database egress is rendered."""
    environment = scope.environment
    databases = spec.in_environment(spec.databases, environment)
    secrets = spec.in_environment(spec.secrets, environment)
    target = scope.delivery
    if target is not None and (databases or secrets or spec.shared_secrets):
        account = backend.delivery.workload_account(target, stores=bool(databases or secrets))
        if account is not None:
            result.workload_accounts[environment] = account
    endpoints, summary = register_databases(scope=scope, backend=backend, databases=databases, placement=placement)
    if summary:
        result.databases[environment] = summary
    names = register_secrets(scope=scope, backend=backend, secrets=secrets)
    if target is not None:
        for shared in spec.shared_secrets:
            backend.delivery.shared_secret(target, name=shared)
            names.append(shared)
        _database_egress(scope, target, backend, endpoints, network_mode)
    if names:
        result.secrets[environment] = names


def _database_egress(
    scope: EnvironmentScope,
    target: DeliveryTarget,
    backend: DataBackend,
    endpoints: Sequence[DatabaseEndpoint],
    network_mode: str,
) -> None:
    """Open the namespace's pods to its own databases: a namespaced NetworkPolicy, or in the
    ClusterNetworkPolicy mode an Admin-tier object (a NetworkPolicy there would select every pod for
    egress and cut what the Baseline tier grants; docs/adr/0010-cluster-network-policy-mode.md)."""
    backend.database_access(target, endpoints)
    egress = backend.database_egress(endpoints)
    if not egress.needed:
        return
    owned = {**target.labels, PLATFORM_OWNED_KEY: "true"}
    if network_mode == CLUSTER_MODE:
        # Cluster-scoped: the namespace's deletion does not take it along, so no deleted_with.
        depends = [scope.namespace_resource.namespace] if scope.namespace_resource is not None else []
        namespace_databases(target.prefix, target.namespace, owned, egress, scope.guard.plain(depends_on=depends))
        return
    database_egress_policy(
        target.prefix,
        target.namespace,
        owned,
        egress.cidrs,
        egress.ports,
        target.opts,
        namespaces=egress.namespaces,
    )
