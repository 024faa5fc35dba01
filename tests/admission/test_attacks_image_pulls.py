"""MTB-PL1-CC-DI-1, always pull: a tenant cannot start a private image another tenant's pull
left on a shared node, because every tenant container must pull with `imagePullPolicy: Always`.

Played through RBAC and admission on dev, prod and prod-aws, with the API server's defaulting of
`imagePullPolicy` applied before admission (tests/api_defaults.py), as kubectl-mtb's
`require_always_pull_image` does it: a pod asking for `Never` must be refused.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.admission.layers import WRITERS, Cluster, cluster, stack_policy
from tests.admission.test_attacks_workloads import pod
from tests.rbac import Subject
from tests.support import kubernetes_objects, objects_of_kind, plan
from tests.vcluster.helpers import stack_virtual_clusters
from tools.plan.harness import ProgramRun

PODS = "/v1/pods"
CACHED_PULL = "must set imagePullPolicy: Always"


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


def with_pull(policy: str | None, image: str = "registry.acme-corp.example/acme/app:1.0.0") -> dict[str, Any]:
    obj = pod()
    container = obj["spec"]["containers"][0]
    container["image"] = image
    if policy is None:
        del container["imagePullPolicy"]
    else:
        container["imagePullPolicy"] = policy
    return obj


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
@pytest.mark.parametrize("policy", ["Never", "IfNotPresent", None])
def test_pods_that_may_start_a_cached_image_are_denied(
    stack: Cluster, who: Subject, namespace: str, policy: str | None
) -> None:
    """`None`: a tagged image with no policy, which the API server defaults to IfNotPresent."""
    outcome = stack.attempt(who, "CREATE", PODS, with_pull(policy), namespace)
    assert outcome.denied_by("tenancy-workloads", f"container app {CACHED_PULL}"), outcome


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_pods_that_always_pull_are_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    assert stack.attempt(who, "CREATE", PODS, with_pull("Always"), namespace).stopped_by is None
    # An untagged image defaults to Always, so it passes without the field.
    untagged = with_pull(None, image="registry.acme-corp.example/acme/app")
    assert stack.attempt(who, "CREATE", PODS, untagged, namespace).stopped_by is None


def test_init_and_debug_containers_are_checked_too(stack: Cluster) -> None:
    who, namespace = WRITERS[0]
    init = with_pull("Always")
    sidecar = copy.deepcopy(init["spec"]["containers"][0]) | {"name": "migrate", "imagePullPolicy": "IfNotPresent"}
    init["spec"]["initContainers"] = [sidecar]
    assert stack.attempt(who, "CREATE", PODS, init, namespace).denied_by("tenancy-workloads", "container migrate")


def test_a_stack_may_turn_the_rule_off() -> None:
    relaxed = cluster(plan("prod", policy=stack_policy("prod", requireAlwaysPull=False)))
    for who, namespace in WRITERS:
        assert relaxed.attempt(who, "CREATE", PODS, with_pull("IfNotPresent"), namespace).stopped_by is None


def test_platform_rendered_pods_always_pull(dev_plan: ProgramRun) -> None:
    """The platform's own workloads in tenant namespaces must pass the rule it sets."""
    containers = [
        c for d in objects_of_kind(dev_plan, "Deployment") for c in d["spec"]["template"]["spec"]["containers"]
    ]
    assert containers and {c["imagePullPolicy"] for c in containers} == {"Always"}
    databases = [o for o in kubernetes_objects(dev_plan) if o["kind"] in {"Cluster", "MariaDB"}]
    assert databases and {d["spec"]["imagePullPolicy"] for d in databases} == {"Always"}
    poolers = objects_of_kind(dev_plan, "Pooler")
    assert all(p["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always" for p in poolers)


# --- Issue 43: image volumes, under the same registry and pull rules as container images ------

REGISTRY = "registry.acme-corp.example"


def with_image_volume(reference: str, pull: str | None) -> dict[str, Any]:
    """A pod mounting an OCI image read-only; `None`: the field left out (the API server defaults it
    before admission: Always for `:latest`, IfNotPresent otherwise, tests/api_defaults.py)."""
    obj = with_pull("Always")
    source: dict[str, Any] = {"reference": reference, **({"pullPolicy": pull} if pull else {})}
    obj["spec"]["volumes"] = [{"name": "model", "image": source}]
    obj["spec"]["containers"][0]["volumeMounts"] = [{"name": "model", "mountPath": "/model", "readOnly": True}]
    return obj


@pytest.fixture(scope="module")
def listed() -> Cluster:
    # The virtual clusters' images from a mirror on the list (the program refuses the stack otherwise).
    mirror = stack_virtual_clusters("prod", imageRegistry=f"{REGISTRY}/mirror")
    return cluster(plan("prod", policy=stack_policy("prod", allowedRegistries=[REGISTRY]), virtualClusters=mirror))


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_an_image_volume_from_an_allowed_registry_that_always_pulls_is_admitted(
    listed: Cluster, who: Subject, namespace: str
) -> None:
    """Pod Security `restricted` admits image volumes (on by default from 1.35); so does the platform."""
    outcome = listed.attempt(who, "CREATE", PODS, with_image_volume(f"{REGISTRY}/acme/model:v1", "Always"), namespace)
    assert outcome.stopped_by is None, outcome.decision.denials


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
@pytest.mark.parametrize("pull", ["IfNotPresent", "Never", None])
def test_an_image_volume_that_may_start_from_the_cache_is_denied(
    listed: Cluster, who: Subject, namespace: str, pull: str | None
) -> None:
    obj = with_image_volume(f"{REGISTRY}/acme/model:v1", pull)
    outcome = listed.attempt(who, "CREATE", PODS, obj, namespace)
    assert outcome.denied_by("tenancy-workloads", "image volume model must set pullPolicy: Always"), outcome


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_an_image_volume_from_another_registry_is_denied(listed: Cluster, who: Subject, namespace: str) -> None:
    for reference in ("ghcr.io/evil/model:v1", f"{REGISTRY}.evil.example/model:v1", "model:latest"):
        outcome = listed.attempt(who, "CREATE", PODS, with_image_volume(reference, "Always"), namespace)
        assert outcome.denied_by("tenancy-workloads", f"image {reference} is not from an allowed registry"), outcome
