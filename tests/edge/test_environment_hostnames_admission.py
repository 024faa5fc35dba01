"""Issue 33, hostnames across environments, played through RBAC and admission on dev, prod and prod-aws.

The attack: a dev admin (a viewer in prod) takes prod's traffic with a more specific dev route
(a longer path for a prod hostname) or a more specific dev ListenerSet under prod's wildcard; the
Gateway merges routes and listeners across namespaces and the most specific match wins. Every
spelling of a name (case, trailing dot, wildcards, deeper labels) is tried. The legitimate twins:
each environment's own names, with any path, are admitted.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.admission.layers import ACME_ADMIN, ACME_DEV, ACME_PROD, Cluster, cluster
from tests.rbac import Subject
from tools.plan.harness import ProgramRun

ROUTES = "gateway.networking.k8s.io/v1/httproutes"
LISTENERSETS = "gateway.networking.k8s.io/v1/listenersets"
CERTIFICATES = "cert-manager.io/v1/certificates"
GROUP = "gateway.networking.k8s.io"
PLATFORM = {"group": GROUP, "kind": "Gateway", "name": "platform", "namespace": "tenancy-gateway"}
PROD_DEPLOYER = Subject("ServiceAccount", "deployer", ACME_PROD)
SUFFIX = {"dev": "tenants.dev.example.com", "prod": "tenants.example.com", "prod-aws": "tenants.aws.example.com"}


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


def route(hostname: str, path: str = "/") -> dict[str, Any]:
    match = {"path": {"type": "PathPrefix", "value": path}}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "takeover"},
        "spec": {
            "parentRefs": [PLATFORM],
            "hostnames": [hostname],
            "rules": [{"matches": [match], "backendRefs": [{"name": "web", "port": 8080}]}],
        },
    }


def listener_set(hostname: str) -> dict[str, Any]:
    listener = {"name": "l0", "hostname": hostname, "port": 443, "protocol": "HTTPS"}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ListenerSet",
        "metadata": {"name": "takeover"},
        "spec": {"parentRef": PLATFORM, "listeners": [listener]},
    }


def _prod_names(suffix: str) -> list[str]:
    return [
        f"acme.{suffix}",
        f"acme-prod.{suffix}",
        "shop.acme-corp.example",
        # More specific than prod's wildcard `*.api.acme-corp.example`.
        "v1.api.acme-corp.example",
        "*.api.acme-corp.example",
    ]


def test_dev_routes_for_prod_names_with_a_more_specific_path_are_denied(stack: Cluster) -> None:
    for name in _prod_names(SUFFIX[stack.stack]):
        outcome = stack.attempt(ACME_ADMIN, "CREATE", ROUTES, route(name, "/api/payments"), ACME_DEV)
        assert outcome.denied_by("tenancy-hostnames-routes", f"route hostname {name} is outside"), (name, outcome)


def test_dev_listener_sets_under_prod_names_are_denied(stack: Cluster) -> None:
    for name in _prod_names(SUFFIX[stack.stack]):
        outcome = stack.attempt(ACME_ADMIN, "CREATE", LISTENERSETS, listener_set(name), ACME_DEV)
        assert outcome.denied_by("tenancy-hostnames-listenersets", f"listener hostname {name} is outside"), name


def test_dev_certificates_for_prod_names_are_denied(stack: Cluster) -> None:
    for name in _prod_names(SUFFIX[stack.stack]):
        certificate = {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": "takeover"},
            "spec": {"secretName": "x", "issuerRef": {"name": "i", "kind": "ClusterIssuer"}, "dnsNames": [name]},
        }
        outcome = stack.attempt(ACME_ADMIN, "CREATE", CERTIFICATES, certificate, ACME_DEV)
        assert outcome.denied_by("tenancy-hostnames-certificates", f"certificate name {name} is outside"), name


@pytest.mark.parametrize(
    "spelling",
    [
        "ACME-DEV.{suffix}",  # case
        "acme-dev.{suffix}.",  # trailing dot
        "*.acme-dev.{suffix}",  # a wildcard over its own name
        "x.acme-dev.{suffix}",  # a label below its own name: no certificate covers it
        "*.{suffix}",  # every tenant
        "*.acme.{suffix}",  # the tenant's subdomain, wildcard
        "x.acme.{suffix}",  # one label below the tenant's subdomain (issue 32: no certificate covers it)
        "acme-dev.{suffix}x",
        "evilacme-dev.{suffix}",
    ],
)
def test_other_spellings_of_a_dev_name_are_denied(stack: Cluster, spelling: str) -> None:
    name = spelling.replace("{suffix}", SUFFIX[stack.stack])
    outcome = stack.attempt(ACME_ADMIN, "CREATE", ROUTES, route(name), ACME_DEV)
    assert outcome.denied_by("tenancy-hostnames-routes", "is outside the domains of tenant acme"), (name, outcome)


def test_prod_cannot_take_dev_names_or_names_deeper_than_its_wildcard(stack: Cluster) -> None:
    suffix = SUFFIX[stack.stack]
    for name in (f"acme-dev.{suffix}", "a.v1.api.acme-corp.example", "*.v1.api.acme-corp.example"):
        outcome = stack.attempt(PROD_DEPLOYER, "CREATE", ROUTES, route(name), ACME_PROD)
        assert outcome.denied_by("tenancy-hostnames-routes", f"route hostname {name} is outside"), (name, outcome)


def test_each_environment_serves_its_own_names_with_any_path(stack: Cluster) -> None:
    suffix = SUFFIX[stack.stack]
    for path in ("/", "/api/payments"):
        dev = stack.attempt(ACME_ADMIN, "CREATE", ROUTES, route(f"acme-dev.{suffix}", path), ACME_DEV)
        assert dev.stopped_by is None, dev.decision.denials
        assert (
            stack.attempt(ACME_ADMIN, "CREATE", LISTENERSETS, listener_set(f"acme-dev.{suffix}"), ACME_DEV).stopped_by
            is None
        )
        for name in _prod_names(suffix):
            prod = stack.attempt(PROD_DEPLOYER, "CREATE", ROUTES, route(name, path), ACME_PROD)
            assert prod.stopped_by is None, (name, prod.decision.denials)
