"""A local cluster (kind, k3d): no cloud account; databases run in-cluster, secrets are Secrets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.clouds.base import DataBackend, Guard, PlatformValues
from components.clouds.local import shared
from components.clouds.local.data import LocalData
from components.clouds.local.delivery import LocalDelivery, shared_sources
from components.clouds.local.installs import placeholder_secrets
from components.clouds.local.network import NETWORK
from components.model.checks.capabilities import CloudCapabilities
from components.model.core.errors import Problem
from components.model.settings.data import DataSettings
from components.model.settings.installs import InstallSettings
from components.model.settings.network import CloudNetworkFacts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

# MySQL is served by MariaDB (wire-compatible with MySQL 8.0 clients). Shared: MySQL only, on a
# platform MariaDB (CloudNativePG has no per-tenant role or database object among the CRDs the
# platform validates).
CAPABILITIES = CloudCapabilities(
    engine_versions={"postgres": frozenset({"13", "14", "15", "16", "17"}), "mysql": frozenset({"8.0"})},
    placements=frozenset({"dedicated", "shared"}),
    shared_engines=frozenset({"mysql"}),
    # `existing` works everywhere: the pool is only a label and a taint on nodes already there.
    pool_kinds=("existing",),
    pooled_placements=frozenset({"dedicated"}),
    # CloudNativePG and MariaDB run in the tenant's namespace (data.py), inside its quota.
    databases_in_namespace=True,
    # A local cluster has no address but its kubeconfig context (components/platform/providers.py).
    kube_context_required=True,
)


@dataclass(frozen=True)
class LocalCloud:
    """`Cloud` for a local cluster."""

    data: DataSettings
    # The platform StorageClass in-cluster databases claim (tenant claims may name no other).
    storage_class: str
    # `tenancy:installs`: whether the platform creates placeholder shared-secret sources.
    installs: InstallSettings = field(default_factory=InstallSettings)
    name: str = "local"
    capabilities: CloudCapabilities = CAPABILITIES
    # Identity endpoints and data operators the network model opens (network.py beside this file).
    network: CloudNetworkFacts = NETWORK

    def provider(self) -> pulumi.ProviderResource | None:
        return None

    def platform_data(
        self, *, guard: Guard, labels: dict[str, str], shared_namespaces: Sequence[str]
    ) -> dict[str, Any]:
        # Shared MariaDB instances: tenants' objects go into them by the names returned here.
        values: dict[str, Any] = {}
        if instances := shared.platform(self.data, guard):
            values["sharedInstances"] = instances
        if self.installs.shared_secret_placeholders:
            # The placeholders' ids: tenants read the sources by them (installs.py beside this file).
            values["sharedSecretIds"] = placeholder_secrets(self.data, guard)
        return values

    def data_backend(self, *, values: pulumi.Output[Any] | dict[str, Any], opts: pulumi.ResourceOptions) -> DataBackend:
        platform: pulumi.Output[Any] = pulumi.Output.from_input(values)
        ids = platform.apply(lambda built: (built or {}).get("sharedSecretIds", {}))
        delivery = LocalDelivery(self.data.shared_secrets, shared_sources(self.data, opts, ids=ids))
        return LocalData(self.data, delivery, self.storage_class, PlatformValues(values))

    def database_problems(self) -> list[str]:
        return []

    def stack_problems(self, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
        # No cloud keys here, so no old per-tenant key to carry over: the setting is a mistake.
        if settings.data.legacy_keys:
            return [Problem(settings.source, "tenancy:data.legacyKeys", "a local stack has no cloud keys; remove it")]
        return []
