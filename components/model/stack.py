"""The stack settings model: everything under the `tenancy:` namespace of `Pulumi.<stack>.yaml`.

Stack config is the one place where environments differ (dev on a local kind cluster, prod on
GKE), so it is validated as strictly as tenant files: unknown keys and bad values are errors that
name the key, reported all at once before anything is registered.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, PrivateAttr, model_validator

from components.model.admission import PolicySettings
from components.model.clouds import AwsSettings, GcpSettings
from components.model.data import DataSettings
from components.model.delivery import DeliverySettings
from components.model.fields import (
    ComputeAmounts,
    DnsLabel,
    Domain,
    QuotaSpec,
    StrictModel,
    unique,
)
from components.model.installs import InstallSettings
from components.model.isolation import VirtualClusterSettings
from components.model.network import NetworkSettings
from components.model.pools import NodePools
from components.model.quota_objects import SMALL_OBJECT_COUNTS
from components.model.storage import StorageSettings

# ValidatingAdmissionPolicy is GA from 1.30; kubernetes-validate ships schemas up to 1.37.
_KUBERNETES_VERSION = r"^1\.(3[0-9])$"


class ClusterSettings(StrictModel):
    """How the program reaches the cluster: one Kubernetes provider shared by all tenants."""

    name: DnsLabel = "tenancy"
    # kubeconfig context; None means the current context (CI's credentials). Required where the
    # cloud reaches the cluster through the kubeconfig alone (local: components/platform/providers.py).
    context: str | None = None
    # The cluster's own untainted node pool (GKE node pool, EKS managed node group), not managed by
    # the stack: every pool the stack creates is tainted, so CoreDNS, Karpenter, External Secrets and
    # Flux run here. Required when the stack creates pools (gke, eks, karpenter) (stack_checks.system_pool_problems);
    # scripts/bootstrap.sh checks it exists without taints (docs/bootstrap.md).
    system_pool: DnsLabel | None = None


class PlatformNamespace(StrictModel):
    """A platform namespace whose pods may reach tenant pods (ingress controller, monitoring)."""

    name: DnsLabel
    # Empty means every port: an ingress controller must reach whatever port a tenant serves.
    ports: list[Annotated[int, Field(ge=1, le=65535)]] = []


class DnsSettings(StrictModel):
    """Where cluster DNS runs, so tenant egress can be opened to it and nothing else."""

    namespace: DnsLabel = "kube-system"
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
    """How tenants are split over shard stacks (see components/model/sharding.py)."""

    count: Annotated[int, Field(ge=1, le=1024)] = 1
    # The shard this stack runs; required when stackRole is `tenants`.
    index: Annotated[int, Field(ge=0)] | None = None
    # The plan warns when a shard registers more resources than this (previews slow down past it).
    resource_budget: Annotated[int, Field(ge=100)] = 2000
    # Who runs the platform stack and the shards of a split stack: CI's deploy workflow or the Pulumi
    # Kubernetes Operator, never both (they share no lock; docs/adr/0032-one-runner-per-shard.md).
    runner: Literal["ci", "operator"] = "ci"


class StackSettings(StrictModel):
    """Everything a stack decides for all of its tenants."""

    cloud: Literal["local", "gcp", "aws"] = "local"
    kubernetes_version: str = Field(default="1.34", pattern=_KUBERNETES_VERSION)
    cluster: ClusterSettings = ClusterSettings()
    domain_suffix: Domain
    # Tenant environments this cluster hosts; each becomes a namespace per tenant.
    environments: Annotated[list[DnsLabel], AfterValidator(unique)] = ["dev", "prod"]
    # Environments where people get read access only and writes come from the deployer account.
    read_only_environments: list[DnsLabel] = ["prod"]
    platform_namespaces: list[PlatformNamespace] = []
    dns: DnsSettings = DnsSettings()
    # Holes in tenant isolation and the egress entries tenants may ask for (docs/network.md).
    network: NetworkSettings = NetworkSettings()
    quota_tiers: dict[DnsLabel, QuotaSpec] = Field(default_factory=_default_tiers)
    default_quota_tier: str = "small"
    # How a tenant's quota is split over its environments: a weight per environment, 1 if unset
    # (`{dev: 1, prod: 3}` gives dev a quarter). See components/model/quota_budget.py.
    quota_split: dict[DnsLabel, Annotated[int, Field(ge=1, le=100)]] = {}
    limit_defaults: LimitDefaults = LimitDefaults()
    protection: ProtectionSettings = ProtectionSettings()
    node_pools: NodePools = {}
    policy: PolicySettings = PolicySettings()
    delivery: DeliverySettings = DeliverySettings()
    # Charts installed into a bare cluster before the platform (components/platform/installs.py).
    installs: InstallSettings = InstallSettings()
    data: DataSettings = DataSettings()
    # The StorageClasses tenants may claim, rendered with reclaim policy Delete (docs/data-and-secrets.md).
    storage: StorageSettings = StorageSettings()
    # What every virtual cluster of the stack gets (components/model/isolation.py).
    virtual_clusters: VirtualClusterSettings = VirtualClusterSettings()
    tenants_dir: str = "tenants"
    # all: everything in one stack (small installs). platform: only cluster-wide parts.
    # tenants: one shard of the tenants, reading the platform stack through a StackReference.
    stack_role: Literal["all", "platform", "tenants"] = "all"
    shards: ShardSettings = ShardSettings()
    # Fully qualified name of the platform stack (`<org>/tenancy/<stack>`), for tenants shards.
    platform_stack: str | None = None
    # For split stacks (`prod-platform`, `prod-shard-3`): the stack whose tenant `stacks:` limits and
    # `overrides:` apply (`prod`). Written by `python -m tools.shards write`.
    base_stack: DnsLabel | None = None
    gcp: GcpSettings | None = None
    aws: AwsSettings | None = None
    # The file the settings came from, for problems found later against tenants (not a config key).
    _source: str = PrivateAttr(default="the stack config")

    @property
    def source(self) -> str:
        """The settings file (`Pulumi.<stack>.yaml`), for problems that name one of its keys."""
        return self._source

    @model_validator(mode="after")
    def _consistent(self) -> StackSettings:
        unknown_ro = sorted(set(self.read_only_environments) - set(self.environments))
        if unknown_ro:
            raise ValueError(f"readOnlyEnvironments names environments not in environments: {', '.join(unknown_ro)}")
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
