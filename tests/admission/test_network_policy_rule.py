"""Tenant-authored NetworkPolicies: RBAC lets admins and the deployer write them (tests/rbac.py), and
the `tenancy-network-policies` rule, evaluated by cel-cpp through tests/cel_admission.py, admits
only peers inside the tenant's own namespace and the egress its tenant file was granted, on the
granted ports, and ingress from addresses only for tenants with load balancers; the same in the
ClusterNetworkPolicy mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.admission.network_policy_cases import (
    INGRESS_PLATFORM,
    always_denied,
    chart_style,
    cross_namespace,
    denial_reason,
    harmless,
    load_balancer,
    wider_than_platform,
    wider_than_scrape_ports,
)
from tests.cel_admission import AdmissionChain, Request
from tests.guardrails.test_cluster_network_policy import cluster_mode
from tests.rbac import Authorizer, Subject
from tests.support import kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

NS, VICTIM, SIBLING = "tenant-payer-dev", "tenant-victim-dev", "tenant-payer-prod"
ADMIN = Subject("Group", "payer-admins")
RESOURCE = "networking.k8s.io/v1/networkpolicies"
HARMLESS, CROSS, DENIED = harmless(NS), cross_namespace(NS, VICTIM, SIBLING), always_denied(NS)
LOAD_BALANCER = load_balancer(NS)
CHART_STYLE, WIDER, WIDER_SCRAPE = chart_style(NS), wider_than_platform(NS), wider_than_scrape_ports(NS)


def _tenants(directory: Path, **payer: Any) -> Path:
    return write_tenants(
        directory,
        tenant_document(
            "payer", egress=["payments-api", "internet-https"], access={"admin": ["payer-admins"]}, **payer
        ),
        tenant_document("victim"),
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return plan("dev", _tenants(tmp_path_factory.mktemp("tenants")), platformNamespaces=INGRESS_PLATFORM)


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    tenants = _tenants(tmp_path_factory.mktemp("tenants"))
    return plan("dev", tenants, platformNamespaces=INGRESS_PLATFORM, network=cluster_mode("dev"))


def _admit(run: ProgramRun, obj: dict[str, Any], old: dict[str, Any] | None = None) -> Any:
    [ns] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == NS]
    return AdmissionChain(kubernetes_objects(run)).admit(
        Request(
            "CREATE" if old is None else "UPDATE",
            RESOURCE,
            "NetworkPolicy",
            object=obj,
            old_object=old,
            namespace_object=ns,
            username="alice@payer",
            groups=["payer-admins", "system:authenticated"],
        )
    )


def _denied_by_rule(decision: Any) -> bool:
    return not decision.allowed and any("tenancy-network-policies" in str(d) for d in decision.denials)


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
@pytest.mark.parametrize("name", sorted(HARMLESS))
def test_harmless_tenant_policies_are_admitted(run: ProgramRun, cluster_run: ProgramRun, mode: str, name: str) -> None:
    decision = _admit(run if mode == "networkPolicy" else cluster_run, HARMLESS[name])
    assert decision.allowed, decision.denials


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
@pytest.mark.parametrize("name", sorted(CROSS))
def test_cross_namespace_peers_are_denied_in_both_modes(
    run: ProgramRun, cluster_run: ProgramRun, mode: str, name: str
) -> None:
    # In the cluster mode the Admin tier denies these paths too (nca, tests/guardrails/
    # test_cluster_network_policy.py::test_tenant_policies_beneath_cannot_open_cross_tenant_paths),
    # but the policy would outlive a switch back to the namespaced mode.
    decision = _admit(run if mode == "networkPolicy" else cluster_run, CROSS[name])
    assert _denied_by_rule(decision)
    assert any("may only name pods of its own namespace" in d for d in decision.denials), decision.denials


@pytest.fixture(scope="module")
def load_balancer_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return plan("dev", _tenants(tmp_path_factory.mktemp("tenants"), allowLoadBalancer=True))


@pytest.mark.parametrize("name", sorted(LOAD_BALANCER))
def test_load_balancer_tenants_open_their_ports_to_addresses_and_nothing_more(
    load_balancer_run: ProgramRun, name: str
) -> None:
    decision = _admit(load_balancer_run, LOAD_BALANCER[name])
    if name.startswith("admitted"):
        assert decision.allowed, decision.denials
    else:
        assert _denied_by_rule(decision), decision.denials


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
@pytest.mark.parametrize("name", sorted(DENIED))
def test_addresses_unnamed_peers_and_bad_ports_are_denied_in_both_modes(
    run: ProgramRun, cluster_run: ProgramRun, mode: str, name: str
) -> None:
    decision = _admit(run if mode == "networkPolicy" else cluster_run, DENIED[name])
    assert _denied_by_rule(decision)
    assert any(denial_reason(name) in d for d in decision.denials), decision.denials


def test_messages_say_what_is_wrong(run: ProgramRun) -> None:
    cases = {
        "port 70000": "has an invalid port",
        "egress rule without to": "must name the peers of every rule",
        "granted block, other port": "only on the granted protocol and ports (203.0.113.0/24@TCP/443",
        "metadata server": "may only name pods of its own namespace",
    }
    for name, text in cases.items():
        decision = _admit(run, DENIED[name])
        assert any(text in d for d in decision.denials), (name, decision.denials)


def test_an_update_is_judged_like_a_create(run: ProgramRun) -> None:
    assert _denied_by_rule(_admit(run, CROSS["every namespace"], old=HARMLESS["own pods in"]))


def test_the_platform_isolation_policy_stays_locked(run: ProgramRun) -> None:
    [isolation] = [p for p in objects_of_kind(run, "NetworkPolicy", NS) if p["metadata"]["name"] == "tenancy-isolation"]
    opened = {**isolation, "spec": {**isolation["spec"], "ingress": [{}]}}
    decision = _admit(run, opened, old=isolation)
    assert not decision.allowed
    assert any("tenancy-platform-owned" in str(d) for d in decision.denials), decision.denials


def test_admins_and_deployer_may_write_network_policies_others_may_not(run: ProgramRun) -> None:
    authz = Authorizer(kubernetes_objects(run))
    deployer = Subject("ServiceAccount", "deployer", NS)
    for verb in ("create", "update", "delete"):
        assert authz.allowed(ADMIN, verb, "networkpolicies", NS, group="networking.k8s.io")
        assert authz.allowed(deployer, verb, "networkpolicies", NS, group="networking.k8s.io")
        assert not authz.allowed(ADMIN, verb, "networkpolicies", VICTIM, group="networking.k8s.io")
        assert not authz.allowed(deployer, verb, "networkpolicies", VICTIM, group="networking.k8s.io")
        # prod is written by GitOps only, never by people.
        assert not authz.allowed(ADMIN, verb, "networkpolicies", SIBLING, group="networking.k8s.io")


def test_a_grant_without_ports_admits_its_protocol_only(tmp_path: Path) -> None:
    """A grant of every UDP port: a tenant rule to it must name UDP; without ports it would open every
    protocol, TCP included."""
    network = {**json.loads(cluster_mode("dev")), "mode": "networkPolicy"}
    network["egress"] = {"syslog": {"cidrs": ["198.51.100.0/24"], "protocol": "UDP"}}
    tenants = write_tenants(tmp_path, tenant_document("payer", egress=["syslog"], access={"admin": ["payer-admins"]}))
    run = plan("dev", tenants, network=json.dumps(network))
    block = [{"ipBlock": {"cidr": "198.51.100.0/24"}}]
    admitted = {"to": block, "ports": [{"protocol": "UDP"}, {"protocol": "UDP", "port": 514}]}
    assert _admit(run, _egress_policy(admitted)).allowed
    for rule in ({"to": block}, {"to": block, "ports": [{"protocol": "TCP"}]}, {"to": block, "ports": [{"port": 514}]}):
        decision = _admit(run, _egress_policy(rule))
        assert _denied_by_rule(decision), rule
        assert any("only on the granted protocol and ports (198.51.100.0/24@UDP)" in d for d in decision.denials)


def _egress_policy(rule: dict[str, Any]) -> dict[str, Any]:
    spec = {"podSelector": {}, "policyTypes": ["Egress"], "egress": [rule]}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "logs"}, "spec": spec}


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
@pytest.mark.parametrize("name", sorted(CHART_STYLE))
def test_chart_rules_inside_platform_paths_are_admitted(
    run: ProgramRun, cluster_run: ProgramRun, mode: str, name: str
) -> None:
    decision = _admit(run if mode == "networkPolicy" else cluster_run, CHART_STYLE[name])
    assert decision.allowed, decision.denials


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
@pytest.mark.parametrize("name", sorted(WIDER))
def test_rules_wider_than_platform_paths_are_denied_with_what_to_write(
    run: ProgramRun, cluster_run: ProgramRun, mode: str, name: str
) -> None:
    obj, reason = WIDER[name]
    decision = _admit(run if mode == "networkPolicy" else cluster_run, obj)
    assert _denied_by_rule(decision)
    assert any(reason in d for d in decision.denials), decision.denials


def test_messages_name_the_platform_paths_to_write(run: ProgramRun) -> None:
    decision = _admit(run, WIDER["DNS pods in every namespace"][0])
    text = " ".join(decision.denials)
    assert (
        "ingress from the platform namespaces (namespaceSelector kubernetes.io/metadata.name: one of"
        " ingress-nginx, monitoring)" in text
    )
    assert (
        "egress to cluster DNS (namespaceSelector kubernetes.io/metadata.name: kube-system and podSelector"
        " matchLabels k8s-app=kube-dns)" in text
    )
    assert "networkPolicy.allowExternalEgress" in text
    decision = _admit(run, WIDER["DNS metrics port"][0])
    assert any(
        "only on port 53, UDP and TCP: write ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]" in d
        for d in decision.denials
    ), decision.denials


SCRAPE_PORTS = json.dumps([{"name": "ingress-nginx"}, {"name": "monitoring", "ports": [9090, 9100]}])


@pytest.fixture(scope="module", params=["networkPolicy", "clusterNetworkPolicy"])
def scrape_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    tenants = _tenants(tmp_path_factory.mktemp("tenants"))
    if request.param == "networkPolicy":
        return plan("dev", tenants, platformNamespaces=SCRAPE_PORTS)
    return plan("dev", tenants, platformNamespaces=SCRAPE_PORTS, network=cluster_mode("dev"))


def test_monitoring_rules_stay_on_the_scrape_ports(scrape_run: ProgramRun) -> None:
    assert _admit(scrape_run, CHART_STYLE["monitoring scrape port"]).allowed
    both = {**CHART_STYLE["monitoring scrape port"]}
    both["spec"] = {
        **both["spec"],
        "ingress": [
            {
                "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
                "ports": [{"port": 9100}, {"protocol": "TCP", "port": 9090}],
            }
        ],
    }
    assert _admit(scrape_run, both).allowed
    for name, obj in WIDER_SCRAPE.items():
        decision = _admit(scrape_run, obj)
        assert _denied_by_rule(decision), name
        assert any(
            "may admit a platform namespace only on the ports the platform opens to it"
            " (ingress-nginx, monitoring@TCP/9090/9100)" in d
            for d in decision.denials
        ), (name, decision.denials)


def test_a_suspended_tenant_names_no_platform_namespace(tmp_path: Path) -> None:
    """Suspension cuts the platform namespaces' ingress (components/guardrails/namespace.py); a tenant
    rule from them would reopen it, so it is refused then."""
    run = plan("dev", _tenants(tmp_path, lifecycle="suspended"), platformNamespaces=INGRESS_PLATFORM)
    decision = _admit(run, CHART_STYLE["ingress controller namespace, service port"])
    assert _denied_by_rule(decision), decision.denials
    assert _admit(run, CHART_STYLE["DNS egress, UDP and TCP 53"]).allowed
