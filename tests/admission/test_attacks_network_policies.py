"""Tenant-authored NetworkPolicies played through RBAC and admission (tests/admission/layers.py) on
dev (local), prod (GKE) and prod-aws (EKS): acme's admin in dev and its deployer in prod write
legitimate policies and attacks; nobody writes them into another tenant's namespace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.admission.layers import ACME_ADMIN, ACME_DEV, ACME_PROD, WRITERS, Cluster, cluster
from tests.admission.network_policy_cases import (
    INGRESS_PLATFORM,
    always_denied,
    chart_style,
    cross_namespace,
    denial_reason,
    harmless,
    wider_than_platform,
)
from tests.rbac import Subject
from tests.support import plan, tenant_document, write_tenants

RESOURCE = "networking.k8s.io/v1/networkpolicies"
VICTIM = "tenant-genomics-lab-prod"


@pytest.fixture(scope="module", params=["dev", "prod", "prod-aws"])
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    tenants = write_tenants(
        Path(tmp_path_factory.mktemp("tenants")),
        tenant_document("acme", egress=["payments-api", "internet-https"], access={"admin": ["acme-admins"]}),
        tenant_document("genomics-lab"),
    )
    return cluster(plan(request.param, tenants, platformNamespaces=INGRESS_PLATFORM))


def _sibling(namespace: str) -> str:
    return ACME_PROD if namespace == ACME_DEV else ACME_DEV


def _attempt(stack: Cluster, who: Subject, obj: dict[str, Any], namespace: str) -> Any:
    return stack.attempt(who, "CREATE", RESOURCE, obj, namespace)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_legitimate_policies_are_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    for name, obj in harmless(namespace).items():
        outcome = _attempt(stack, who, obj, namespace)
        assert outcome.stopped_by is None, (stack.stack, name, outcome)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_cross_tenant_and_platform_peers_stop_at_admission(stack: Cluster, who: Subject, namespace: str) -> None:
    for name, obj in cross_namespace(namespace, VICTIM, _sibling(namespace)).items():
        outcome = _attempt(stack, who, obj, namespace)
        assert outcome.denied_by("tenancy-network-policies", "may only name pods of its own namespace"), (name, outcome)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_addresses_beyond_the_grant_and_bad_ports_stop_at_admission(
    stack: Cluster, who: Subject, namespace: str
) -> None:
    for name, obj in always_denied(namespace).items():
        outcome = _attempt(stack, who, obj, namespace)
        assert outcome.denied_by("tenancy-network-policies", denial_reason(name)), (stack.stack, name, outcome)


def test_nobody_writes_policies_into_another_tenants_namespace(stack: Cluster) -> None:
    policy = harmless(VICTIM)["own pods in"]
    assert _attempt(stack, ACME_ADMIN, policy, VICTIM).stopped_by == "rbac"
    deployer = Subject("ServiceAccount", "deployer", ACME_PROD)
    assert _attempt(stack, deployer, policy, VICTIM).stopped_by == "rbac"
    # People do not write prod: GitOps does.
    assert _attempt(stack, ACME_ADMIN, harmless(ACME_PROD)["own pods in"], ACME_PROD).stopped_by == "rbac"


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_chart_rules_inside_platform_paths_are_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    """DNS egress and ingress from the ingress controller's namespace, as charts ship them (issue 26)."""
    for name, obj in chart_style(namespace).items():
        outcome = _attempt(stack, who, obj, namespace)
        assert outcome.stopped_by is None, (stack.stack, name, outcome.decision.denials)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_rules_wider_than_platform_paths_stop_at_admission(stack: Cluster, who: Subject, namespace: str) -> None:
    for name, (obj, reason) in wider_than_platform(namespace).items():
        outcome = _attempt(stack, who, obj, namespace)
        assert outcome.denied_by("tenancy-network-policies", reason), (stack.stack, name, outcome)
