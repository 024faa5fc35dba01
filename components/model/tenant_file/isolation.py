"""How hard a tenant environment's isolation is: a namespace (soft) or a virtual cluster (hard).

`isolation: namespace` (the default) gives the environment a namespace in the shared cluster;
`isolation: virtual-cluster` adds a vCluster control plane inside that namespace, so the tenant gets
cluster-scoped objects (CRDs, webhooks, operators) of its own while every host guard rail stays.
The field takes one mode for every environment or a mode per environment, and stacks override it
like any other field. Which to choose: docs/virtual-clusters.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from components.model.core.fields import DnsLabel, Quantity, StrictModel, unique
from components.model.settings.network import EgressTarget

IsolationMode = Literal["namespace", "virtual-cluster"]
VIRTUAL_CLUSTER: IsolationMode = "virtual-cluster"
# One mode for every environment, or `{dev: virtual-cluster}` (environments not named: namespace).
Isolation = IsolationMode | dict[DnsLabel, IsolationMode]


class VirtualClusterSpec(StrictModel):
    """Per-tenant choices about its virtual clusters (`virtualCluster:` in the tenant file)."""

    # Where the tenant's GitOps Kustomization applies: `virtual-cluster` (default: inside it, so the
    # repository may create namespaces and CRDs there) or `namespace` (the host namespace, as without one).
    gitops_target: Literal["virtual-cluster", "namespace"] = "virtual-cluster"
    # The explicit acknowledgement that switching these environments back to `namespace` deletes
    # their virtual cluster and everything stored in it. Without it the switch is refused.
    discard_state: Annotated[list[DnsLabel], AfterValidator(unique)] = []


class VirtualClusterChart(StrictModel):
    """The vCluster Helm chart, pinned. The values schema and keys the tests validate against are
    stored for this version (tests/charts/data/vcluster/<version>/): bump both together."""

    # The chart repository (loft-sh's), or a mirror of it.
    repository: Annotated[str, Field(pattern=r"^https://[^\s]+$")] = "https://charts.loft.sh"
    # The chart's name in that repository (`vcluster`).
    name: str = "vcluster"
    # Exact version: an upgrade of every virtual cluster is a reviewed change to stack config.
    version: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")] = "0.20.0"


# Resources the pinned chart (0.20.0) gives the virtual cluster's pods where the platform's values
# do not, as its values.yaml defaults (Helm merges them under the platform's values): the control
# plane's ephemeral storage, its k8s distro's init containers, and CoreDNS's, which the platform
# keeps in its own CoreDNS manifest (components/vcluster/coredns.py). The quota budget counts them
# (components/model/checks/quota_budget.py); tests/vcluster/test_chart_pods.py holds them to the chart.
CHART_CONTROL_PLANE_EPHEMERAL_STORAGE = {"requests": "400Mi", "limits": "8Gi"}
CHART_DISTRO_INIT_RESOURCES = {
    "requests": {"cpu": "40m", "memory": "64Mi"},
    "limits": {"cpu": "100m", "memory": "256Mi"},
}
CHART_COREDNS_RESOURCES = {"requests": {"cpu": "20m", "memory": "64Mi"}, "limits": {"cpu": "1000m", "memory": "170Mi"}}


class VirtualClusterSettings(StrictModel):
    """`tenancy:virtualClusters`: what the platform gives every virtual cluster of a stack."""

    chart: VirtualClusterChart = VirtualClusterChart()
    # The host API server as the control plane's syncer reaches it (endpoint addresses, like
    # `network.apiServer`). Opened for the control plane pod only; falls back to `network.apiServer`.
    api_server: EgressTarget | None = None
    # Memory request of the virtual control plane (API server, controller manager, syncer in one pod).
    memory_request: Quantity = "256Mi"
    # Memory limit of the control plane; it counts against the tenant's quota like any pod.
    memory_limit: Quantity = "1Gi"
    # CPU request of the control plane (no CPU limit: the LimitRange default applies).
    cpu_request: Quantity = "100m"
    # Where the control plane's own images come from (the chart's `defaultImageRegistry`), e.g. a
    # mirror on the stack's `policy.allowedRegistries`; required when that allow-list is set.
    image_registry: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.:-]*(/[a-z0-9._-]+)*$")] | None = None
    # Size of the state store (the embedded database of the virtual cluster) per environment.
    storage: Quantity = "5Gi"


def isolation_of(isolation: Isolation, environment: str) -> IsolationMode:
    """The mode of one environment: the single mode, or the environment's entry (default namespace)."""
    if isinstance(isolation, str):
        return isolation
    return isolation.get(environment, "namespace")


def virtual_environments(isolation: Isolation, environments: list[str]) -> list[str]:
    """The environments, in order, that get a virtual cluster."""
    return [env for env in environments if isolation_of(isolation, env) == VIRTUAL_CLUSTER]
