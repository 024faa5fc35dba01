"""Who reaches whom, on dev (local), prod (GKE) and prod-aws (EKS), as network-config-analyzer sees it.

Each test reads nca's connectivity map of the rendered plan (tests/guardrails/network_analyzer.py);
none reasons about NetworkPolicy semantics itself.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from components.model.core.labels import DATABASE_CLIENT_KEY
from tests.admission.network_policy_cases import load_balancer
from tests.guardrails.network_analyzer import (
    Connectivity,
    analyze,
    assert_grants_open_exactly_what_they_name,
    grant_tenants,
    nca_command,
)
from tests.guardrails.test_cluster_network_policy import cluster_mode
from tests.support import EXAMPLE_TENANTS, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, stack_config

pytestmark = pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")
STACKS = ["dev", "prod", "prod-aws"]
_PLANS: dict[str, tuple[ProgramRun, Connectivity]] = {}


def _analyzed(stack: str) -> tuple[ProgramRun, Connectivity]:
    if stack not in _PLANS:
        run = plan(stack, EXAMPLE_TENANTS)
        _PLANS[stack] = (run, analyze(run))
    return _PLANS[stack]


def _tenant_pods(connectivity: Connectivity) -> list[str]:
    ends = {end for edge in connectivity.edges for end in edge}
    return sorted(end for end in ends if end.startswith("tenant-"))


def _tenant_of(pod: str, run: ProgramRun) -> tuple[str, str]:
    namespace = pod.split("/")[0]
    labels = next(o for o in objects_of_kind(run, "Namespace") if o["metadata"]["name"] == namespace)["metadata"]
    return labels["labels"]["tenancy.io/tenant"], labels["labels"]["tenancy.io/environment"]


@pytest.mark.parametrize("stack", STACKS)
def test_no_tenant_reaches_another_tenant_or_its_other_environment(stack: str) -> None:
    run, connectivity = _analyzed(stack)
    pods = _tenant_pods(connectivity)
    assert len({_tenant_of(p, run)[0] for p in pods}) >= 2, "the example needs two tenants to prove isolation"
    for source in pods:
        for destination in pods:
            if _tenant_of(source, run) != _tenant_of(destination, run):
                assert not connectivity.reaches(source, destination), f"{source} reaches {destination}"
    # Isolation is not blanket denial: pods of one namespace do reach each other.
    same = [(s, d) for s in pods for d in pods if s != d and s.split("/")[0] == d.split("/")[0]]
    assert same and all(connectivity.reaches(s, d) for s, d in same)


@pytest.mark.parametrize("stack", STACKS)
def test_dns_works_and_nothing_else_in_kube_system(stack: str) -> None:
    _, connectivity = _analyzed(stack)
    for pod in _tenant_pods(connectivity):
        assert connectivity.allows(pod, "kube-system/coredns", 53, "UDP")
        assert connectivity.allows(pod, "kube-system/coredns", 53, "TCP")
        assert not connectivity.allows(pod, "kube-system/coredns", 80)
        assert not connectivity.reaches(pod, "kube-system/kube-proxy")


@pytest.mark.parametrize("stack", STACKS)
def test_monitoring_reaches_tenants_nobody_else_does(stack: str) -> None:
    _, connectivity = _analyzed(stack)
    for pod in _tenant_pods(connectivity):
        assert connectivity.allows("monitoring/prometheus", pod, 9090)
        assert not connectivity.reaches("kube-system/kube-proxy", pod)
        assert not connectivity.reaches("cnpg-system/cnpg-intruder", pod)
        # Ingress is off by default (ingress-nginx is retired): its namespace is no longer a platform one.
        assert not connectivity.reaches("ingress-nginx/ingress-controller", pod)
        # Tenants cannot reach into the platform namespaces.
        assert not connectivity.reaches(pod, "envoy-gateway-system/envoy-proxy")
        assert not connectivity.reaches(pod, "monitoring/prometheus")


def test_monitoring_ports_limit_what_monitoring_reaches(tmp_path: Path) -> None:
    run = plan("dev", EXAMPLE_TENANTS, platformNamespaces='[{"name": "monitoring", "ports": [9090]}]')
    connectivity = analyze(run)
    pod = "tenant-acme-dev/app"
    assert connectivity.allows("monitoring/prometheus", pod, 9090)
    assert not connectivity.allows("monitoring/prometheus", pod, 8080)
    assert not connectivity.reaches("ingress-nginx/ingress-controller", pod)  # no longer listed


def test_data_operators_reach_their_instances_on_their_ports_only() -> None:
    _, connectivity = _analyzed("dev")
    instances = [p for p in _tenant_pods(connectivity) if p.split("/")[1].startswith("db-")]
    assert instances
    for pod in instances:
        assert connectivity.allows("cnpg-system/cnpg-operator", pod, 8000)
        assert connectivity.allows("cnpg-system/cnpg-operator", pod, 5432)
        assert not connectivity.allows("cnpg-system/cnpg-operator", pod, 22)
        assert connectivity.allows("mariadb-operator/mariadb-operator", pod, 3306)
        assert not connectivity.reaches("cnpg-system/cnpg-intruder", pod)
        # CloudNativePG instances watch their Cluster through the API server (dev: kind network).
        assert connectivity.allows(pod, "172.18.0.2", 6443)
        assert not connectivity.allows(pod, "172.18.0.2", 10250)


def _database_addresses(run: ProgramRun, namespace: str) -> list[str]:
    policies = [
        p for p in objects_of_kind(run, "NetworkPolicy", namespace) if p["metadata"]["name"] == "tenancy-databases"
    ]
    cidrs = [
        peer["ipBlock"]["cidr"]
        for p in policies
        for rule in p["spec"]["egress"]
        for peer in rule["to"]
        if "ipBlock" in peer
    ]
    return [cidr.split("/")[0] for cidr in cidrs]


def test_gcp_dev_pods_reach_only_dev_databases() -> None:
    run, connectivity = _analyzed("prod")
    prod_databases = _database_addresses(run, "tenant-acme-prod")
    dev_databases = _database_addresses(run, "tenant-acme-dev")
    assert prod_databases and dev_databases
    for address in prod_databases:
        assert connectivity.allows("tenant-acme-prod/app", address, 5432) or connectivity.allows(
            "tenant-acme-prod/app", address, 3306
        )
        assert not connectivity.reaches("tenant-acme-dev/app", address)
    for address in dev_databases:
        assert not connectivity.reaches("tenant-acme-prod/app", address)


def _aws_subnets() -> dict[str, list[str]]:
    """DB subnet group -> CIDRs, from the prod-aws stack config."""
    config, _ = stack_config("prod-aws")
    settings = json.loads(config["tenancy:aws"])
    groups = {s["subnetGroup"]: s["cidrs"] for s in settings["databaseSubnets"].values()}
    return {**groups, settings["dbSubnetGroup"]: settings["databaseCidrs"]}


def _host(cidr: str) -> str:
    """An address inside `cidr` standing for an instance there (RDS endpoints are DNS names)."""
    return str(ipaddress.ip_network(cidr)[10])


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
def test_aws_dev_pods_reach_only_dev_databases(mode: str) -> None:
    """First lock, by address (nca over the rendered policies, both network modes): each
    environment's instances live in its own DB subnets, and only that environment's pods reach
    them. Second lock, security groups (nca cannot see them; tests/clouds/security_groups.py):
    only the environment's database clients are admitted (docs/adr/0016)."""
    from tests.clouds.security_groups import admits

    network = json.loads(cluster_mode("prod-aws"))
    network["mode"] = mode
    run = plan("prod-aws", EXAMPLE_TENANTS, network=json.dumps(network))
    connectivity = analyze(run)
    subnets = _aws_subnets()
    instances = {
        (i.inputs["tags"]["environment"], i.inputs["dbName"]): i
        for i in run.of_type("aws:rds/instance:Instance")
        if i.inputs.get("tags", {}).get("tenant") == "acme"
    }
    assert {("dev", "orders"), ("prod", "orders"), ("prod", "legacy_billing")} <= instances.keys()
    client = {DATABASE_CLIENT_KEY: "true"}
    for (environment, _), instance in instances.items():
        port = 5432 if instance.inputs["engine"] == "postgres" else 3306
        addresses = [_host(cidr) for cidr in subnets[instance.inputs["dbSubnetGroupName"]]]
        for pod in ("tenant-acme-dev/app", "tenant-acme-prod/app"):
            own = pod == f"tenant-acme-{environment}/app"
            namespace = pod.split("/")[0]
            for address in addresses:
                # By address alone: the other environment reaches no port of it.
                assert connectivity.allows(pod, address, port) == own, (mode, pod, instance.name)
                if not own:
                    assert not connectivity.reaches(pod, address), (mode, pod, instance.name)
            # By security group: the environment's database clients, and nobody else.
            assert admits(run, namespace, instance, port, client) == own, (pod, instance.name)
            assert not admits(run, namespace, instance, port), (pod, instance.name)


