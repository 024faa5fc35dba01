"""The Tenant component as the real program renders it for the example stacks and for tenants a
test writes: the component tree, labels, quotas, isolation, access and outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.model.core.labels import MANAGED_BY_KEY, TENANT_KEY
from tests.support import objects_of_kind, plan, resources_of_tenant, tenant_document, write_tenants
from tools.plan.harness import ProgramRun


def test_one_tenant_component_per_tenant_in_the_stack(dev_plan: ProgramRun, prod_plan: ProgramRun) -> None:
    assert sorted(r.name for r in dev_plan.of_type("tenancy:index:Tenant")) == [
        "acme",
        "genomics-lab",
        "operator-lab",
        "status-page",
    ]
    assert sorted(r.name for r in prod_plan.of_type("tenancy:index:Tenant")) == [
        "acme",
        "genomics-lab",
        "northwind",
        "operator-lab",
        "status-page",
    ]


def test_every_tenant_resource_is_a_descendant_of_its_tenant(dev_plan: ProgramRun) -> None:
    tenants = {r.urn: r.name for r in dev_plan.of_type("tenancy:index:Tenant")}
    by_urn = dev_plan.by_urn()
    for resource in dev_plan.resources:
        namespace = resource.inputs.get("metadata", {}).get("namespace", "")
        if namespace.startswith("tenant-"):
            ancestor = by_urn.get(resource.parent or "")
            while ancestor is not None and ancestor.type != "tenancy:index:Tenant":
                ancestor = by_urn.get(ancestor.parent or "")
            assert ancestor is not None and ancestor.urn in tenants, resource.urn
            assert namespace.startswith(f"tenant-{ancestor.name}-")


def test_child_names_derive_from_the_tenant_name(dev_plan: ProgramRun) -> None:
    for resource in resources_of_tenant(dev_plan, "acme"):
        assert resource.name.startswith("acme"), resource.name


def test_shared_roles_exist_once_per_cluster(dev_plan: ProgramRun) -> None:
    roles = objects_of_kind(dev_plan, "ClusterRole")
    names = sorted(r["metadata"]["name"] for r in roles)
    assert names == [
        "tenancy-tenant-admin",
        "tenancy-tenant-deployer",
        "tenancy-tenant-operator",
        "tenancy-tenant-viewer",
        # Bound by virtual clusters' namespaces (an example tenant has one): components/vcluster/roles.py.
        "tenancy-vcluster-access",
        "tenancy-vcluster-installer",
        "tenancy-vcluster-syncer",
    ]
    assert all(
        dev_plan.tenant_of(r) is None for r in dev_plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
    )


def test_every_kubernetes_object_carries_the_platform_labels(example_plan: ProgramRun) -> None:
    for resource in example_plan.resources:
        if not resource.type.startswith("kubernetes:") or "metadata" not in resource.inputs:
            continue
        labels = resource.inputs["metadata"].get("labels", {})
        assert labels.get(MANAGED_BY_KEY) == "tenancy", resource.urn
        tenant = example_plan.tenant_of(resource)
        if tenant is not None:
            assert labels.get(TENANT_KEY) == tenant, resource.urn
            assert "tenancy.io/environment" in labels, resource.urn


def test_namespaces_enforce_pod_security_restricted(dev_plan: ProgramRun) -> None:
    namespace = next(n for n in objects_of_kind(dev_plan, "Namespace") if n["metadata"]["name"] == "tenant-acme-dev")
    labels = namespace["metadata"]["labels"]
    for mode in ("enforce", "audit", "warn"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted"
        assert labels[f"pod-security.kubernetes.io/{mode}-version"] == "v1.36"
    assert labels["tenancy.io/cost-center"] == "cust-acme"
    assert labels["tenancy.io/pool"] == "customers"


def test_objects_inside_a_namespace_are_deleted_with_it_unless_it_holds_data(dev_plan: ProgramRun) -> None:
    # A namespace holding data is protected: each object inside it gets its own delete, which the
    # state records, never a skipped one (components/clouds/base.py InNamespace, docs/real-run.md).
    namespaces = {r.inputs["metadata"]["name"]: r for r in dev_plan.of_type("kubernetes:core/v1:Namespace")}
    inside = [r for r in dev_plan.resources if r.inputs.get("metadata", {}).get("namespace") in namespaces]
    holding = {
        r.inputs["metadata"]["namespace"] for r in inside if namespaces[r.inputs["metadata"]["namespace"]].protect
    }
    assert "tenant-acme-dev" in holding and len(holding) < len({r.inputs["metadata"]["namespace"] for r in inside})
    for resource in inside:
        namespace = namespaces[resource.inputs["metadata"]["namespace"]]
        assert resource.deleted_with == (None if namespace.protect else namespace.urn), resource.urn


def test_quota_from_tier(dev_plan: ProgramRun) -> None:
    # The large tier (32 CPU, 128Gi, 200 pods) is the tenant's total: dev and prod get half each.
    (quota,) = objects_of_kind(dev_plan, "ResourceQuota", "tenant-genomics-lab-dev")
    hard = quota["spec"]["hard"]
    assert hard["requests.cpu"] == "16" and hard["limits.memory"] == "64Gi" and hard["pods"] == "100"
    assert hard["requests.ephemeral-storage"] == "50Gi" and hard["limits.ephemeral-storage"] == "100Gi"
    assert hard["services.nodeports"] == "0" and hard["services.loadbalancers"] == "0"


def test_quota_custom(prod_plan: ProgramRun) -> None:
    # One environment: the whole custom quota; what it leaves out comes from the default tier (small).
    (quota,) = objects_of_kind(prod_plan, "ResourceQuota", "tenant-status-page-prod")
    hard = quota["spec"]["hard"]
    assert {key: hard[key] for key in ("requests.cpu", "requests.memory", "limits.cpu", "limits.memory")} == {
        "requests.cpu": "500m",
        "requests.memory": "512Mi",
        "limits.cpu": "2",
        "limits.memory": "1Gi",
    }
    assert hard["pods"] == "10" and hard["services"] == "3"
    assert hard["services.loadbalancers"] == "0" and hard["services.nodeports"] == "0"
    assert hard["requests.ephemeral-storage"] == "10Gi" and hard["requests.storage"] == "100Gi"
    assert hard["count/deployments.apps"] == "20" and hard["secrets"] == "100"


def test_limit_range_defaults(dev_plan: ProgramRun) -> None:
    (limits,) = objects_of_kind(dev_plan, "LimitRange", "tenant-acme-dev")
    (container,) = limits["spec"]["limits"]
    assert container["type"] == "Container"
    assert container["defaultRequest"] == {"cpu": "100m", "memory": "128Mi", "ephemeral-storage": "256Mi"}
    assert container["default"] == {"cpu": "1", "memory": "512Mi", "ephemeral-storage": "1Gi"}


def test_network_isolation(dev_plan: ProgramRun) -> None:
    (policy,) = objects_of_kind(dev_plan, "NetworkPolicy", "tenant-acme-dev")
    spec = policy["spec"]
    assert spec["podSelector"] == {} and spec["policyTypes"] == ["Ingress", "Egress"]
    ingress_sources = [peer for rule in spec["ingress"] for peer in rule["from"]]
    assert {"podSelector": {}} in ingress_sources
    platform = sorted(
        p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
        for p in ingress_sources
        if "namespaceSelector" in p and "podSelector" not in p
    )
    assert platform == ["monitoring"]
    # The Gateway's proxies reach the tenant on its route ports only (acme: routePorts [8080]).
    (gateway,) = [
        r
        for r in spec["ingress"]
        if any("podSelector" in p and "namespaceSelector" in p for p in r["from"])
        and r["from"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] == "envoy-gateway-system"
    ]
    assert gateway["ports"] == [{"port": 8080, "protocol": "TCP"}]
    assert gateway["from"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "proxy"
    # Operators are admitted by namespace and pod labels together (docs/network.md).
    dns_rule = next(rule for rule in spec["egress"] if "ports" in rule)
    assert sorted((p["protocol"], p["port"]) for p in dns_rule["ports"]) == [("TCP", 53), ("UDP", 53)]
    assert dns_rule["to"][0]["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}
    # Nothing else leaves the namespace: the namespace itself, DNS, and dev's API server range.
    allowed: tuple[object, ...] = (
        {"podSelector": {}},
        dns_rule["to"][0],
        {"ipBlock": {"cidr": "172.18.0.0/16"}},
    )
    assert all(peer in allowed for rule in spec["egress"] for peer in rule["to"])


def test_platform_namespace_ports_are_honoured(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme"))
    run = plan("dev", directory, platformNamespaces='[{"name": "monitoring", "ports": [9090, 8080]}]')
    (policy,) = objects_of_kind(run, "NetworkPolicy", "tenant-acme-dev")
    monitoring = policy["spec"]["ingress"][1]
    assert monitoring["ports"] == [{"port": 9090, "protocol": "TCP"}, {"port": 8080, "protocol": "TCP"}]


def test_dev_bindings_follow_roles_and_prod_is_read_only(dev_plan: ProgramRun) -> None:
    dev = {b["metadata"]["name"]: b for b in objects_of_kind(dev_plan, "RoleBinding", "tenant-acme-dev")}
    assert dev["tenancy-admin"]["roleRef"]["name"] == "tenancy-tenant-admin"
    assert [s["name"] for s in dev["tenancy-admin"]["subjects"]] == ["acme-admins"]
    assert dev["tenancy-operator"]["roleRef"]["name"] == "tenancy-tenant-operator"
    prod = {b["metadata"]["name"]: b for b in objects_of_kind(dev_plan, "RoleBinding", "tenant-acme-prod")}
    assert set(prod) == {"tenancy-viewer", "tenancy-deployer"}
    assert [s["name"] for s in prod["tenancy-viewer"]["subjects"]] == ["acme-admins", "acme-oncall", "acme-support"]
    assert prod["tenancy-deployer"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "deployer", "namespace": "tenant-acme-prod"}
    ]


def test_deployer_account_does_not_mount_tokens(dev_plan: ProgramRun) -> None:
    (account,) = objects_of_kind(dev_plan, "ServiceAccount", "tenant-acme-dev")
    assert account["metadata"]["name"] == "deployer"
    assert account["automountServiceAccountToken"] is False


def test_per_stack_override_and_stack_limits(dev_plan: ProgramRun, prod_plan: ProgramRun) -> None:
    assert "northwind" not in dev_plan.outputs["tenants"]
    assert prod_plan.outputs["tenants"]["northwind"]["namespaces"] == {"prod": "tenant-northwind-prod"}


def test_outputs_list_namespaces_and_deployers(dev_plan: ProgramRun) -> None:
    acme = dev_plan.outputs["tenants"]["acme"]
    assert acme["namespaces"] == {"dev": "tenant-acme-dev", "prod": "tenant-acme-prod"}
    assert acme["deployers"]["prod"] == "system:serviceaccount:tenant-acme-prod:deployer"


# The default tier (small, 20 pods) split over dev and prod: 10 each.
@pytest.mark.parametrize(("lifecycle", "pods"), [("active", "10"), ("suspended", "0")])
def test_suspended_tenant_admits_no_pods(tmp_path: Path, lifecycle: str, pods: str) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", lifecycle=lifecycle))
    run = plan("dev", directory)
    (quota,) = objects_of_kind(run, "ResourceQuota", "tenant-acme-dev")
    assert quota["spec"]["hard"]["pods"] == pods
    assert len(tenant_namespaces(run)) == 2


def tenant_namespaces(run: ProgramRun) -> list[dict[str, Any]]:
    """The tenant's namespaces (the dev stack also has the platform's `tenancy-shared`)."""
    return [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"].startswith("tenant-")]


def test_decommissioned_tenant_keeps_nothing_in_the_cluster(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", lifecycle="decommissioned"))
    run = plan("dev", directory)
    assert tenant_namespaces(run) == []


def test_load_balancers_only_when_allowed(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", allowLoadBalancer=True))
    (quota,) = objects_of_kind(plan("dev", directory), "ResourceQuota", "tenant-acme-dev")
    assert "services.loadbalancers" not in quota["spec"]["hard"]


def test_resources_per_minimal_tenant_stay_low(tmp_path: Path) -> None:
    directory = write_tenants(
        tmp_path / "tenants", tenant_document("acme", access={"admin": ["a"], "operator": ["o"], "viewer": ["v"]})
    )
    run = plan("dev", directory)
    # 1 component + per environment: namespace, quota, limits, network policy, deployer account and binding,
    # and group bindings (3 in dev, 1 viewer binding in read-only prod).
    namespaced = [r for r in resources_of_tenant(run, "acme") if r.type.startswith("kubernetes:")]
    assert len(namespaced) <= 2 * 9
