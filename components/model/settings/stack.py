"""The stack settings model: everything under the `tenancy:` namespace of `Pulumi.<stack>.yaml`.

Stack config is the one place where environments differ (dev on a local kind cluster, prod on
GKE), so it is validated as strictly as tenant files: unknown keys and bad values are errors that
name the key, reported all at once before anything is registered.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, PrivateAttr, model_validator

from components.model.core.fields import (
    ComputeAmounts,
    DnsLabel,
    Domain,
    QuotaSpec,
    StrictModel,
    unique,
)
from components.model.settings.admission import PolicySettings
from components.model.settings.clouds import AwsSettings, GcpSettings
from components.model.settings.data import DataSettings
from components.model.settings.delivery import DeliverySettings
from components.model.settings.edge import EdgeCloud, EdgeSettings, edge_cloud
from components.model.settings.installs import InstallSettings
from components.model.settings.network import NetworkSettings
from components.model.settings.people import PeopleSettings
from components.model.settings.pools import NodePools
from components.model.settings.quota_objects import SMALL_OBJECT_COUNTS
from components.model.settings.storage import StorageSettings
from components.model.tenant_file.isolation import VirtualClusterSettings

# ValidatingAdmissionPolicy is GA from 1.30; kubernetes-validate ships schemas up to 1.37.
_KUBERNETES_VERSION = r"^1\.(3[0-9])$"


class ClusterSettings(StrictModel):
    """How the program reaches the cluster: one Kubernetes provider shared by all tenants."""

    # The cluster's name: the GKE cluster or EKS cluster the pools and identities belong to (Karpenter finds
    # subnets by `karpenter.sh/discovery: <name>`), and the Kubernetes provider's cluster identity: changing it
    # replaces every Kubernetes object of the stack.
    name: DnsLabel = "tenancy"
    # kubeconfig context; None means the current context (CI's credentials). Required where the
    # cloud reaches the cluster through the kubeconfig alone (local: components/platform/providers.py).
    context: str | None = None
    # The cluster's own untainted node pool (GKE node pool, EKS managed node group), not managed by
    # the stack: every pool the stack creates is tainted, so CoreDNS, Karpenter, External Secrets and
    # Flux run here. Required when the stack creates pools (gke, eks, karpenter) (stack_checks.system_pool_problems);
    # scripts/bootstrap.sh checks it exists without taints (docs/bootstrap.md).
    system_pool: DnsLabel | None = None
    # Requests per second the Kubernetes provider may send the API server (its client's rate limit;
    # the provider's own default is 50). A first preview dry-runs, and a first `up` applies and then
    # reads, every object: at 50 per second that alone is 3 to 6 minutes for 300 tenants (docs/scale.md
    # "The provider's request rate"). The API server's priority and fairness still protects it.
    client_qps: Annotated[float, Field(gt=0, le=1000)] = 200
    # Requests the provider's client may send at once above that rate (the provider's default is 120).
    client_burst: Annotated[int, Field(ge=1, le=2000)] = 400


class PlatformNamespace(StrictModel):
    """A platform namespace whose pods may reach tenant pods (ingress controller, monitoring)."""

    # A namespace (ingress controller, gateway, monitoring) whose pods every tenant's isolation policy admits.
    name: DnsLabel
    # Empty means every port: an ingress controller must reach whatever port a tenant serves.
    ports: list[Annotated[int, Field(ge=1, le=65535)]] = []


class DnsSettings(StrictModel):
    """Where cluster DNS runs, so tenant egress can be opened to it and nothing else."""

    # Namespace cluster DNS (CoreDNS, kube-dns) runs in.
    namespace: DnsLabel = "kube-system"
    # Labels of the DNS pods: tenant egress is opened to exactly these pods on port 53, UDP and TCP.
    pod_labels: dict[str, str] = {"k8s-app": "kube-dns"}


class LimitDefaults(StrictModel):
    """LimitRange defaults: containers without requests/limits get these, so quotas can apply.

    Every resource the quota caps needs a default here: a quota on `requests.ephemeral-storage`
    rejects any pod whose containers state none, unless the LimitRange fills it in.
    """

    default_request: ComputeAmounts = ComputeAmounts(cpu="100m", memory="128Mi", ephemeral_storage="256Mi")
    default_limit: ComputeAmounts = ComputeAmounts(cpu="1", memory="512Mi", ephemeral_storage="1Gi")
    max_limit: ComputeAmounts = ComputeAmounts(cpu="8", memory="32Gi", ephemeral_storage="8Gi")


class ProtectionSettings(StrictModel):
    """Guards on data-bearing resources (databases, keys, secrets)."""

    # Pulumi `protect` on data-bearing resources; turning it off is for throwaway stacks only.
    protect_data: bool = True


def _default_tiers() -> dict[str, QuotaSpec]:
    """Built-in tiers: a tenant's total in a stack, split over its environments (quota_budget.py)."""

    def tier(cpu: str, memory: str, limit_cpu: str, limit_memory: str, scale: int) -> QuotaSpec:
        return QuotaSpec(
            requests=ComputeAmounts(cpu=cpu, memory=memory, ephemeral_storage=f"{10 * scale}Gi"),
            limits=ComputeAmounts(cpu=limit_cpu, memory=limit_memory, ephemeral_storage=f"{20 * scale}Gi"),
            storage=f"{100 * scale}Gi",
            objects={key: count * scale for key, count in SMALL_OBJECT_COUNTS.items()},
        )

    # Small's CPU limit (8, twice medium's ratio) leaves each of two environments room for a
    # pooled database (instance + pooler at the LimitRange default limit of 1 CPU each) and a
    # rolling update's surge pod: the resource budget (quota_budget.py) refuses less.
    return {
        "small": tier("2", "4Gi", "8", "8Gi", 1),
        "medium": tier("8", "16Gi", "16", "32Gi", 3),
        "large": tier("32", "64Gi", "64", "128Gi", 10),
    }


