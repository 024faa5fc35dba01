"""What a cloud can run, as the model's cross-checks ask it (`load_catalog(..., cloud=...)`).

The model registers nothing and imports no component, so it cannot look a cloud up: the caller
(`__main__.py`, tools) hands it the stack's cloud (`components/clouds/registry.py`), which
satisfies `CloudRules`. A new cloud fills these in; nothing in the model changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from components.model.core.errors import Problem
    from components.model.settings.network import CloudNetworkFacts
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantSpec


@dataclass(frozen=True)
class CloudCapabilities:
    """Database engines, versions and placements, and node pool kinds, one cloud implements."""

    # engine -> versions it runs (Cloud SQL, RDS, the in-cluster operators' images).
    engine_versions: Mapping[str, frozenset[str]]
    placements: frozenset[str]
    # Engines that may be placed on a shared instance.
    shared_engines: frozenset[str]
    # Node pool kinds (`tenancy:nodePools.<name>.kind`) the cloud can run, in the order messages list them.
    pool_kinds: tuple[str, ...] = ("existing",)
    # How this cloud's clusters authenticate `pulumi up`, when that identity is not a built-in admin
    # group the admission rules already exempt; the stack must then list it in platformIdentities.
    up_identity_hint: str | None = None
    # Placements where a database's `poolSize` is honoured (a PgBouncer Pooler, Cloud SQL managed
    # pooling); anywhere else the catalog refuses it rather than ignore it.
    pooled_placements: frozenset[str] = frozenset()
    # The CSI driver and parameters of the StorageClass the platform renders for tenants when a
    # stack lists none (`tenancy:storage`, components/model/settings/storage.py).
    # Whether dedicated databases run inside the tenant's namespace (operators on a local cluster),
    # where the namespace's quota must hold them (components/model/checks/quota_budget.py).
    databases_in_namespace: bool = False
    # Whether the stack reaches its cluster through the kubeconfig alone, so it must name the
    # context (`tenancy:cluster.context`) rather than apply to whatever context is current.
    kube_context_required: bool = False
    storage_provisioner: str = "rancher.io/local-path"
    storage_parameters: Mapping[str, str] = field(default_factory=dict)
    # What the cloud's database service would refuse of one tenant database in this stack (edition,
    # machine type, version: components/clouds/gcp/checks.py), as (field path, message) pairs for
    # `databases.<index>` of the tenant's file; None when the cloud has no such rules.
    database_rules: Callable[[TenantSpec, int, StackSettings], list[tuple[str, str]]] | None = None
    # (engine, major version) -> end of standard support, where the cloud refuses to create a new
    # instance past it (components/model/checks/engine_support.py); empty when it creates them anyway.
    end_of_standard_support: Mapping[tuple[str, str], date] = field(default_factory=dict)
    # Why a new instance past that date is refused on this cloud (the end of a sentence).
    past_support_reason: str = (
        "this stack creates instances without paid extended support, and the cloud refuses to create one on "
        "that version"
    )
    # Whether the cluster's dataplane enforces egress by host name, so `tenancy:network.egress.<name>.hosts`
    # renders (GKE: FQDNNetworkPolicy on Dataplane V2, components/guardrails/fqdn.py); elsewhere refused.
    egress_hosts: bool = False


class CloudRules(Protocol):
    """The part of a cloud the model's cross-checks need: its name, capabilities and the stack
    settings its data needs (each problem names the stack key to fix)."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> CloudCapabilities: ...

    @property
    def network(self) -> CloudNetworkFacts: ...

    def database_problems(self) -> list[str]:
        """Why this stack cannot host any database (a missing network setting), or nothing."""
        ...

    def stack_problems(self, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
        """Problems of the cloud's own stack settings that these tenants' data runs into."""
        ...
