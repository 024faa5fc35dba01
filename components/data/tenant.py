"""Per-tenant data: databases, KMS-backed secrets, workload identity and their delivery.

Builder functions that register children of the Tenant component (like the guard rails) rather
than a component of their own: a TenantData component would add a registered resource per tenant
for no behaviour. What differs per cloud is the backend's (components/clouds/); this package
decides what exists, in which namespace, and under which lifecycle guard (components/lifecycle.py).

Per environment with data (cloud): its own key and identity with its bindings, the
`workload` ServiceAccount, one SecretStore, one egress NetworkPolicy to its databases. Per
database: the instance (dedicated) or nothing (shared), database, user, password, the credentials
secret and its delivery. Per secret: the secret, its value (generated), a read grant and its
delivery. On local: Kubernetes Secrets and operator objects only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pulumi

from components.clouds.base import DataBackend, InNamespace
from components.data.environment import environment_data, environment_scope
from components.data.summary import TenantData
from components.guardrails.namespace import EnvironmentResources
from components.lifecycle import data_guard
from components.model.core.labels import cost_labels, namespace_name
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec


def build_tenant_data(
    *,
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    backend: DataBackend,
    settings: StackSettings,
    environments: Mapping[str, EnvironmentResources],
    retained_namespaces: Mapping[str, InNamespace],
) -> TenantData:
    """Register one tenant's data. `environments` is empty once it is decommissioned; then the
    data resources are registered released (unprotected, retained on delete) and nothing else.
    `settings`: the stack's, for its protection of data, default placement and network mode."""
    guard = data_guard(parent=parent, lifecycle=spec.lifecycle, protect=settings.protection.protect_data)
    # Data objects in a namespace count against its quota and are isolated by its policy: they wait
    # for both (EnvironmentResources.ready), and a refused deletion of data keeps them.
    ready = [resource for res in environments.values() for resource in res.ready]
    if ready:
        guard = replace(guard, base=pulumi.ResourceOptions.merge(guard.base, pulumi.ResourceOptions(depends_on=ready)))
    result = TenantData()
    if not (spec.databases or spec.secrets or spec.shared_secrets):
        return result
    namespace_resources: dict[str, InNamespace] = {env: res.inside for env, res in environments.items()}
    namespace_resources.update(retained_namespaces)
    # Released data is registered for every environment of the file, so none of it is dropped.
    for environment in spec.environments if guard.release else list(environments):
        present = environments.get(environment)
        # Each environment its own key and identity, bound to its own namespace only: dev never
        # holds a credential that reads prod (docs/data-and-secrets.md, identities).
        identity = backend.identity(
            spec.name,
            environment,
            present.namespace_name if present is not None else None,
            cost_labels(spec.name, spec.cost_center, environment),
            guard,
        )
        if identity.principal is not None:
            result.identity[environment] = identity.principal
        if identity.key is not None:
            result.keys[environment] = identity.key
        scope = environment_scope(
            name=name,
            spec=spec,
            environment=environment,
            namespace=present.namespace_name if present is not None else namespace_name(spec.name, environment),
            namespace_resource=namespace_resources.get(environment),
            delivered=present is not None,
            identity=identity,
            guard=guard,
        )
        environment_data(
            scope=scope,
            spec=spec,
            backend=backend,
            placement=settings.data.placement,
            network_mode=settings.network.mode,
            result=result,
        )
    return result
