"""The ClusterNetworkPolicy mode (`tenancy:network.mode: clusterNetworkPolicy`): what it renders, that
every object fits the upstream CRD, who reaches whom as network-config-analyzer sees it (through the
translation in tests/guardrails/cnp_translation.py), and where the mode is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from components.model.core.labels import TENANT_KEY
from policy_pack import offline
from tests.guardrails.network_analyzer import (
    Connectivity,
    analyze,
    assert_grants_open_exactly_what_they_name,
    grant_tenants,
    nca_command,
)
from tests.k8s_schema import require_crds, validate_custom
from tests.support import EXAMPLE_TENANTS, kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, stack_config

needs_nca = pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")
SHARED = ["tenancy-baseline-deny", "tenancy-baseline-own", "tenancy-platform"]


def cluster_mode(stack: str) -> str:
    """The stack's own `tenancy:network` with the ClusterNetworkPolicy mode, as JSON for plan()."""
    config, _ = stack_config(stack)
    network: Any = config.get("tenancy:network", {})
    network = json.loads(network) if isinstance(network, str) else dict(network)
    return json.dumps({**network, "mode": "clusterNetworkPolicy"})


def cnp_plan(tenants: Path = EXAMPLE_TENANTS) -> ProgramRun:
    return plan("dev", tenants, network=cluster_mode("dev"))


@pytest.fixture(scope="module")
def run() -> ProgramRun:
    return cnp_plan()


@pytest.fixture(scope="module")
def connectivity(run: ProgramRun) -> Connectivity:
    if nca_command() is None:
        pytest.skip("network-config-analyzer (nca) is not installed")
    return analyze(run)


def _tenant_namespaces(run: ProgramRun) -> list[str]:
    """Tenant namespaces (platform namespaces the stack creates, such as tenancy-shared, get no isolation)."""
    return sorted(
        o["metadata"]["name"]
        for o in objects_of_kind(run, "Namespace")
        if TENANT_KEY in o["metadata"].get("labels", {})
    )


def _tenant_pods(connectivity: Connectivity) -> list[str]:
    return sorted({end for edge in connectivity.edges for end in edge if end.startswith("tenant-")})


def test_a_constant_number_of_shared_objects_and_one_per_namespace(run: ProgramRun, tmp_path: Path) -> None:
    names = sorted(o["metadata"]["name"] for o in objects_of_kind(run, "ClusterNetworkPolicy"))
    namespaces = _tenant_namespaces(run)
    # Shared: platform, own namespace, deny, plus one per stack egress entry (dev has two).
    shared = [*SHARED, "tenancy-egress-internet-https", "tenancy-egress-payments-api"]
    # operator-lab runs a virtual cluster in both environments: its control plane's holes.
    virtual = [f"tenancy-vcluster-tenant-operator-lab-{env}" for env in ("dev", "prod")]
    assert names == sorted(shared + virtual + [f"tenancy-isolation-{ns}" for ns in namespaces])
    # No namespaced isolation policy is left for tenants to be unable to narrow.
    assert not [p for p in objects_of_kind(run, "NetworkPolicy") if p["metadata"]["name"] == "tenancy-isolation"]
    # Twice the tenants: the shared objects stay the same.
    many = [tenant_document(f"t{i}") for i in range(6)]
    bigger = cnp_plan(write_tenants(tmp_path, *many))
    bigger_names = {o["metadata"]["name"] for o in objects_of_kind(bigger, "ClusterNetworkPolicy")}
    assert set(shared) <= bigger_names
    assert len(bigger_names) == len(shared) + len(_tenant_namespaces(bigger))


def test_every_cluster_network_policy_fits_the_upstream_crd(run: ProgramRun) -> None:
    require_crds()
    found = objects_of_kind(run, "ClusterNetworkPolicy")
    assert found
    for obj in found:
        validate_custom(obj)
        assert obj["apiVersion"] == "policy.networking.k8s.io/v1alpha2"
        # Pass would hand a decision to tenant policies from the Admin tier; the model never uses it.
        rules = obj["spec"].get("ingress", []) + obj["spec"].get("egress", [])
        assert {r["action"] for r in rules} <= {"Accept", "Deny"}


