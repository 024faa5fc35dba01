"""The one protocol every cloud implements (`components/clouds/registry.py` lists them).

Shared code never asks which cloud it has: it asks the stack's `Cloud` for its provider, its
cluster-wide data parts, its tenants' data backend (databases, keys, identity, secret naming and
delivery, database egress) and, before anything is registered, what it can run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import pulumi

from components.clouds.base import DataBackend, Guard
from components.model.checks.capabilities import CloudCapabilities
from components.model.core.errors import Problem
from components.model.settings.network import CloudNetworkFacts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec


@runtime_checkable
class Cloud(Protocol):
    """One cloud, bound to its slice of the stack settings (`tenancy:gcp`, `tenancy:aws`, `tenancy:data`)."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> CloudCapabilities: ...

    @property
    def network(self) -> CloudNetworkFacts:
        """What the network model opens for this cloud: identity endpoints, data operators."""
        ...

    def provider(self) -> pulumi.ProviderResource | None:
        """The cloud account's provider, shared by every tenant; None where there is no account."""
        ...

    def platform_data(
        self, *, guard: Guard, labels: dict[str, str], shared_namespaces: Sequence[str]
    ) -> dict[str, Any]:
        """Register the cluster-wide data parts (key ring, shared instances, the shared-secrets
        store, open only to `shared_namespaces`) and return what tenants need from them, for the
        platform output (never a secret)."""
        ...

    def data_backend(self, *, values: pulumi.Output[Any] | dict[str, Any], opts: pulumi.ResourceOptions) -> DataBackend:
        """The backend every tenant's data goes through, built once per stack from `values`
        (what `platform_data` returned, from this program or the platform stack)."""
        ...

    def database_problems(self) -> list[str]:
        """Why this stack cannot host any database (a missing network setting), or nothing."""
        ...

    def stack_problems(self, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
        """Problems of the cloud's own stack settings that these tenants' data runs into."""
        ...