class ShardSettings(StrictModel):
    """How tenants are split over shard stacks (see components/model/settings/sharding.py)."""

    # Number of shard stacks the tenants are split over (1-1024); 1: no sharding. Raising it moves about 1/(n+1)
    # of the tenants (components/model/settings/sharding.py).
    count: Annotated[int, Field(ge=1, le=1024)] = 1
    # The shard this stack runs; required when stackRole is `tenants`.
    index: Annotated[int, Field(ge=0)] | None = None
    # The plan warns when a shard registers more resources than this. 1,400: the most whose first `up` (every step
    # rewrites the whole state) stays within 15 minutes on two cores, by the real engine's measured figures
    # (tools/scale/engine_figures.json, docs/scale.md#the-per-step-checkpoint-and-what-the-shard-budget-promises).
    resource_budget: Annotated[int, Field(ge=100)] = 1400
    # Who runs the platform stack and the shards of a split stack: `ci` (CI's deploy workflow) or `operator` (the Pulumi
    # Kubernetes Operator), never both (they share no lock; docs/adr/0032-one-runner-per-shard.md).
    runner: Literal["ci", "operator"] = "ci"


class StackSettings(StrictModel):
    """Everything a stack decides for all of its tenants."""

    # Where the stack runs: `local` (a kind cluster, data in the cluster), `gcp` (GKE, Cloud SQL, Secret
    # Manager, Cloud KMS; needs `tenancy:gcp`) or `aws` (EKS, RDS, Secrets Manager, KMS; needs `tenancy:aws`).
    cloud: Literal["local", "gcp", "aws"] = "local"
    # The cluster's minor version (`1.30` to `1.39`): rendered objects are checked against its API, Pod Security
    # labels pin to it, and admission features that need a newer version (MutatingAdmissionPolicy, 1.36+) follow
    # it. Bump it with the cluster.
    kubernetes_version: str = Field(default="1.34", pattern=_KUBERNETES_VERSION)
    cluster: ClusterSettings = ClusterSettings()
    # The platform's DNS suffix: every tenant owns `<name>.<suffix>` and `<name>-<environment>.<suffix>` without
    # asking (each served by one environment, docs/edge.md), and no tenant may claim another tenant's part of it.
    domain_suffix: Domain
    # Tenant environments this cluster hosts; each becomes a namespace per tenant.
    environments: Annotated[list[DnsLabel], AfterValidator(unique)] = ["dev", "prod"]
    # Environments where people get read access only and writes come from the deployer account.
    read_only_environments: list[DnsLabel] = ["prod"]
    # Namespaces whose pods may reach tenant pods (ingress controllers, gateways, monitoring), with the ports
    # they may use.
    platform_namespaces: list[PlatformNamespace] = []
    dns: DnsSettings = DnsSettings()
    # Holes in tenant isolation and the egress entries tenants may ask for (docs/network.md).
    network: NetworkSettings = NetworkSettings()
    # Named quotas tenants choose with `quota: {tier: <name>}`: each a tenant's total in the stack, split over
    # its environments. Built in: `small`, `medium`, `large`; setting this key replaces them.
    quota_tiers: dict[DnsLabel, QuotaSpec] = Field(default_factory=_default_tiers)
    # The tier of tenants that name no quota; must be a key of `quotaTiers`.
    default_quota_tier: str = "small"
    # How a tenant's quota is split over its environments: a weight per environment, 1 if unset
    # (`{dev: 1, prod: 3}` gives dev a quarter). See components/model/quota_budget.py.
    quota_split: dict[DnsLabel, Annotated[int, Field(ge=1, le=100)]] = {}
    limit_defaults: LimitDefaults = LimitDefaults()
    protection: ProtectionSettings = ProtectionSettings()
    # Node pools by name, each tainted and labelled `tenancy.io/pool=<name>`; tenants choose one with `nodePool`
    # (docs/node-pools.md). The `kind` chooses the model: `gke`, `eks`, `karpenter`, `existing`.
    node_pools: NodePools = {}
    policy: PolicySettings = PolicySettings()
    delivery: DeliverySettings = DeliverySettings()
    # Charts installed into a bare cluster before the platform (components/platform/installs.py).
    installs: InstallSettings = InstallSettings()
    data: DataSettings = DataSettings()
    # The StorageClasses tenants may claim, rendered with reclaim policy Delete (docs/data-and-secrets.md).
    storage: StorageSettings = StorageSettings()
    # What every virtual cluster of the stack gets (components/model/tenant_file/isolation.py).
    virtual_clusters: VirtualClusterSettings = VirtualClusterSettings()
    # How tenants' hostnames are served: Gateway API, TLS, DNS (components/model/settings/edge.py, docs/edge.md).
    edge: EdgeSettings = EdgeSettings()
    # How identity-provider groups become the Kubernetes groups tenant files name (components/model/settings/people.py).
    people: PeopleSettings = PeopleSettings()
    # Directory of tenant files, relative to the project root.
    tenants_dir: str = "tenants"
    # Which part this stack runs: `all`, `platform` or `tenants`. all: everything in one stack (small
    # installs). platform: only cluster-wide parts.
    # tenants: one shard of the tenants, reading the platform stack through a StackReference.
    stack_role: Literal["all", "platform", "tenants"] = "all"
    shards: ShardSettings = ShardSettings()
    # Fully qualified name of the platform stack (`<org>/tenancy/<stack>`), for tenants shards.
    platform_stack: str | None = None
    # For split stacks (`prod-platform`, `prod-shard-3`): the stack whose tenant `stacks:` limits and
    # `overrides:` apply (`prod`). Written by `tenancy shards write`.
    base_stack: DnsLabel | None = None
    gcp: GcpSettings | None = None
    aws: AwsSettings | None = None
    # The file the settings came from, for problems found later against tenants (not a config key).
    _source: str = PrivateAttr(default="the stack config")

    def edge_facts(self) -> EdgeCloud:
        """What this stack's cloud brings to the edge (components/model/settings/edge.py EDGE_CLOUDS)."""
        return edge_cloud(self.cloud)

    @property
    def source(self) -> str:
        """The settings file (`Pulumi.<stack>.yaml`), for problems that name one of its keys."""
        return self._source

    @model_validator(mode="after")
    def _gateway_proxies_are_a_platform_namespace(self) -> StackSettings:
        # Where the Gateway's data plane is in-cluster proxies (kind: Envoy Gateway), their namespace
        # is a platform namespace whether or not the file lists it: `platformNamespaces` stays the
        # one list of namespaces that reach tenant pods, which the network model and admission read.
        # (The isolation policy opens it on the tenant's route ports only: guardrails/network.py.)
        if self.edge_facts().cloud_dns and "edge" not in self.model_fields_set:
            # A cloud stack's edge needs zones, an ACME account (and roles on EKS): without
            # `tenancy:edge` it has none, as before the edge existed (docs/edge.md).
            object.__setattr__(self, "edge", EdgeSettings.off())
        if self.edge.gateway.enabled:
            proxies = self.edge_facts().proxies
            if proxies is not None and proxies[0] not in {ns.name for ns in self.platform_namespaces}:
                # The model is frozen once built; this is part of building it.
                listed = [*self.platform_namespaces, PlatformNamespace(name=proxies[0])]
                object.__setattr__(self, "platform_namespaces", listed)
        return self

    @model_validator(mode="after")
    def _consistent(self) -> StackSettings:
        if self.default_quota_tier not in self.quota_tiers:
            raise ValueError(f"defaultQuotaTier {self.default_quota_tier!r} is not one of quotaTiers")
        if self.stack_role == "tenants":
            if self.shards.index is None or self.shards.index >= self.shards.count:
                raise ValueError(f"stackRole tenants needs shards.index between 0 and {self.shards.count - 1}")
            if self.platform_stack is None:
                raise ValueError("stackRole tenants needs platformStack (the platform stack's full name)")
        # A cloud with an account section of its own (`tenancy:gcp`, `tenancy:aws`) needs it filled in;
        # the section is named after the cloud, so no cloud is named here.
        if self.cloud in type(self).model_fields and getattr(self, self.cloud) is None:
            raise ValueError(f"cloud is {self.cloud} but its account section tenancy:{self.cloud} is missing")
        return self