def test_namespaces_carry_their_grants(tmp_path: Path) -> None:
    tenants = write_tenants(tmp_path, tenant_document("payer", egress=["payments-api"]), tenant_document("quiet"))
    namespaces = {n["metadata"]["name"]: n["metadata"] for n in objects_of_kind(cnp_plan(tenants), "Namespace")}
    for name, grants in [("tenant-payer-dev", {"egress.tenancy.io/payments-api"}), ("tenant-quiet-dev", set())]:
        assert {k for k in namespaces[name]["labels"] if k.startswith("egress.tenancy.io/")} == grants


@needs_nca
def test_no_tenant_reaches_another_and_same_namespace_works(run: ProgramRun, connectivity: Connectivity) -> None:
    pods = _tenant_pods(connectivity)
    assert len({p.split("/")[0] for p in pods}) >= 4
    for source in pods:
        for destination in pods:
            same = source.split("/")[0] == destination.split("/")[0]
            if source != destination:
                assert connectivity.reaches(source, destination) == same, (source, destination)


@needs_nca
def test_platform_paths_and_nothing_else(connectivity: Connectivity) -> None:
    for pod in _tenant_pods(connectivity):
        assert connectivity.allows(pod, "kube-system/coredns", 53, "UDP")
        assert connectivity.allows(pod, "kube-system/coredns", 53, "TCP")
        assert not connectivity.allows(pod, "kube-system/coredns", 80)
        assert not connectivity.reaches(pod, "kube-system/kube-proxy")
        assert not connectivity.reaches(pod, "envoy-gateway-system/envoy-proxy")
        assert not connectivity.reaches("ingress-nginx/ingress-controller", pod)  # ingress is off by default
        assert not connectivity.reaches("envoy-gateway-system/envoy-gateway", pod)  # the controller, not a proxy
        assert connectivity.allows("monitoring/prometheus", pod, 9090)
        assert not connectivity.reaches("kube-system/kube-proxy", pod)
        assert not connectivity.reaches("cnpg-system/cnpg-intruder", pod)
        assert connectivity.allows("cnpg-system/cnpg-operator", pod, 5432)
        assert not connectivity.allows("cnpg-system/cnpg-operator", pod, 22)
        assert connectivity.allows(pod, "172.18.0.2", 6443)
        assert not connectivity.allows(pod, "172.18.0.2", 10250)
        assert not connectivity.reaches(pod, "169.254.169.254")


@needs_nca
def test_egress_grants_open_exactly_what_they_name(tmp_path: Path) -> None:
    tenants = grant_tenants(tmp_path)
    connectivity = analyze(cnp_plan(tenants))
    assert_grants_open_exactly_what_they_name(connectivity)
    surfer = "tenant-surfer-dev/app"
    # The internet grant's private carve-outs do not cut the tenant's own namespace.
    assert connectivity.reaches(surfer, "tenant-surfer-dev/worker")
    # The tenant narrows its grant: `app` keeps only its own namespace; DNS stays (Admin tier).
    own_only = {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "app"}},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"podSelector": {}}]}],
    }
    narrowed = analyze(cnp_plan(tenants), [_tenant_policy("tenant-surfer-dev", "own-only", own_only)])
    assert not narrowed.reaches(surfer, "8.8.8.8")
    assert narrowed.reaches(surfer, "tenant-surfer-dev/worker")
    assert narrowed.allows(surfer, "kube-system/coredns", 53, "UDP")
    assert narrowed.allows("tenant-surfer-dev/worker", "8.8.8.8", 443)


def _tenant_policy(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta, "spec": spec}


OPEN_EVERYTHING = {
    "podSelector": {},
    "policyTypes": ["Ingress", "Egress"],
    "ingress": [{"from": [{"namespaceSelector": {}}]}],
    "egress": [{"to": [{"namespaceSelector": {}}]}],
}


