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

from components.model.checks.names import AccessGroup, TenantNameCheck
from components.model.core.fields import (
    DnsLabel,
    Domain,
    QuotaSpec,
    StrictModel,
    unique,
    unique_names,
)
from components.model.settings.network import TenantPeer, unique_peers
from components.model.tenant_file.apps import AppSpec, GitOpsSpec
from components.model.tenant_file.data import DatabaseSpec, SecretSpec
from components.model.tenant_file.hostnames import HostnameTemplate
from components.model.tenant_file.isolation import Isolation, IsolationMode, VirtualClusterSpec, isolation_of

Lifecycle = Literal["active", "suspended", "decommissioned"]


class AccessSpec(StrictModel):
    """Identity-provider groups per role. Each role maps to one shared ClusterRole.

    Kubernetes' own `system:` groups are refused (name_checks.py): binding one would hand the role
    to every identity of the cluster.
    """

    # Groups bound to `tenancy-tenant-admin` in each environment: write workloads, Secrets and (where tenants
    # may) Flux objects, exec and port-forward. In read-only environments (`readOnlyEnvironments`) and while
    # suspended they get viewer rights only.
    admin: list[AccessGroup] = []
    # Groups bound to `tenancy-tenant-operator`: read everything but Secrets, delete pods and jobs, scale,
    # port-forward; nothing that writes a pod spec (components/platform/roles.py).
    operator: list[AccessGroup] = []
    # Groups bound to `tenancy-tenant-viewer`: read workloads and their status, never Secrets.
    viewer: list[AccessGroup] = []


class QuotaChoice(StrictModel):
    """Either a named tier from stack config or explicit amounts, never both."""

    # A key of the stack's `quotaTiers` (built in: `small`, `medium`, `large`). The tier is the tenant's total
    # in the stack, split over its environments by `quotaSplit`.
    tier: DnsLabel | None = None
    custom: QuotaSpec | None = None

    @model_validator(mode="after")
    def _one_of(self) -> QuotaChoice:
        if (self.tier is None) == (self.custom is None):
            raise ValueError("set exactly one of tier (a name from quotaTiers) or custom (explicit amounts)")
        return self


class TenantSpec(StrictModel):
    """One tenant: a team, a customer or an app, and everything the platform runs for it."""

    # The tenant's identity: a DNS label equal to the file name; namespaces are `tenant-<name>-<env>` (within
    # 63 characters). Reserved names (platform, kube-*, system*, tenancy*) are refused: see name_checks.py.
    name: Annotated[DnsLabel, TenantNameCheck]
    # Human-readable name, 1-200 characters; set as the `tenancy.io/display-name` annotation on every namespace.
    display_name: Annotated[str, Field(min_length=1, max_length=200)]
    # Free text: the customer, department or company the tenant belongs to. Informational; nothing is rendered
    # from it.
    organization: str | None = None
    # Email address of whoever answers for the tenant; set as the `tenancy.io/contact` annotation on every
    # namespace.
    contact: EmailStr
    # Billing code (letters, digits, `_`, `-`, at most 63): the `tenancy.io/cost-center` namespace label and the
    # `cost-center` label on the tenant's cloud resources.
    cost_center: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,63}$")]
    # Tenant environments: each becomes a namespace `tenant-<name>-<environment>`. Every entry must be one of
    # the stack's `environments`, so a tenant cannot ask for an environment the cluster does not host, and in
    # the stack's order: the last one serves the tenant's own name and domains.
    environments: Annotated[list[DnsLabel], Field(min_length=1), AfterValidator(unique)] = ["dev", "prod"]
    # Stacks this tenant exists in; None means every stack.
    stacks: list[DnsLabel] | None = None
    # Where the tenant is in its life: `active`, `suspended` or `decommissioned`. `active`: everything runs.
    # `suspended`: everything stays, nothing new runs (no pod admitted, Flux suspended, no traffic from
    # platform namespaces, people read only). `decommissioned`: namespaces removed, data released (kept in
    # the cloud, out of Pulumi's protection); needs `decommissionedOn`. See docs/operations.md and
    # components/lifecycle.py.
    lifecycle: Lifecycle = "active"
    # The day the tenant was set to `decommissioned` (YYYY-MM-DD): its data's retention period
    # (`tenancy:data.retentionDays`) counts from here. Required once decommissioned (consistency.py).
    decommissioned_on: datetime.date | None = None
    access: AccessSpec = AccessSpec()
    quota: QuotaChoice | None = None
    # A key of the stack's `nodePools`: the tenant's pods are placed on that pool's nodes (namespace label
    # `tenancy.io/pool`, enforced by admission). None: the cluster's untainted nodes.
    node_pool: DnsLabel | None = None
    # Hostnames beyond the default `<name>.<suffix>`; `*.example.org` covers its subdomains.
    domains: Annotated[list[Domain], AfterValidator(unique)] = []
    # Per environment, the hostnames it serves (routes, ListenerSets, Ingresses, Certificates); each name
    # is served from one environment only. `{suffix}` is the stack's domain suffix, `{environment}` the
    # environment. An environment not listed serves `<name>-<environment>.<suffix>`, and the last
    # environment also `<name>.<suffix>` and every `domains` entry (components/model/tenant_file/hostnames.py).
    hostnames: dict[DnsLabel, Annotated[list[HostnameTemplate], AfterValidator(unique)]] = {}
    # Ports of this tenant's pods the platform Gateway may reach: the ports its own HTTPRoutes'
    # backends listen on (apps with `hostnames` add theirs). None listed: the Gateway reaches nothing.
    route_ports: Annotated[list[Annotated[int, Field(ge=1, le=65535)]], AfterValidator(unique)] = []
    # Allow Services of type LoadBalancer (a public address costs money and bypasses the ingress controller).
    # False sets the quota's `services.loadbalancers` to 0; NodePorts are always 0.
    allow_load_balancer: bool = False
    # Names of the stack's egress entries (`tenancy:network.egress`) this tenant's pods may reach.
    egress: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    # Tenants whose pods may connect to this tenant's pods (same environment); each must list this
    # tenant in its `connectsTo`: both files consent (docs/network.md).
    accepts_from: Annotated[list[TenantPeer], AfterValidator(unique_peers)] = []
    # Tenants this tenant's pods connect to (same environment); each must list it in `acceptsFrom`.
    connects_to: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    # Databases the tenant owns, one instance or database per environment they apply to; credentials land in a
    # Secret `db-<name>` (docs/data-and-secrets.md).
    databases: Annotated[list[DatabaseSpec], AfterValidator(unique_names)] = []
    # Per-tenant secrets kept in the cloud secret manager under the tenant's key and delivered as Kubernetes
    # Secrets (docs/data-and-secrets.md).
    secrets: Annotated[list[SecretSpec], AfterValidator(unique_names)] = []
    # Names of shared platform secrets (stack config) copied into this tenant's namespaces.
    shared_secrets: Annotated[list[DnsLabel], AfterValidator(unique)] = []
    # App components (a Helm chart or a container image, each at a pinned version) the platform installs in the
    # tenant's namespaces (docs/delivery.md).
    apps: Annotated[list[AppSpec], AfterValidator(unique_names)] = []
    gitops: GitOpsSpec | None = None
    # components/model/tenant_file/isolation.py
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
