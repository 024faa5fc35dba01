"""The ClusterNetworkPolicy mode on GKE (prod), EKS (prod-aws) and with shared database instances:
database egress and a virtual cluster's holes are Admin-tier objects, so no namespaced policy of the
platform's selects tenant pods and cuts what the Baseline tier grants. Who reaches whom is judged
by network-config-analyzer through tests/guardrails/cnp_translation.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.guardrails.network_analyzer import analyze, nca_command
from tests.guardrails.test_cluster_network_policy import cluster_mode
from tests.k8s_schema import require_crds, validate_custom
from tests.support import EXAMPLE_TENANTS, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

needs_nca = pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")
CLOUD_STACKS = ["prod", "prod-aws"]
_RUNS: dict[str, ProgramRun] = {}


def _cnp_run(stack: str) -> ProgramRun:
    if stack not in _RUNS:
        _RUNS[stack] = plan(stack, EXAMPLE_TENANTS, network=cluster_mode(stack))
    return _RUNS[stack]


def _cnp(run: ProgramRun, name: str) -> dict[str, Any]:
    found = [o for o in objects_of_kind(run, "ClusterNetworkPolicy") if o["metadata"]["name"] == name]
    assert len(found) == 1, name
    return found[0]


def _database_rule(run: ProgramRun, namespace: str) -> dict[str, Any]:
    (rule,) = _cnp(run, f"tenancy-databases-{namespace}")["spec"]["egress"]
    return dict(rule)


def _addresses(rule: dict[str, Any]) -> list[str]:
    return [network.split("/")[0] for peer in rule["to"] for network in peer.get("networks", [])]


def _default_mode_database_policies(stack: str) -> dict[str, dict[str, Any]]:
    policies = objects_of_kind(plan(stack, EXAMPLE_TENANTS), "NetworkPolicy")
    return {p["metadata"]["namespace"]: p["spec"] for p in policies if p["metadata"]["name"] == "tenancy-databases"}


@pytest.mark.parametrize("stack", CLOUD_STACKS)
def test_database_egress_is_admin_tier_and_opens_what_the_default_mode_opens(stack: str) -> None:
    require_crds()
    run = _cnp_run(stack)
    for obj in objects_of_kind(run, "ClusterNetworkPolicy"):
        validate_custom(obj)
    # No platform NetworkPolicy selects tenant pods in this mode.
    assert not [p for p in objects_of_kind(run, "NetworkPolicy") if p["metadata"]["name"] == "tenancy-databases"]
    expected = _default_mode_database_policies(stack)
    assert expected, "the example stack needs databases outside the namespace"
    names = {o["metadata"]["name"] for o in objects_of_kind(run, "ClusterNetworkPolicy")}
    assert {n.removeprefix("tenancy-databases-") for n in names if n.startswith("tenancy-databases-")} == set(expected)
    for namespace, spec in expected.items():
        cnp = _cnp(run, f"tenancy-databases-{namespace}")["spec"]
        assert (cnp["tier"], cnp["subject"]) == (
            "Admin",
            {"namespaces": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}},
        )
        (rule,) = cnp["egress"]
        assert rule["action"] == "Accept"
        assert sorted(_addresses(rule)) == sorted(p["ipBlock"]["cidr"].split("/")[0] for p in spec["egress"][0]["to"])
        ports = sorted(p["tcp"]["destinationPort"]["number"] for p in rule["protocols"])
        assert ports == sorted(p["port"] for p in spec["egress"][0]["ports"])


@needs_nca
@pytest.mark.parametrize("stack", CLOUD_STACKS)
def test_no_tenant_reaches_another_or_its_other_environment(stack: str) -> None:
    connectivity = analyze(_cnp_run(stack))
    pods = sorted({end for edge in connectivity.edges for end in edge if end.startswith("tenant-")})
    assert len({p.split("/")[0] for p in pods}) >= 4
    for source in pods:
        for destination in pods:
            if source != destination:
                same = source.split("/")[0] == destination.split("/")[0]
                assert connectivity.reaches(source, destination) == same, (source, destination)


# A tenant policy selecting every pod of its namespace for egress, open only inside the namespace:
# beneath the Admin tier it may narrow the tenant's own traffic but never its platform paths.
_OWN_NAMESPACE_ONLY = {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"podSelector": {}}]}]}


def _tenant_policy(namespace: str) -> dict[str, Any]:
    meta = {"name": "own-only", "namespace": namespace}
    spec = _OWN_NAMESPACE_ONLY
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta, "spec": spec}


@needs_nca
def test_gcp_environments_reach_only_their_own_databases_whatever_the_tenant_writes() -> None:
    run = _cnp_run("prod")
    prod, dev = _database_rule(run, "tenant-acme-prod"), _database_rule(run, "tenant-acme-dev")
    narrowed = [_tenant_policy("tenant-acme-prod"), _tenant_policy("tenant-acme-dev")]
    for connectivity in (analyze(run), analyze(run, narrowed)):
        for address in _addresses(prod):
            assert connectivity.allows("tenant-acme-prod/app", address, 5432) or connectivity.allows(
                "tenant-acme-prod/app", address, 3306
            )
            assert not connectivity.allows("tenant-acme-prod/app", address, 22)
            assert not connectivity.reaches("tenant-acme-dev/app", address)
            assert not connectivity.reaches("tenant-northwind-prod/app", address)
        for address in _addresses(dev):
            assert connectivity.allows("tenant-acme-dev/app", address, 5432)
            assert not connectivity.reaches("tenant-acme-prod/app", address)
        assert connectivity.allows("tenant-acme-prod/app", "kube-system/coredns", 53, "UDP")
        assert connectivity.allows("tenant-acme-prod/app", "169.254.169.254", 80)


@needs_nca
def test_aws_database_subnets_open_per_namespace_and_only_their_environments() -> None:
    """The Admin-tier database rule opens each environment's own DB subnets, nothing of another's
    (the full two-lock proof, both modes: test_network_connectivity.py::test_aws_dev_pods_reach_only_dev_databases)."""
    run = _cnp_run("prod-aws")
    connectivity = analyze(run, [_tenant_policy("tenant-acme-dev")])
    dev, prod = "10.20.96.10", "10.20.98.10"  # Pulumi.prod-aws.yaml: databaseSubnets dev and prod
    assert connectivity.allows("tenant-acme-dev/app", dev, 5432)
    assert not connectivity.reaches("tenant-acme-dev/app", prod)
    assert connectivity.allows("tenant-acme-prod/app", prod, 3306)
    assert not connectivity.reaches("tenant-acme-prod/app", dev)
    # Namespaces without databases outside them get no path to the DB subnets.
    assert not connectivity.reaches("tenant-northwind-prod/app", prod)
    assert connectivity.allows("tenant-acme-prod/app", "169.254.170.23", 80)
    assert not connectivity.reaches("tenant-acme-prod/app", "169.254.169.254")


_LOCAL_SHARED = json.dumps({"sharedInstances": {"maria": {"engine": "mysql", "version": "8.0", "storageGb": 40}}})
_SHARED_MYSQL = {"name": "legacy_billing", "engine": "mysql", "version": "8.0", "placement": "shared"}


@needs_nca
def test_shared_instances_are_reached_through_the_admin_tier(tmp_path: Path) -> None:
    tenants = write_tenants(tmp_path, tenant_document("shop", databases=[_SHARED_MYSQL]), tenant_document("quiet"))
    run = plan("dev", tenants, data=_LOCAL_SHARED, network=cluster_mode("dev"))
    rule = _database_rule(run, "tenant-shop-prod")
    assert rule["to"] == [{"namespaces": {"matchLabels": {"kubernetes.io/metadata.name": "tenancy-databases"}}}]
    shared = ("tenancy-databases", "shared-maria-0", {"app.kubernetes.io/name": "mariadb"})
    connectivity = analyze(run, [_tenant_policy("tenant-shop-prod")], extra_pods=[shared])
    instance = "tenancy-databases/shared-maria-0"
    assert connectivity.allows("tenant-shop-prod/app", instance, 3306)
    assert not connectivity.allows("tenant-shop-prod/app", instance, 22)
    assert not connectivity.reaches("tenant-quiet-prod/app", instance)
    assert connectivity.reaches("tenant-shop-prod/app", "tenant-shop-prod/worker")