@needs_nca
def test_tenant_policies_beneath_cannot_open_cross_tenant_paths(run: ProgramRun) -> None:
    # Both tenants open everything by namespace selector: the Admin tier still denies the path.
    extra = [_tenant_policy(ns, "open", OPEN_EVERYTHING) for ns in ("tenant-acme-dev", "tenant-genomics-lab-dev")]
    connectivity = analyze(run, extra)
    assert not connectivity.reaches("tenant-acme-dev/app", "tenant-genomics-lab-dev/app")
    assert not connectivity.reaches("tenant-genomics-lab-dev/app", "tenant-acme-dev/app")
    assert not connectivity.reaches("tenant-acme-dev/app", "tenant-acme-prod/app")
    assert not connectivity.reaches("tenant-acme-dev/app", "kube-system/kube-proxy")
    assert not connectivity.reaches("kube-system/kube-proxy", "tenant-acme-dev/app")
    assert connectivity.reaches("tenant-acme-dev/app", "tenant-acme-dev/worker")


@needs_nca
def test_tenants_can_narrow_their_own_namespace(run: ProgramRun) -> None:
    # Only `app` may call `worker`; worker's other peers in the namespace are cut, platform paths stay.
    narrow = {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "worker"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "app"}}}]}],
    }
    connectivity = analyze(run, [_tenant_policy("tenant-acme-dev", "worker-in", narrow)])
    assert connectivity.reaches("tenant-acme-dev/app", "tenant-acme-dev/worker")
    assert not connectivity.reaches("tenant-acme-dev/db-pg-orders", "tenant-acme-dev/worker")
    assert connectivity.reaches("tenant-acme-dev/worker", "tenant-acme-dev/app")
    # The Gateway's proxies still reach acme's route port (routePorts: [8080]).
    assert connectivity.allows("envoy-gateway-system/envoy-proxy", "tenant-acme-dev/worker", 8080)


def test_the_default_mode_renders_no_cluster_network_policy() -> None:
    objects = kubernetes_objects(plan("dev", EXAMPLE_TENANTS))
    assert not [o for o in objects if o["kind"] == "ClusterNetworkPolicy"]


def test_the_policy_pack_accepts_the_cluster_mode_and_misses_a_removed_isolation(run: ProgramRun) -> None:
    records = [{**r.as_json(), "read": getattr(r, "read", False)} for r in run.resources]
    assert offline.check_records(records) == []
    without = [r for r in records if not r["name"].endswith("-cluster-isolation") or "acme-dev" not in r["name"]]
    assert len(without) == len(records) - 1
    assert [v.message.split(" has ")[0] for v in offline.check_records(without)] == [
        "tenant namespace tenant-acme-dev (tenant acme)"
    ]


def test_settings_beyond_the_crd_limits_are_refused_with_the_key(tmp_path: Path) -> None:
    platform = json.dumps([{"name": f"platform-{i}"} for i in range(24)])
    network = {
        **json.loads(cluster_mode("dev")),
        "apiServer": {"cidrs": ["172.18.0.0/16"], "ports": list(range(1, 27))},
    }
    peers = [{"tenant": f"t{i}"} for i in range(25)]
    tenants = write_tenants(tmp_path, tenant_document("payer", acceptsFrom=peers))
    with pytest.raises(ConfigurationError) as raised:
        plan("dev", tenants, network=json.dumps(network), platformNamespaces=platform)
    found = {str(p).split(": at most")[0] for p in raised.value.problems if "ClusterNetworkPolicy limit" in str(p)}
    # 24 platform namespaces + 2 operators of the local cloud are 26 ingress rules.
    assert found == {
        "Pulumi.dev.yaml: tenancy:platformNamespaces",
        "Pulumi.dev.yaml: tenancy:network.apiServer.ports",
        f"{tenants}/payer.yaml: acceptsFrom",
    }


def test_cluster_scoped_isolation_is_not_deleted_with_its_namespace(run: ProgramRun) -> None:
    # The API server does not delete cluster-scoped objects with a namespace: Pulumi must delete
    # them itself, so they may not carry deleted_with (which skips the delete call).
    isolations = [r for r in run.resources if r.name.endswith("-cluster-isolation")]
    assert len(isolations) == len(_tenant_namespaces(run))
    for resource in isolations:
        assert resource.deleted_with is None
        assert any(d.endswith("-namespace") for d in resource.dependencies), resource.dependencies
