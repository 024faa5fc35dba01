"""The pods a virtual cluster puts in its host namespace, as chart 0.20.0 and its syncer write them
(tests/vcluster/chart_pods.py), played through the host's admission chain and Pod Security
`restricted` the way the operator contracts are (tests/operators/test_operator_contracts.py play:
defaulting, LimitRanger, mutating then validating policies, Pod Security), on every example stack.
The platform must admit its own virtual clusters: a refused CoreDNS is a virtual cluster without DNS.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from components.model.catalog.stack_config import parse_settings
from components.model.checks.quota_budget import virtual_cluster_placement
from components.model.core.errors import ConfigurationError
from components.model.core.fields import quantity_value
from components.model.tenant_file.isolation import (
    CHART_CONTROL_PLANE_EPHEMERAL_STORAGE,
    CHART_COREDNS_RESOURCES,
    CHART_DISTRO_INIT_RESOURCES,
)
from components.vcluster.values import SYNCER_ACCOUNT
from tests.cel_admission import AdmissionChain, Request
from tests.operators.limit_ranger import limit_ranged
from tests.operators.test_operator_contracts import play
from tests.operators.writes import SA_GROUPS, STATEFULSET_CONTROLLER, Write
from tests.support import kubernetes_objects, objects_of_kind
from tests.vcluster.chart_pods import (
    DEFAULTS,
    SOURCE,
    control_plane_pod,
    coredns_deployment,
    coredns_virtual_pod,
    synced_to_host,
)
from tests.vcluster.helpers import hard_tenant, run_tenants
from tools.plan.harness import ProgramRun, stack_config

POOLED = {"name": "app", "engine": "postgres", "version": "16", "poolSize": 20}
STACKS = {"dev": "dev_plan", "prod": "prod_plan", "prod-aws": "prod_aws_plan"}


def _releases(run: ProgramRun) -> list[dict[str, Any]]:
    return [
        r
        for r in objects_of_kind(run, "HelmRelease")
        if (r["spec"].get("chart") or {}).get("spec", {}).get("chart") == "vcluster"
    ]


def _as(identity: str, pod: dict[str, Any], what: str, source: str) -> Write:
    namespace = identity.split(":")[2]
    groups = [*SA_GROUPS, f"system:serviceaccounts:{namespace}"]
    request = Request("CREATE", "/v1/pods", "Pod", object=pod, username=identity, groups=groups)
    return Write("vcluster", what, source, request)


def host_writes(release: dict[str, Any], values: dict[str, Any] | None = None) -> list[Write]:
    """The control plane pod (StatefulSet controller) and CoreDNS's host copy (the syncer)."""
    namespace = release["metadata"]["namespace"]
    name = release["spec"].get("releaseName", release["metadata"]["name"])
    values = release["spec"]["values"] if values is None else values
    coredns = synced_to_host(coredns_virtual_pod(values), values, namespace, name)
    syncer = f"system:serviceaccount:{namespace}:{SYNCER_ACCOUNT}"
    return [
        _as(
            STATEFULSET_CONTROLLER,
            control_plane_pod(values, namespace, name),
            f"control plane pod in {namespace}",
            f"{SOURCE} chart/templates/statefulset.yaml",
        ),
        _as(
            syncer,
            coredns,
            f"CoreDNS pod in {namespace}",
            f"{SOURCE} chart/templates/coredns-configmap.yaml, pkg/controllers/resources/pods/translate/translator.go",
        ),
    ]


def _refusals(run: ProgramRun, writes: list[Write]) -> list[str]:
    chain = AdmissionChain(kubernetes_objects(run))
    refused = []
    for write in writes:
        decision, pod_security = play(run, write, chain)
        if not decision.allowed or pod_security:
            refused.append(f"{write.what}: {decision.denials + pod_security}")
    return refused


@pytest.mark.parametrize("stack", list(STACKS))
def test_the_virtual_clusters_pods_are_admitted_on_the_host(stack: str, request: pytest.FixtureRequest) -> None:
    run: ProgramRun = request.getfixturevalue(STACKS[stack])
    releases = _releases(run)
    assert len(releases) == 2, "tenants/operator-lab.yaml has two virtual clusters on every stack"
    writes = [w for release in releases for w in host_writes(release)]
    assert _refusals(run, writes) == []


def test_the_charts_own_coredns_would_be_refused(dev_plan: ProgramRun) -> None:
    """Without the platform's manifest the chart's CoreDNS pulls IfNotPresent and has no seccomp
    profile: the host's workload rule and Pod Security both refuse it (issue 34's defect)."""
    [release, *_] = _releases(dev_plan)
    values = copy.deepcopy(release["spec"]["values"])
    del values["controlPlane"]["coredns"]
    [_, coredns] = host_writes(release, values)
    [refusal] = _refusals(dev_plan, [coredns])
    assert "imagePullPolicy: Always" in refusal
    assert "seccompProfile" in refusal


