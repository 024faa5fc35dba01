"""Stack config model for node pools (`tenancy:nodePools`): one entry per pool name, one model per kind.

A pool is either created by this program (`gke`, `eks`, `karpenter`) or is a set of nodes an
operator already labelled and tainted (`existing`). Each kind has its own strict model, chosen by
`kind`, so a field that means nothing for a kind (`machineType` on a Karpenter pool) is an error
rather than silently ignored. Cloud details that only pools need (instance formats, node roles,
subnets) live here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from components.model.core.fields import DnsLabel, Quantity, StrictModel, unique

CostCode = Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,63}$")]

# GCE machine types: `<family>-<type>[-<vCPUs>][-<variant>]` (e2-standard-4, e2-micro, n2-highmem-8,
# a2-highgpu-1g, c3d-standard-8-lssd) or custom shapes (custom-4-16384, n2-custom-4-16384-ext).
_GCE_MACHINE_TYPE = re.compile(
    r"^(?:[a-z]+\d+[a-z]*-)?custom-\d+-\d+(?:-ext)?$|^[a-z]+\d+[a-z]*-[a-z]+(?:-\d+[a-z]*)?(?:-[a-z]+)?$"
)
# EC2 instance types: `<family>.<size>` (m7i.large, c6gn.16xlarge, m7i-flex.2xlarge, m7i.metal-24xl).
_EC2_SIZE = r"(?:nano|micro|small|medium|large|\d*xlarge|metal(?:-\d+xl)?)"
_EC2_INSTANCE_TYPE = re.compile(rf"^[a-z][a-z0-9-]*\d[a-z0-9-]*\.{_EC2_SIZE}$")
_EC2_FAMILY = re.compile(r"^[a-z][a-z0-9-]*\d[a-z0-9-]*$")
_EC2_SIZE_ONLY = re.compile(rf"^{_EC2_SIZE}$")
# Karpenter and Kubernetes durations such as 30s, 5m, 720h or 1h30m.
_DURATION = r"^([0-9]+(s|m|h))+$"


def _machine_type(value: str) -> str:
    if _EC2_INSTANCE_TYPE.match(value):
        raise ValueError(
            f"{value!r} is an EC2 instance type; a gke pool needs a GCE machine type such as e2-standard-4"
        )
    if not _GCE_MACHINE_TYPE.match(value):
        raise ValueError(
            f"{value!r} is not a GCE machine type (for example e2-standard-4, n2-highmem-8, n2-custom-4-16384)"
        )
    return value


def _instance_type(value: str) -> str:
    if not _EC2_INSTANCE_TYPE.match(value):
        raise ValueError(f"{value!r} is not an EC2 instance type (for example m7i.large, c7g.2xlarge, r6i.metal)")
    return value


def _instance_family(value: str) -> str:
    if not _EC2_FAMILY.match(value):
        raise ValueError(f"{value!r} is not an EC2 instance family (for example m7i, c7g, r6i, m7i-flex)")
    return value


def _instance_size(value: str) -> str:
    if not _EC2_SIZE_ONLY.match(value):
        raise ValueError(f"{value!r} is not an EC2 instance size (for example large, 2xlarge, metal)")
    return value


_CRON = re.compile(r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|\S+( \S+){4})$")


def _cron(value: str) -> str:
    if not _CRON.match(value):
        raise ValueError(f"{value!r} is not a cron schedule (five fields such as '0 7 * * mon-fri', or @daily)")
    return value


GceMachineType = Annotated[str, AfterValidator(_machine_type)]
Ec2InstanceType = Annotated[str, AfterValidator(_instance_type)]
Ec2InstanceFamily = Annotated[str, AfterValidator(_instance_family)]
Ec2InstanceSize = Annotated[str, AfterValidator(_instance_size)]
AwsTags = dict[Annotated[str, Field(min_length=1, max_length=128)], Annotated[str, Field(min_length=1, max_length=256)]]


class _PoolBase(StrictModel):
    """What every pool has: a cost code that reaches node labels and the cloud's billing labels."""

    # Billing code of the pool's nodes (letters, digits, `_`, `-`): node label `tenancy.io/cost-code` and the
    # `cost-code` label or tag on the cloud's instances, so the pool's cost can be charged to whoever uses it.
    cost_code: CostCode


