"""Tenant routes and ListenerSets, played through RBAC and admission on dev, prod and prod-aws.

The attacks: a route for another tenant's hostname, a wildcard wider than the tenant's names, a
route or ListenerSet attached to a gateway the tenant should not use (another Gateway, a Gateway
without a namespace, another namespace's ListenerSet, a Service), and a route from a namespace that
is not a tenant's. Each has its legitimate twin, admitted; the platform's own rendered routes and
ListenerSets pass the platform's own admission.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.admission.layers import ACME_ADMIN, ACME_PROD, WRITERS, Cluster, cluster, platform_identity
from tests.cel_admission import _selector_matches
from tests.rbac import Subject
from tests.support import kubernetes_objects, objects_of_kind
from tools.plan.harness import ProgramRun

ROUTES = "gateway.networking.k8s.io/v1/httproutes"
LISTENERSETS = "gateway.networking.k8s.io/v1/listenersets"
GROUP = "gateway.networking.k8s.io"
PLATFORM = {"group": GROUP, "kind": "Gateway", "name": "platform", "namespace": "tenancy-gateway"}
OWN = "shop.acme-corp.example"  # in acme's file on every stack, served by prod
SUFFIX = {"dev": "tenants.dev.example.com", "prod": "tenants.example.com", "prod-aws": "tenants.aws.example.com"}


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


def route(hostnames: list[str], *parents: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web"},
        "spec": {
            "parentRefs": list(parents) or [PLATFORM],
            "hostnames": hostnames,
            "rules": [{"backendRefs": [{"name": "web", "port": 8080}]}],
        },
    }


def listener_set(parent: dict[str, Any], hostname: str = OWN) -> dict[str, Any]:
    listener = {"name": "shop", "hostname": hostname, "port": 443, "protocol": "HTTPS"}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ListenerSet",
        "metadata": {"name": "web"},
        "spec": {"parentRef": parent, "listeners": [listener]},
    }


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_routes_to_the_platform_gateway_for_own_names_are_admitted(
    stack: Cluster, who: Subject, namespace: str
) -> None:
    own = stack.own_hostname(namespace)
    assert stack.attempt(who, "CREATE", ROUTES, route([own]), namespace).stopped_by is None
    if namespace != ACME_PROD:
        return
    # prod serves the tenant's domains (tenants/acme.yaml), through its ListenerSet.
    own_set = {"group": GROUP, "kind": "ListenerSet", "name": "tenant-domains"}
    assert stack.attempt(who, "CREATE", ROUTES, route([OWN], own_set), namespace).stopped_by is None
    explicit = {**own_set, "namespace": namespace}
    assert stack.attempt(who, "CREATE", ROUTES, route([OWN], PLATFORM, explicit), namespace).stopped_by is None


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_routes_for_names_that_are_not_the_tenants_are_denied(stack: Cluster, who: Subject, namespace: str) -> None:
    foreign = f"genomics-lab.{SUFFIX[stack.stack]}"
    outcome = stack.attempt(who, "CREATE", ROUTES, route([foreign]), namespace)
    assert outcome.denied_by("tenancy-hostnames-routes", f"route hostname {foreign} is outside"), outcome
    # Wildcard widening: every tenant's names at once.
    wider = f"*.{SUFFIX[stack.stack]}"
    assert stack.attempt(who, "CREATE", ROUTES, route([wider]), namespace).denied_by("tenancy-hostnames-routes")
    # No hostnames: every name of the listener.
    assert stack.attempt(who, "CREATE", ROUTES, route([]), namespace).denied_by("tenancy-hostnames-routes")


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
@pytest.mark.parametrize(
    "parent",
    [
        # Another Gateway of the cluster (say, an internal one admitting routes from all namespaces).
        {**PLATFORM, "name": "internal"},
        {**PLATFORM, "namespace": "kube-system"},
        # Without a namespace a Gateway parentRef means the route's own namespace.
        {"group": GROUP, "kind": "Gateway", "name": "platform"},
        # Another tenant's ListenerSet.
        {"group": GROUP, "kind": "ListenerSet", "name": "tenant-domains", "namespace": "tenant-genomics-lab-prod"},
        # Mesh attachment to a Service.
        {"group": "", "kind": "Service", "name": "web", "namespace": "tenancy-gateway"},
    ],
)
def test_routes_to_other_parents_are_denied(
    stack: Cluster, who: Subject, namespace: str, parent: dict[str, Any]
) -> None:
    own = f"acme.{SUFFIX[stack.stack]}"
    outcome = stack.attempt(who, "CREATE", ROUTES, route([own], PLATFORM, parent), namespace)
    assert outcome.denied_by("tenancy-gateway-parents-routes", f"parent {parent['name']} is not the platform Gateway")


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_listener_sets_attach_to_the_platform_gateway_only(stack: Cluster, who: Subject, namespace: str) -> None:
    own = stack.own_hostname(namespace)
    assert stack.attempt(who, "CREATE", LISTENERSETS, listener_set(PLATFORM, own), namespace).stopped_by is None
    for parent in ({**PLATFORM, "name": "internal"}, {"name": "platform"}, {**PLATFORM, "kind": "ListenerSet"}):
        outcome = stack.attempt(who, "CREATE", LISTENERSETS, listener_set(parent, own), namespace)
        assert outcome.denied_by("tenancy-gateway-parents-listenersets", "platform Gateway tenancy-gateway/platform")


def test_an_update_cannot_move_a_route_to_another_gateway(stack: Cluster) -> None:
    own = f"acme.{SUFFIX[stack.stack]}"
    old = route([own])
    moved = route([own], {**PLATFORM, "name": "internal"})
    outcome = stack.attempt(ACME_ADMIN, "UPDATE", ROUTES, moved, "tenant-acme-dev", old=old)
    assert outcome.denied_by("tenancy-gateway-parents-routes")


def test_the_platforms_own_routes_and_listener_sets_are_admitted(stack: Cluster) -> None:
    rendered = [o for o in kubernetes_objects(stack.run) if o["kind"] in ("HTTPRoute", "ListenerSet")]
    # GKE serves no ListenerSet (Gateway API v1.4.0 on GKE 1.34): tenant domains are Gateway listeners.
    expected = {"HTTPRoute"} if stack.stack == "prod" else {"HTTPRoute", "ListenerSet"}
    assert {o["kind"] for o in rendered} == expected
    for obj in rendered:
        resource = ROUTES if obj["kind"] == "HTTPRoute" else LISTENERSETS
        outcome = stack.attempt(platform_identity(stack.stack), "CREATE", resource, obj, obj["metadata"]["namespace"])
        assert outcome.stopped_by is None, (obj["metadata"], outcome)


def test_only_tenant_namespaces_may_attach_to_the_gateway(any_stack_plan: ProgramRun) -> None:
    # Admission only covers tenant namespaces; the Gateway itself refuses routes and ListenerSets
    # from any other namespace (Gateway API AllowedRoutes/AllowedListeners `from: Selector`).
    (gateway,) = objects_of_kind(any_stack_plan, "Gateway", "tenancy-gateway")
    # GKE's `tenant-domains` listener admits the same namespaces as `https` (ADR 0041).
    selectors = [listener["allowedRoutes"]["namespaces"] for listener in gateway["spec"]["listeners"]]
    if "allowedListeners" in gateway["spec"]:
        selectors.append(gateway["spec"]["allowedListeners"]["namespaces"])
    namespaces = {
        n["metadata"]["name"]: n["metadata"].get("labels", {}) for n in objects_of_kind(any_stack_plan, "Namespace")
    }
    tenants = [labels for name, labels in namespaces.items() if name.startswith("tenant-")]
    others = [labels for name, labels in namespaces.items() if not name.startswith("tenant-")]
    assert tenants and others
    for allowed in selectors:
        assert allowed["from"] == "Selector"
        assert all(_selector_matches(allowed["selector"], labels) for labels in tenants)
        assert not any(_selector_matches(allowed["selector"], labels) for labels in others)
        # A platform namespace the plan does not render (kube-system, monitoring) has no tenant label either.
        assert not _selector_matches(allowed["selector"], {"kubernetes.io/metadata.name": "monitoring"})
