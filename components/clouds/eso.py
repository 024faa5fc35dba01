"""Secret delivery through External Secrets Operator, shared by the clouds with a secret manager.

Per tenant namespace: the `workload` ServiceAccount carrying the tenant's cloud identity, a
SecretStore that authenticates as it, and one ExternalSecret per database and secret. Shared
platform secrets come through one ClusterSecretStore that only the namespaces of tenants entitled
to a shared secret (tenant file `sharedSecrets`) may use, and only through the platform-owned
ExternalSecrets registered here: tenants may not reference a ClusterSecretStore at all
(components/admission/rules/secret_stores.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import WORKLOAD_ACCOUNT, DeliveryTarget, Guard, TenantIdentity
from components.model.core.labels import PLATFORM_OWNED_KEY, TENANT_KEY, platform_labels
from components.model.settings.data import SharedSecret

SECRET_STORE = "tenancy-secrets"
SHARED_STORE = "tenancy-shared"
ESO_VERSION = "external-secrets.io/v1"


# ESO admits a namespace when any condition matches it, and every namespace when there is no
# condition; a selector that no namespace can satisfy keeps the store closed.
_NO_NAMESPACE = {
    "namespaceSelector": {
        "matchExpressions": [{"key": TENANT_KEY, "operator": "Exists"}, {"key": TENANT_KEY, "operator": "DoesNotExist"}]
    }
}


# The ServiceAccount the shared-secrets ClusterSecretStore authenticates as (GKE workload identity, IRSA).
SHARED_SECRETS_ACCOUNT = "tenancy-shared-secrets"


def shared_secrets_account(
    namespace: str, annotations: pulumi.Input[Mapping[str, pulumi.Input[str]]], guard: Guard
) -> None:
    """The shared store's ServiceAccount in the secrets operator's namespace; `annotations` bind it
    to the cloud identity that reads the shared secrets."""
    k8s.core.v1.ServiceAccount(
        "shared-secrets-account",
        metadata={
            "name": SHARED_SECRETS_ACCOUNT,
            "namespace": namespace,
            "labels": platform_labels(),
            "annotations": annotations,
        },
        opts=guard.plain(),
    )


def store_conditions(namespaces: Sequence[str]) -> list[dict[str, Any]]:
    """`spec.conditions` admitting exactly `namespaces` (none when empty)."""
    if not namespaces:
        return [_NO_NAMESPACE]
    return [{"namespaces": sorted(set(namespaces))}]


def cluster_secret_store(provider: dict[str, Any], guard: Guard, namespaces: Sequence[str]) -> None:
    """The store shared secrets are read through. Only `namespaces` (those of tenants entitled to a
    shared secret) may use it; which secret each gets is its platform-owned ExternalSecret's."""
    k8s.apiextensions.CustomResource(
        "shared-secret-store",
        api_version=ESO_VERSION,
        kind="ClusterSecretStore",
        metadata={"name": SHARED_STORE, "labels": platform_labels()},
        spec={
            "provider": provider,
            "conditions": store_conditions(namespaces),
        },
        opts=guard.plain(),
    )


def shared_secret_store(
    shared_secrets: Mapping[str, SharedSecret],
    guard: Guard,
    namespaces: Sequence[str],
    provider: Callable[[], dict[str, Any]],
) -> None:
    """The clouds' shared-secrets store, only where the stack defines shared secrets: `provider`
    registers the platform identity the store reads with and returns its `spec.provider`, so a
    stack without shared secrets registers neither."""
    if shared_secrets:
        cluster_secret_store(provider(), guard, namespaces)


@dataclass(frozen=True)
class EsoDelivery:
    """`SecretDelivery` through ESO; the cloud supplies the SecretStore's `spec.provider`."""

    # How often ESO re-reads secrets from the cloud (tenancy:data.refreshInterval).
    refresh_interval: str
    shared_secrets: Mapping[str, SharedSecret]
    store_provider: Callable[[str, TenantIdentity], dict[str, Any]]

    def workload_account(self, target: DeliveryTarget, *, stores: bool) -> pulumi.Resource | None:
        # The tenant's cloud identity in this namespace: ESO authenticates as it, apps may run as it.
        account = k8s.core.v1.ServiceAccount(
            f"{target.prefix}-workload",
            metadata={
                "name": WORKLOAD_ACCOUNT,
                "namespace": target.namespace,
                "labels": target.labels,
                "annotations": target.identity.account_annotations,
            },
            opts=target.opts,
        )
        if stores:
            k8s.apiextensions.CustomResource(
                f"{target.prefix}-secret-store",
                api_version=ESO_VERSION,
                kind="SecretStore",
                metadata={"name": SECRET_STORE, "namespace": target.namespace, "labels": target.labels},
                spec={"provider": self.store_provider(target.namespace, target.identity)},
                opts=target.opts,
            )
        return account

    def database(self, target: DeliveryTarget, *, prefix: str, secret_name: str, credentials: str) -> None:
        # The credentials secret is a JSON document; each field becomes a key of the Secret.
        self._external_secret(
            f"{prefix}-delivery", target, secret_name, {"dataFrom": [{"extract": {"key": credentials}}]}
        )

    def secret(self, target: DeliveryTarget, *, prefix: str, name: str, key: str, remote: str) -> None:
        self._external_secret(
            f"{prefix}-delivery", target, name, {"data": [{"secretKey": key, "remoteRef": {"key": remote}}]}
        )

    def shared_secret(self, target: DeliveryTarget, *, name: str) -> None:
        shared = self.shared_secrets[name]
        self._external_secret(
            f"{target.prefix}-shared-{name}",
            target,
            name,
            {"data": [{"secretKey": shared.key, "remoteRef": {"key": shared.remote_key}}]},
            store=(SHARED_STORE, "ClusterSecretStore"),
            secret_type=shared.type,
            # Tenants may write ExternalSecrets; this one only the platform (rule platform_owned).
            labels={**target.labels, PLATFORM_OWNED_KEY: "true"},
        )

    def _external_secret(
        self,
        resource_name: str,
        target: DeliveryTarget,
        secret_name: str,
        source: dict[str, Any],
        store: tuple[str, str] = (SECRET_STORE, "SecretStore"),
        secret_type: str | None = None,
        labels: dict[str, str] | None = None,
    ) -> None:
        spec: dict[str, Any] = {
            "refreshInterval": self.refresh_interval,
            "secretStoreRef": {"name": store[0], "kind": store[1]},
            "target": {"name": secret_name, "creationPolicy": "Owner"},
        }
        if secret_type is not None:
            spec["target"]["template"] = {"type": secret_type}
        spec.update(source)
        k8s.apiextensions.CustomResource(
            resource_name,
            api_version=ESO_VERSION,
            kind="ExternalSecret",
            metadata={"name": secret_name, "namespace": target.namespace, "labels": labels or target.labels},
            spec=spec,
            opts=target.opts,
        )