def test_the_platforms_coredns_is_the_charts_but_for_two_fields(dev_plan: ProgramRun) -> None:
    """The overwrite differs from the chart's manifest exactly where the host requires it."""
    [release, *_] = _releases(dev_plan)
    ours = coredns_deployment(release["spec"]["values"])
    values = copy.deepcopy(release["spec"]["values"])
    del values["controlPlane"]["coredns"]
    charts = coredns_deployment(values)
    assert charts["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "securityContext" not in charts["spec"]["template"]["spec"]
    charts["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Always"
    charts["spec"]["template"]["spec"]["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    assert ours == charts


def test_the_control_plane_is_the_charts_pod(dev_plan: ProgramRun) -> None:
    """Spot checks against the template: the pro image under the chart's tag, every init container
    pulled Always and hardened, the platform's syncer account, the state store's claim."""
    [release, *_] = _releases(dev_plan)
    pod = control_plane_pod(release["spec"]["values"], release["metadata"]["namespace"], "vcluster")
    spec = pod["spec"]
    assert spec["containers"][0]["image"].endswith("loft-sh/vcluster-pro:0.20.0")
    assert [c["name"] for c in spec["initContainers"]] == ["vcluster-copy", "kube-controller-manager", "kube-apiserver"]
    assert {c["imagePullPolicy"] for c in [*spec["initContainers"], *spec["containers"]]} == {"Always"}
    assert spec["serviceAccountName"] == SYNCER_ACCOUNT
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-vcluster-0"}} in spec["volumes"]


def test_an_init_container_left_at_the_charts_pull_policy_is_refused(dev_plan: ProgramRun) -> None:
    """Guards the admission test: the chart leaves the distro's pull policies empty unless set, and
    the API server then defaults a tagged image to IfNotPresent, which the host refuses."""
    [release, *_] = _releases(dev_plan)
    values = copy.deepcopy(release["spec"]["values"])
    del values["controlPlane"]["distro"]["k8s"]["apiServer"]["imagePullPolicy"]
    [control_plane, _] = host_writes(release, values)
    [refusal] = _refusals(dev_plan, [control_plane])
    assert "kube-apiserver" in refusal


def _quota_usage(pod: dict[str, Any]) -> dict[str, Decimal]:
    """What a pod counts against a ResourceQuota: per resource the larger of its containers' sum
    and its largest init container (k8s.io/kubernetes pkg/api/v1/resource PodRequests/PodLimits)."""
    usage: dict[str, Decimal] = {"pods": Decimal(1)}
    for kind in ("requests", "limits"):
        totals: dict[str, Decimal] = {}
        for container in pod["spec"]["containers"]:
            for name, value in (container.get("resources") or {}).get(kind, {}).items():
                totals[name] = totals.get(name, Decimal(0)) + quantity_value(value)
        for container in pod["spec"].get("initContainers") or []:
            for name, value in (container.get("resources") or {}).get(kind, {}).items():
                totals[name] = max(totals.get(name, Decimal(0)), quantity_value(value))
        usage |= {f"{kind}.{name}": amount for name, amount in totals.items()}
    return usage


@pytest.mark.parametrize("stack", list(STACKS))
def test_the_quota_budget_counts_the_virtual_clusters_pods(stack: str, request: pytest.FixtureRequest) -> None:
    """The plan's budget (components/model/checks/quota_budget.py) reserves at least what the chart's
    pods take after the LimitRanger, for every amount the quota caps: else the quota refuses CoreDNS
    or the control plane although the plan passed."""
    run: ProgramRun = request.getfixturevalue(STACKS[stack])
    settings = parse_settings(stack_config(stack)[0], f"Pulumi.{stack}.yaml")
    for release in _releases(run):
        namespace = release["metadata"]["namespace"]
        [limits] = objects_of_kind(run, "LimitRange", namespace)
        [quota] = objects_of_kind(run, "ResourceQuota", namespace)
        used: dict[str, Decimal] = {}
        for write in host_writes(release):
            assert write.request.object is not None
            for key, amount in _quota_usage(limit_ranged(write.request.object, limits)).items():
                used[key] = used.get(key, Decimal(0)) + amount
        reserved = virtual_cluster_placement(settings.virtual_clusters, settings.limit_defaults).amounts
        short = {
            key: (str(amount), str(reserved.get(key, 0)))
            for key, amount in used.items()
            if key in quota["spec"]["hard"] and amount > reserved.get(key, Decimal(0))
        }
        assert short == {}, namespace


def test_the_models_chart_resources_are_the_charts_defaults() -> None:
    """components/model/tenant_file/isolation.py holds the chart defaults the budget counts: they
    must be the pinned chart's, so a chart bump that changes them fails here."""
    cp = DEFAULTS["controlPlane"]
    assert cp["coredns"]["deployment"]["resources"] == CHART_COREDNS_RESOURCES
    assert cp["distro"]["k8s"]["resources"] == CHART_DISTRO_INIT_RESOURCES
    resources = cp["statefulSet"]["resources"]
    assert {kind: resources[kind]["ephemeral-storage"] for kind in ("requests", "limits")} == (
        CHART_CONTROL_PLANE_EPHEMERAL_STORAGE
    )


def test_a_small_tier_cannot_hold_a_virtual_cluster_beside_a_pooled_database(tmp_path: Path) -> None:
    """The budget's verdict docs/virtual-clusters.md states: CoreDNS's CPU limit and the chart's
    ephemeral storage do not fit the small tier's share beside a pooled database; medium does."""
    tenant = hard_tenant(quota={"tier": "small"}, databases=[POOLED])
    with pytest.raises(ConfigurationError) as caught:
        run_tenants(tmp_path / "small", tenant)
    problems = [str(p) for p in caught.value.problems]
    assert problems and all("quota.tier" in p and "virtual cluster's control plane and CoreDNS" in p for p in problems)
    run_tenants(tmp_path / "medium", hard_tenant(quota={"tier": "medium"}, databases=[POOLED]))
