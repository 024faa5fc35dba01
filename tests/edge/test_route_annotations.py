"""Issue 33: route and ListenerSet annotations governed like an Ingress's, on dev, prod and prod-aws.

The attack: an HTTPRoute (or GRPCRoute, TLSRoute, ListenerSet) carrying external-dns
`hostname` or `target` with another tenant's name, the whole suffix or an address: external-dns
publishes what a route's annotations say (external-dns v0.20.0 source/gateway.go). The
legitimate twins: the allow-listed `ttl`, ungoverned prefixes, and the platform's own routes.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.admission.layers import ACME_ADMIN, ACME_DEV, Cluster, cluster
from tools.plan.harness import ProgramRun

GROUP = "gateway.networking.k8s.io"
PLATFORM = {"group": GROUP, "kind": "Gateway", "name": "platform", "namespace": "tenancy-gateway"}
POLICY = "tenancy-route-annotations"


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


def _object(stack: Cluster, kind: str, annotations: dict[str, str]) -> tuple[str, dict[str, Any]]:
    own = stack.own_hostname(ACME_DEV)
    metadata = {"name": "web", "annotations": annotations}
    if kind == "ListenerSet":
        listener = {"name": "l0", "hostname": own, "port": 443, "protocol": "HTTPS"}
        spec: dict[str, Any] = {"parentRef": PLATFORM, "listeners": [listener]}
        return f"{GROUP}/v1/listenersets", {
            "apiVersion": f"{GROUP}/v1",
            "kind": kind,
            "metadata": metadata,
            "spec": spec,
        }
    spec = {"parentRefs": [PLATFORM], "hostnames": [own], "rules": [{"backendRefs": [{"name": "web", "port": 8080}]}]}
    plural = {"HTTPRoute": "httproutes", "GRPCRoute": "grpcroutes"}[kind]
    return f"{GROUP}/v1/{plural}", {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": metadata, "spec": spec}


@pytest.mark.parametrize("kind", ["HTTPRoute", "GRPCRoute", "ListenerSet"])
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("external-dns.alpha.kubernetes.io/hostname", "genomics-lab.tenants.example.com"),
        ("external-dns.alpha.kubernetes.io/hostname", "*.tenants.example.com"),
        ("external-dns.alpha.kubernetes.io/hostname", "bank.example.com."),
        ("external-dns.alpha.kubernetes.io/target", "203.0.113.7"),
        ("external-dns.alpha.kubernetes.io/target", "evil.example.com"),
        ("external-dns.alpha.kubernetes.io/internal-hostname", "db.internal.example"),
        ("external-dns.alpha.kubernetes.io/Hostname", "bank.example.com"),
        ("external-dns.alpha.kubernetes.io/alias", "true"),
        ("external-dns.alpha.kubernetes.io/set-identifier", "takeover"),
    ],
)
def test_dns_annotations_naming_hosts_or_addresses_are_denied(stack: Cluster, kind: str, key: str, value: str) -> None:
    resource, obj = _object(stack, kind, {key: value})
    outcome = stack.attempt(ACME_ADMIN, "CREATE", resource, obj, ACME_DEV)
    assert outcome.denied_by(POLICY, f"route annotation {key} is not allowed for tenant acme"), outcome
    # An UPDATE that adds it is refused the same way.
    resource, old = _object(stack, kind, {})
    assert stack.attempt(ACME_ADMIN, "UPDATE", resource, obj, ACME_DEV, old=old).denied_by(POLICY)


@pytest.mark.parametrize("kind", ["HTTPRoute", "ListenerSet"])
def test_allowed_annotations_with_unsafe_values_are_denied(stack: Cluster, kind: str) -> None:
    resource, obj = _object(stack, kind, {"external-dns.alpha.kubernetes.io/ttl": "60\nhostname: x"})
    assert stack.attempt(ACME_ADMIN, "CREATE", resource, obj, ACME_DEV).denied_by(POLICY, "has a value with")


@pytest.mark.parametrize("kind", ["HTTPRoute", "GRPCRoute", "ListenerSet"])
def test_harmless_route_annotations_are_admitted(stack: Cluster, kind: str) -> None:
    harmless = {
        "external-dns.alpha.kubernetes.io/ttl": "60",
        "meta.helm.sh/release-name": "web",
        "kubectl.kubernetes.io/last-applied-configuration": '{"kind":"HTTPRoute"}',
    }
    resource, obj = _object(stack, kind, harmless)
    outcome = stack.attempt(ACME_ADMIN, "CREATE", resource, obj, ACME_DEV)
    assert outcome.stopped_by is None, outcome.decision.denials
    assert POLICY in outcome.decision.applied
