"""Tenant-authored NetworkPolicies: RBAC lets admins and the deployer write them (tests/rbac.py), and
the `tenancy-network-policies` rule, evaluated by cel-cpp through tests/cel_admission.py, admits
only peers inside the tenant's own namespace and the egress its tenant file was granted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cel_admission import AdmissionChain, Request
from tests.rbac import Authorizer, Subject
from tests.support import kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tools.harness import ProgramRun

NS = "tenant-payer-dev"
ADMIN = Subject("Group", "payer-admins")
RESOURCE = "networking.k8s.io/v1/networkpolicies"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    tenants = write_tenants(
        Path(tmp_path_factory.mktemp("tenants")),
        tenant_document("payer", egress=["payments-api", "internet-https"], access={"admin": ["payer-admins"]}),
        tenant_document("victim"),
    )
    return plan("dev", tenants)


@pytest.fixture(scope="module")
def chain(run: ProgramRun) -> AdmissionChain:
    return AdmissionChain(kubernetes_objects(run))


def _policy(ingress: list[dict[str, Any]] | None = None, egress: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": []}
    if ingress is not None:
        spec["ingress"], spec["policyTypes"] = ingress, [*spec["policyTypes"], "Ingress"]
    if egress is not None:
        spec["egress"], spec["policyTypes"] = egress, [*spec["policyTypes"], "Egress"]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "mine", "namespace": NS},
        "spec": spec,
    }


def _admit(chain: AdmissionChain, run: ProgramRun, obj: dict[str, Any], old: dict[str, Any] | None = None) -> Any:
    [ns] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == NS]
    operation = "CREATE" if old is None else "UPDATE"
    return chain.admit(
        Request(
            operation,
            RESOURCE,
            "NetworkPolicy",
            object=obj,
            old_object=old,
            namespace_object=ns,
            username="alice@payer",
            groups=["payer-admins", "system:authenticated"],
        )
    )


def _peer_ns(name: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": name}}}


HARMLESS = {
    "own pods in": _policy(
        ingress=[{"from": [{"podSelector": {"matchLabels": {"app": "api"}}}], "ports": [{"port": 8080}]}]
    ),
    "own namespace by name": _policy(egress=[{"to": [{**_peer_ns(NS), "podSelector": {}}]}]),
    "granted egress": _policy(egress=[{"to": [{"ipBlock": {"cidr": "203.0.113.0/24"}}], "ports": [{"port": 443}]}]),
    "granted internet, more carved out": _policy(
        egress=[
            {
                "to": [
                    {
                        "ipBlock": {
                            "cidr": "0.0.0.0/0",
                            "except": [
                                "10.0.0.0/8",
                                "100.64.0.0/10",
                                "127.0.0.0/8",
                                "169.254.0.0/16",
                                "172.16.0.0/12",
                                "192.168.0.0/16",
                                "224.0.0.0/4",
                                "8.8.8.8/32",
                            ],
                        }
                    }
                ]
            }
        ]
    ),
    "deny-all narrowing": _policy(ingress=[], egress=[]),
}
ATTACKS = {
    "another tenant's namespace": _policy(egress=[{"to": [_peer_ns("tenant-victim-dev")]}]),
    "own tenant's prod": _policy(egress=[{"to": [_peer_ns("tenant-payer-prod")]}]),
    "every namespace": _policy(ingress=[{"from": [{"namespaceSelector": {}}]}]),
    "every namespace, with pods": _policy(egress=[{"to": [{"namespaceSelector": {}, "podSelector": {}}]}]),
    "forgeable tenant label": _policy(
        egress=[{"to": [{"namespaceSelector": {"matchLabels": {"tenancy.io/tenant": "payer"}}}]}]
    ),
    "match expressions": _policy(
        egress=[
            {
                "to": [
                    {
                        "namespaceSelector": {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/metadata.name",
                                    "operator": "In",
                                    "values": [NS, "tenant-victim-dev"],
                                }
                            ]
                        }
                    }
                ]
            }
        ]
    ),
    "extra label beside own name": _policy(
        egress=[{"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS, "x": "y"}}}]}]
    ),
    "platform namespace": _policy(ingress=[{"from": [_peer_ns("kube-system")]}]),
    "ipBlock 0.0.0.0/0": _policy(egress=[{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]),
    "internet without the private carve-outs": _policy(
        egress=[{"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}]}]
    ),
    "metadata server": _policy(egress=[{"to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}]}]),
    "inside a granted range": _policy(egress=[{"to": [{"ipBlock": {"cidr": "203.0.113.0/25"}}]}]),
    "ingress from the world": _policy(ingress=[{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]),
    "second peer bad": _policy(egress=[{"to": [{"podSelector": {}}, _peer_ns("tenant-victim-dev")]}]),
}


@pytest.mark.parametrize("name", sorted(HARMLESS))
def test_harmless_tenant_policies_are_admitted(chain: AdmissionChain, run: ProgramRun, name: str) -> None:
    decision = _admit(chain, run, HARMLESS[name])
    assert decision.allowed, decision.denials


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_cross_tenant_policies_are_denied(chain: AdmissionChain, run: ProgramRun, name: str) -> None:
    decision = _admit(chain, run, ATTACKS[name])
    assert not decision.allowed
    assert any("tenancy-network-policies" in str(d) for d in decision.denials), decision.denials


def test_an_update_is_judged_like_a_create(chain: AdmissionChain, run: ProgramRun) -> None:
    decision = _admit(chain, run, ATTACKS["every namespace"], old=HARMLESS["own pods in"])
    assert not decision.allowed


def test_the_platform_isolation_policy_stays_locked(chain: AdmissionChain, run: ProgramRun) -> None:
    [isolation] = [p for p in objects_of_kind(run, "NetworkPolicy", NS) if p["metadata"]["name"] == "tenancy-isolation"]
    opened = {**isolation, "spec": {**isolation["spec"], "ingress": [{}]}}
    decision = _admit(chain, run, opened, old=isolation)
    assert not decision.allowed
    assert any("tenancy-platform-owned" in str(d) for d in decision.denials), decision.denials


def test_admins_and_deployer_may_write_network_policies_others_may_not(run: ProgramRun) -> None:
    authz = Authorizer(kubernetes_objects(run))
    deployer = Subject("ServiceAccount", "deployer", NS)
    for verb in ("create", "update", "delete"):
        assert authz.allowed(ADMIN, verb, "networkpolicies", NS, group="networking.k8s.io")
        assert authz.allowed(deployer, verb, "networkpolicies", NS, group="networking.k8s.io")
        assert not authz.allowed(ADMIN, verb, "networkpolicies", "tenant-victim-dev", group="networking.k8s.io")
        assert not authz.allowed(deployer, verb, "networkpolicies", "tenant-victim-dev", group="networking.k8s.io")
        # prod is written by GitOps only, never by people.
        assert not authz.allowed(ADMIN, verb, "networkpolicies", "tenant-payer-prod", group="networking.k8s.io")
