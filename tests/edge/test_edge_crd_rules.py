"""The edge's Gateway API objects pass their CRDs' CEL rules too (tests/crd_rules.py), not only the
OpenAPI schema: an HTTPS listener terminating TLS needs certificateRefs, listener names are unique,
hostnames are valid, and so on, as the API server would check them on `up`."""

from __future__ import annotations

import copy

import pytest

from tests.crd_rules import CrdRules
from tests.k8s_schema import require_crds
from tests.support import kubernetes_objects, objects_of_kind
from tools.plan.harness import ProgramRun

KINDS = {"Gateway", "ListenerSet", "HTTPRoute", "GatewayClass", "Certificate", "ClusterIssuer"}


@pytest.fixture(scope="module")
def rules() -> CrdRules:
    require_crds()
    return CrdRules()


def test_every_gateway_api_object_passes_its_crd_rules(any_stack_plan: ProgramRun, rules: CrdRules) -> None:
    objects = [o for o in kubernetes_objects(any_stack_plan) if o["kind"] in KINDS]
    # GKE serves no ListenerSet (components/model/settings/edge_contracts.py): tenant domains are listeners.
    assert {"Gateway", "HTTPRoute"} <= {o["kind"] for o in objects}
    evaluated = 0
    for obj in objects:
        report = rules.check(obj)
        assert report.failures == [], (obj["metadata"], report.failures)
        evaluated += report.evaluated
    assert evaluated > 20


def test_the_rules_catch_a_listener_without_a_certificate(dev_plan: ProgramRun, rules: CrdRules) -> None:
    (gateway,) = objects_of_kind(dev_plan, "Gateway")
    broken = copy.deepcopy(gateway)
    broken["spec"]["listeners"][0]["tls"]["certificateRefs"] = []
    assert rules.check(broken).failures
    doubled = copy.deepcopy(gateway)
    doubled["spec"]["listeners"].append(copy.deepcopy(gateway["spec"]["listeners"][0]))
    assert rules.check(doubled).failures
