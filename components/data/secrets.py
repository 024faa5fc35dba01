"""A tenant environment's own secrets: generated or filled in out of band, stored under the
environment's key by the cloud, delivered into the namespace."""

from __future__ import annotations

from collections.abc import Sequence

from components.clouds.base import DataBackend, SecretRequest
from components.data.scope import EnvironmentScope
from components.model.tenant_file.data import SecretSpec


def register_secrets(*, scope: EnvironmentScope, backend: DataBackend, secrets: Sequence[SecretSpec]) -> list[str]:
    """Register `secrets` (the environment's, from the tenant file); return their names."""
    names: list[str] = []
    for secret in secrets:
        prefix = f"{scope.prefix}-secret-{secret.name}"
        # External secrets get no value: the team fills them in, Pulumi never reverts them.
        value = (
            backend.generated_value(f"{prefix}-value", secret.length, scope.guard)
            if secret.source == "generated"
            else None
        )
        remote = backend.store_secret(
            SecretRequest(
                tenant=scope.tenant,
                environment=scope.environment,
                namespace=scope.namespace,
                name=secret.name,
                remote_name=backend.remote_secret_name(scope.tenant, scope.environment, secret.name),
                value=value,
                labels=scope.labels,
                prefix=prefix,
                namespace_resource=scope.namespace_resource,
                key=secret.key,
                kubernetes_labels=scope.kubernetes_labels,
            ),
            scope.identity,
            scope.guard,
        )
        if scope.delivery is not None:
            backend.delivery.secret(scope.delivery, prefix=prefix, name=secret.name, key=secret.key, remote=remote)
        names.append(secret.name)
    return names
