"""The tenant spec: the model of one `tenants/<name>.yaml` file.

It is validated on its own here (shape, formats, names, pinned versions); checks that need every
tenant or the stack settings (unique names, disjoint domains, known node pools) live in catalog.py.
Sections live beside it: tenant_data.py (databases, secrets), tenant_apps.py (apps, gitops);
rules across fields of one file in consistency.py.
The sections for data and delivery are part of the format from the start so tenant files written
today stay valid as the platform grows.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, EmailStr, Field, model_validator

from components.model.fields import (
    DnsLabel,
    Domain,
    QuotaSpec,
    StrictModel,
    unique,
    unique_names,
)
from components.model.isolation import Isolation, IsolationMode, VirtualClusterSpec, isolation_of
from components.model.name_checks import AccessGroup, TenantNameCheck
from components.model.network import TenantPeer, unique_peers
from components.model.tenant_apps import AppSpec, GitOpsSpec
from components.model.tenant_data import DatabaseSpec, SecretSpec

Lifecycle = Literal["active", "suspended", "decommissioned"]


class AccessSpec(StrictModel):
    """Identity-provider groups per role. Each role maps to one shared ClusterRole.

    Kubernetes' own `system:` groups are refused (name_checks.py): binding one would hand the role
    to every identity of the cluster.
    """

    admin: list[AccessGroup] = []
    operator: list[AccessGroup] = []
    viewer: list[AccessGroup] = []


class QuotaChoice(StrictModel):
    """Either a named tier from stack config or explicit amounts, never both."""

    tier: DnsLabel | None = None
    custom: QuotaSpec | None = None

    @model_validator(mode="after")
    def _one_of(self) -> QuotaChoice:
        if (self.tier is None) == (self.custom is None):
            raise ValueError("set exactly one of tier (a name from quotaTiers) or custom (explicit amounts)")
        return self


class TenantSpec(StrictModel):
    """One tenant: a team, a customer or an app, and everything the platform runs for it."""

    # Reserved names (platform, kube-*, system*, tenancy*) are refused: see name_checks.py.
    name: Annotated[DnsLabel, TenantNameCheck]
    display_name: Annotated[str, Field(min_length=1, max_length=200)]
    organization: str | None = None
    contact: EmailStr
    cost_center: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,63}$")]
    environments: Annotated[list[DnsLabel], Field(min_length=1), AfterValidator(unique)] = ["dev", "prod"]
    # Stacks this tenant exists in; None means every stack.
    stacks: list[DnsLabel] | None = None
    lifecycle: Lifecycle = "active"
    # The day the tenant was set to `decommissioned` (YYYY-MM-DD): its data's retention period
    # (`tenancy:data.retentionDays`) counts from here. Required once decommissioned (consistency.py).
    decommissioned_on: datetime.date | None = None
    access: AccessSpec = AccessSpec()
    quota: QuotaChoice | None = None
    node_pool: DnsLabel | None = None
    # Hostnames beyond the default `<name>.<suffix>`; `*.example.org` covers its subdomains.
    domains: Annotated[list[Domain], AfterValidator(unique)] = []
    # Ports of this tenant's pods the platform Gateway may reach: the ports its own HTTPRoutes'
    # backends listen on (apps with `hostnames` add theirs). None listed: the Gateway reaches nothing.
    route_ports: Annotated[list[Annotated[int, Field(ge=1, le=65535)]], AfterValidator(unique)] = []
    allow_load_balancer: bool = False
    # Names of the stack's egress entries (`tenancy:network.egress`) this tenant's pods may reach.
    egress: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    # Tenants whose pods may connect to this tenant's pods (same environment); each must list this
    # tenant in its `connectsTo`: both files consent (docs/network.md).
    accepts_from: Annotated[list[TenantPeer], AfterValidator(unique_peers)] = []
    # Tenants this tenant's pods connect to (same environment); each must list it in `acceptsFrom`.
    connects_to: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    databases: Annotated[list[DatabaseSpec], AfterValidator(unique_names)] = []
    secrets: Annotated[list[SecretSpec], AfterValidator(unique_names)] = []
    # Names of shared platform secrets (stack config) copied into this tenant's namespaces.
    shared_secrets: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    apps: Annotated[list[AppSpec], AfterValidator(unique_names)] = []
    gitops: GitOpsSpec | None = None
    # components/model/isolation.py
    isolation: Annotated[
        Isolation,
        Field(
            description="`namespace` (soft tenancy) or `virtual-cluster` (a vCluster control plane in the namespace), "
            "for every environment or per environment: `{dev: virtual-cluster}`. See docs/virtual-clusters.md."
        ),
    ] = "namespace"
    virtual_cluster: VirtualClusterSpec = VirtualClusterSpec()
    # Pin to a shard instead of the hash of the name (large installs split into shard stacks).
    shard: Annotated[int, Field(ge=0)] | None = None

    def isolation_in(self, environment: str) -> IsolationMode:
        """The isolation mode of one environment."""
        return isolation_of(self.isolation, environment)

    def in_environment(self, items: list[Any], environment: str) -> list[Any]:
        """The entries of a section (databases, secrets, apps) that apply to one environment."""
        return [item for item in items if item.environments is None or environment in item.environments]


class TenantFile(TenantSpec):
    """The file format: the spec plus per-stack overrides, which the catalog merges away."""

    # Per stack, a partial spec merged over the base: `overrides: {dev: {apps: [{name: web, ...}]}}`.
    overrides: dict[DnsLabel, dict[str, Any]] = {}