class _AutoscaledPool(_PoolBase):
    """A managed group of nodes scaled by the cluster autoscaler between minNodes and maxNodes."""

    # Most nodes the autoscaler may run in the pool (declared before minNodes, which is checked against it).
    max_nodes: int = Field(default=3, ge=1, le=1000)
    # Fewest nodes the autoscaler keeps (0 lets an idle pool cost nothing; at most maxNodes).
    min_nodes: int = Field(default=0, ge=0, le=1000)
    # Spot capacity is cheaper and may be reclaimed at any time; on-demand is the safe default.
    spot: bool = False
    # Boot disk size of each node in GB (20-65536): images, container layers, logs and emptyDir live there.
    disk_size_gb: int = Field(default=100, ge=20, le=65536)

    @field_validator("min_nodes")
    @classmethod
    def _min_not_above_max(cls, value: int, info: ValidationInfo) -> int:
        maximum = info.data.get("max_nodes")
        if maximum is not None and value > maximum:
            raise ValueError(f"minNodes ({value}) is above maxNodes ({maximum})")
        return value


class GkePool(_AutoscaledPool):
    """A GKE node pool in the stack's cluster (`cluster.name` in `gcp.region`)."""

    # `gke`: a node pool this stack creates in its GKE cluster.
    kind: Literal["gke"]
    # GCE machine type of the nodes, such as `e2-standard-4`, `n2-highmem-8`, `n2-custom-4-16384` (EC2 types are
    # refused).
    machine_type: GceMachineType = "e2-standard-4"
    # Boot disk type: `pd-balanced` (default), `pd-standard` (cheaper, slower), `pd-ssd` or `hyperdisk-balanced`
    # (newer machine series need it).
    disk_type: Literal["pd-standard", "pd-balanced", "pd-ssd", "hyperdisk-balanced"] = "pd-balanced"
    # Zones of the region to place nodes in; None: the cluster's own node locations.
    zones: Annotated[list[Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+[0-9]-[a-z]$")]], Field(min_length=1)] | None = (
        None
    )
    # A least-privilege node service account; None leaves the project's default compute account,
    # which is far broader than nodes need (Google's hardening guide advises against it).
    service_account: Annotated[str, Field(pattern=r"^[a-z][-a-z0-9]{4,28}[a-z0-9]@[a-z][-a-z0-9.:]+$")] | None = None


class EksPool(_AutoscaledPool):
    """An EKS managed node group with a launch template (so cost tags reach the EC2 instances)."""

    # `eks`: an EKS managed node group this stack creates.
    kind: Literal["eks"]
    # EC2 instance types the node group may launch, such as `m7i.large` (several help spot capacity).
    instance_types: Annotated[list[Ec2InstanceType], Field(min_length=1), AfterValidator(unique)] = ["m7i.large"]
    # The node IAM role (worker node, CNI and ECR read policies attached) created with the cluster.
    node_role_arn: Annotated[
        str, Field(pattern=r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9_+=,.@/-]+$", max_length=2048)
    ]
    # Subnets (`subnet-...`) the nodes are launched in, usually the cluster's private subnets.
    subnet_ids: Annotated[
        list[Annotated[str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")]], Field(min_length=1), AfterValidator(unique)
    ]
    # Node image: Amazon Linux 2023 (`AL2023_x86_64_STANDARD`, `AL2023_ARM_64_STANDARD`) or Bottlerocket
    # (`BOTTLEROCKET_x86_64`, `BOTTLEROCKET_ARM_64`); the instance types must match the architecture.
    ami_type: Literal[
        "AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "BOTTLEROCKET_x86_64", "BOTTLEROCKET_ARM_64"
    ] = "AL2023_x86_64_STANDARD"
    # Nodes replaced at once during a version or launch template update.
    max_unavailable: int = Field(default=1, ge=1, le=100)


class KarpenterLimits(StrictModel):
    """The most a Karpenter pool may provision in total; without a limit a pool grows unbounded."""

    cpu: Quantity = "32"
    memory: Quantity = "128Gi"


class DisruptionBudget(StrictModel):
    """How many nodes Karpenter may disrupt at once, optionally only in a scheduled window."""

    # How many nodes may be disrupted at once: a count (`2`) or a share of the pool (`10%`).
    nodes: Annotated[str, Field(pattern=r"^((100|[0-9]{1,2})%|[0-9]+)$")] = "10%"
    # Cron (UTC) for when the budget applies, for `duration` from each start.
    schedule: Annotated[str, AfterValidator(_cron)] | None = None
    # How long the window lasts from each `schedule` start (`8h`, `1h30m`); set together with `schedule`.
    duration: Annotated[str, Field(pattern=r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")] | None = None
    # Disruption reasons the budget limits (`Underutilized`, `Empty`, `Drifted`); None: all of them.
    reasons: list[Literal["Underutilized", "Empty", "Drifted"]] | None = None

    @model_validator(mode="after")
    def _window(self) -> DisruptionBudget:
        if (self.schedule is None) != (self.duration is None):
            raise ValueError("schedule and duration go together: a budget window needs both")
        return self


class Disruption(StrictModel):
    """When Karpenter may remove or replace nodes to save cost."""

    # `WhenEmptyOrUnderutilized` (default): remove empty nodes and replace underused ones with cheaper ones;
    # `WhenEmpty`: only remove empty nodes (fewer pod restarts); `Balanced`: consolidate only where the saving
    # outweighs the disruption.
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"] = "WhenEmptyOrUnderutilized"
    # Wait this long after a pod change before consolidating, so bursts do not churn nodes.
    consolidate_after: Annotated[str, Field(pattern=r"^(([0-9]+(s|m|h))+|Never)$")] = "5m"
    # Limits on how many nodes Karpenter may disrupt at once (default: 10% at any time); at most 50.
    budgets: Annotated[list[DisruptionBudget], Field(min_length=1, max_length=50)] = [DisruptionBudget()]
    # Nodes are replaced after this age so they pick up patched AMIs.
    expire_after: Annotated[str, Field(pattern=r"^(([0-9]+(s|m|h))+|Never)$")] = "720h"


class KarpenterPool(_PoolBase):
    """A Karpenter `NodePool` plus its `EC2NodeClass` on EKS."""

    # `karpenter`: a Karpenter NodePool and EC2NodeClass this stack creates; Karpenter launches nodes for
    # pending pods.
    kind: Literal["karpenter"]
    # IAM role name (not ARN) Karpenter gives the nodes it launches.
    node_role: Annotated[str, Field(pattern=r"^[A-Za-z0-9_+=,.@-]{1,64}$")]
    # `al2023@latest` follows new AMIs (and replaces nodes as they appear); pin one in production.
    ami_alias: Annotated[str, Field(pattern=r"^(al2023|bottlerocket)@(latest|v[0-9][0-9.]*)$", max_length=30)] = (
        "al2023@latest"
    )
    # `on-demand` and/or `spot` (`karpenter.sh/capacity-type`); with both, Karpenter prefers spot where it fits.
    capacity_types: Annotated[
        # `reserved` is left out: it needs capacity reservations selected on the node class.
        list[Literal["spot", "on-demand"]], Field(min_length=1), AfterValidator(unique)
    ] = ["on-demand"]
    # Empty families: the c, m and r categories of generation 3 and newer; empty sizes: any size.
    # Karpenter picks the cheapest type that fits the pending pods within them.
    instance_families: Annotated[list[Ec2InstanceFamily], AfterValidator(unique)] = []
    # EC2 instance sizes allowed (`large`, `2xlarge`, `metal`; `karpenter.k8s.aws/instance-size`).
    instance_sizes: Annotated[list[Ec2InstanceSize], AfterValidator(unique)] = []
    # CPU architectures allowed: `amd64`, `arm64` (images must be built for them).
    architectures: Annotated[list[Literal["amd64", "arm64"]], Field(min_length=1), AfterValidator(unique)] = ["amd64"]
    limits: KarpenterLimits = KarpenterLimits()
    disruption: Disruption = Disruption()
    # Tags that find the cluster's node subnets and security groups; None: the usual
    # `karpenter.sh/discovery: <cluster name>` from the Karpenter getting-started setup.
    subnet_selector: Annotated[AwsTags, Field(min_length=1)] | None = None
    # Tags that find the security groups the nodes get; None: `karpenter.sh/discovery: <cluster name>`.
    security_group_selector: Annotated[AwsTags, Field(min_length=1)] | None = None
    # Size of each node's data volume in GB (20-59000): container images, layers and emptyDir.
    disk_size_gb: int = Field(default=100, ge=20, le=59000)
    # Higher weight pools are tried first when several pools fit a pod.
    weight: int | None = Field(default=None, ge=1, le=100)


class ExistingPool(_PoolBase):
    """Nodes already in the cluster (kind, bare metal) that an operator labels and taints."""

    # `existing`: nodes that are already in the cluster; the program creates nothing and an operator labels and
    # taints them `tenancy.io/pool=<pool>` (docs/node-pools.md).
    kind: Literal["existing"]


_KINDS = ("gke", "eks", "karpenter", "existing")


def _without_kind_tag(value: Any, handler: Callable[[Any], Any]) -> Any:
    """Validate, then drop pydantic's union tag (`gke`) from error locations.

    Without this a bad machine type is reported at `nodePools.shared.gke.machineType`, a path that
    does not exist in the file; with it, at `nodePools.shared.machineType`.
    """
    try:
        return handler(value)
    except ValidationError as error:
        details: list[InitErrorDetails] = []
        for item in error.errors():
            location = item["loc"]
            if location and location[0] in _KINDS:
                location = location[1:]
            details.append(
                InitErrorDetails(
                    # The context (a pattern, a limit) stays, for messages that explain it.
                    type=PydanticCustomError(item["type"], item["msg"], item.get("ctx")),
                    loc=location,
                    input=item["input"],
                )
            )
        raise ValidationError.from_exception_data(error.title, details) from None


NodePoolSettings = Annotated[
    Annotated[GkePool | EksPool | KarpenterPool | ExistingPool, Discriminator("kind")],
    WrapValidator(_without_kind_tag),
]

# GKE node pool names are at most 40 characters and EKS node group names 63. Pulumi names the
# cloud resource `<pool>-gke-<7 random chars>` (`-eks-` for EKS): auto-naming lets a changed pool
# be created before the old one is removed, so tenants' pods always have somewhere to go.
_NAME_LIMITS = {"gke": 40 - len("-gke-") - 7, "eks": 63 - len("-eks-") - 7}


def _pools_fit_cloud(pools: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    """Pool names fit their cloud's name limit; raise with the exact field. Whether the stack's cloud
    runs a kind at all is asked of the cloud (components/model/checks/data.py `pool_problems`)."""
    details: list[InitErrorDetails] = []
    for name, pool in pools.items():
        limit = _NAME_LIMITS.get(pool.kind)
        if limit is not None and len(name) > limit:
            details.append(
                InitErrorDetails(
                    type=PydanticCustomError(
                        "pool_name_length",
                        f"{pool.kind} pool names may have at most {limit} characters (the cloud's limit minus "
                        "the random suffix that lets a changed pool be created before the old one is removed)",
                    ),
                    loc=(name,),
                    input=name,
                )
            )
    if details:
        raise ValidationError.from_exception_data("nodePools", details)
    return pools


# The type of `StackSettings.node_pools`: pools by name, checked against the stack's cloud.
NodePools = Annotated[dict[DnsLabel, NodePoolSettings], AfterValidator(_pools_fit_cloud)]