@pytest.mark.parametrize(
    ("stack", "open_", "closed"),
    [
        ("prod", [("169.254.169.254", 80), ("169.254.169.252", 988)], [("169.254.170.23", 80)]),
        ("prod-aws", [("169.254.170.23", 80), ("fd00:ec2::23", 80)], [("169.254.169.254", 80)]),
        ("dev", [], [("169.254.169.254", 80), ("169.254.170.23", 80)]),
    ],
)
def test_cloud_identity_endpoints(stack: str, open_: list[tuple[str, int]], closed: list[tuple[str, int]]) -> None:
    _, connectivity = _analyzed(stack)
    for pod in _tenant_pods(connectivity):
        for address, port in open_:
            assert connectivity.allows(pod, address, port), (pod, address)
            assert not connectivity.allows(pod, address, port + 1)
        for address, _port in closed:
            assert not connectivity.reaches(pod, address), (pod, address)


def test_egress_allow_list_opens_exactly_what_it_names(tmp_path: Path) -> None:
    assert_grants_open_exactly_what_they_name(analyze(plan("dev", grant_tenants(tmp_path))))


def test_a_load_balancer_tenant_opens_exactly_its_ports_to_clients(tmp_path: Path) -> None:
    """Nothing outside the cluster reaches tenant pods until a tenant with `allowLoadBalancer` admits
    its clients with its own policy, which the admission rule lets it write on listed ports only
    (tests/admission/test_network_policy_rule.py::test_load_balancer_tenants_open_their_ports_to_addresses_and_nothing_more)."""
    run = plan("dev", write_tenants(tmp_path, tenant_document("shop", allowLoadBalancer=True)))
    pod, client = "tenant-shop-dev/app", "198.51.100.7"
    assert not analyze(run).reaches(client, pod)
    policy = load_balancer("tenant-shop-dev")["admitted: clients on the service port"]
    policy["spec"]["podSelector"] = {}
    opened = analyze(run, [policy])
    assert opened.allows(client, pod, 8080)
    assert not opened.allows(client, pod, 22)
    assert not opened.reaches(client, "tenant-shop-prod/app")


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
def test_an_entry_without_ports_opens_every_port_of_its_protocol_only(tmp_path: Path, mode: str) -> None:
    """A NetworkPolicy rule without `ports` (a ClusterNetworkPolicy rule without `protocols`) opens
    every protocol; an entry naming UDP and no ports must open UDP alone."""
    network = json.loads(cluster_mode("dev"))
    network["mode"] = mode
    network["egress"] = {"syslog": {"cidrs": ["198.51.100.0/24"], "protocol": "UDP"}}
    run = plan(
        "dev", write_tenants(tmp_path, tenant_document("logger", egress=["syslog"])), network=json.dumps(network)
    )
    connectivity = analyze(run)
    pod = "tenant-logger-dev/app"
    assert connectivity.allows(pod, "198.51.100.9", 514, "UDP")
    assert connectivity.allows(pod, "198.51.100.9", 53000, "UDP")
    assert not connectivity.allows(pod, "198.51.100.9", 514, "TCP")
    assert not connectivity.allows(pod, "198.51.100.9", 443, "TCP")


@pytest.mark.parametrize("mode", ["networkPolicy", "clusterNetworkPolicy"])
def test_internet_excludes_carve_the_clusters_public_ranges_out_of_internet_grants(tmp_path: Path, mode: str) -> None:
    """An IPv6 cluster's pods and nodes have global addresses: `internetExcludes` names them, and an
    internet grant then reaches neither them nor anything else it carved out."""
    network = {
        **json.loads(cluster_mode("dev")),
        "mode": mode,
        "internetExcludes": ["2600:1f00::/40", "203.0.113.0/24"],
    }
    run = plan("dev", grant_tenants(tmp_path), network=json.dumps(network))
    connectivity = analyze(run)
    surfer = "tenant-surfer-dev/app"
    assert not connectivity.reaches(surfer, "2600:1f00::5")
    assert not connectivity.reaches(surfer, "203.0.113.10")
    assert connectivity.allows(surfer, "2001:4860:4860::8888", 443)
    assert connectivity.allows(surfer, "8.8.8.8", 443)
    # A CIDR grant inside an excluded range still opens: excludes apply to internet entries only.
    assert connectivity.allows("tenant-payer-dev/app", "203.0.113.10", 443)
