"""Issue 33: route and ListenerSet annotations governed like an Ingress's, on dev, prod and prod-aws.

The attack: an HTTPRoute (or GRPCRoute, TLSRoute, ListenerSet) carrying external-dns
`hostname` or `target` with another tenant's name, the whole suffix or an address: external-dns
publishes what a route's annotations say (external-dns v0.20.0 source/gateway.go). The
legitimate twins: the allow-listed `ttl`, ungoverned prefixes, and the platform's own routes.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from components.model.settings.edge import EXTERNAL_DNS_CHART
from components.model.settings.edge_contracts import EXTERNAL_DNS_ANNOTATION_PREFIX, EXTERNAL_DNS_APP_VERSIONS
from components.model.settings.ingress_annotations import EXTERNAL_DNS_PREFIXES, IngressAnnotationPolicy
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


# --- Issue 43: external-dns's newer annotation prefix -----------------------------------------

NEW_PREFIX = "external-dns.kubernetes.io"


@pytest.mark.parametrize("kind", ["HTTPRoute", "ListenerSet"])
@pytest.mark.parametrize(
    ("name", "value"), [("hostname", "genomics-lab.tenants.example.com"), ("target", "203.0.113.7")]
)
def test_the_newer_external_dns_prefix_is_held_to_the_same_list(
    stack: Cluster, kind: str, name: str, value: str
) -> None:
    """external-dns v0.22+ reads `external-dns.kubernetes.io/hostname` and `/target` (PR #6424): a
    chart bump must not turn them into another tenant's name or address."""
    resource, obj = _object(stack, kind, {f"{NEW_PREFIX}/{name}": value})
    outcome = stack.attempt(ACME_ADMIN, "CREATE", resource, obj, ACME_DEV)
    assert outcome.denied_by(POLICY, f"route annotation {NEW_PREFIX}/{name} is not allowed"), outcome
    # The twin: its `ttl`, as under the alpha prefix.
    resource, obj = _object(stack, kind, {f"{NEW_PREFIX}/ttl": "60"})
    assert stack.attempt(ACME_ADMIN, "CREATE", resource, obj, ACME_DEV).stopped_by is None


def test_a_stack_governing_one_external_dns_prefix_governs_all() -> None:
    policy = IngressAnnotationPolicy(controllers={"external-dns.alpha.kubernetes.io": ["ttl", "ttl-x"]})
    assert {p: policy.governed()[p] for p in EXTERNAL_DNS_PREFIXES} == {
        p: ["ttl", "ttl-x"] for p in EXTERNAL_DNS_PREFIXES
    }
    with pytest.raises(ValidationError, match="must list the same names"):
        IngressAnnotationPolicy(controllers={EXTERNAL_DNS_PREFIXES[0]: ["ttl"], EXTERNAL_DNS_PREFIXES[1]: ["hostname"]})


def test_the_pinned_external_dns_reads_a_reviewed_and_governed_prefix() -> None:
    """A chart bump to an app whose annotation prefix nobody reviewed fails here (edge_contracts.py)."""
    app = EXTERNAL_DNS_APP_VERSIONS[EXTERNAL_DNS_CHART.version]
    assert app in EXTERNAL_DNS_ANNOTATION_PREFIX, f"review the annotation keys external-dns {app} reads"
    assert EXTERNAL_DNS_ANNOTATION_PREFIX[app] in EXTERNAL_DNS_PREFIXES
    assert set(EXTERNAL_DNS_ANNOTATION_PREFIX.values()) <= set(EXTERNAL_DNS_PREFIXES)
    assert all(p in IngressAnnotationPolicy().governed() for p in EXTERNAL_DNS_PREFIXES)
