"""AWS database access per tenant environment, the second lock (docs/adr/0017): a security group
per environment and per shared instance, joined by the environment's database clients through a
SecurityGroupPolicy; who it admits (tests/clouds/security_groups.py), that tenants cannot write
the policy, and refusals. The first lock, per-environment DB subnets, is in
tests/guardrails/test_network_connectivity.py::test_aws_dev_pods_reach_only_dev_databases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from components.model.core.labels import DATABASE_CLIENT_KEY
from tests.admission.layers import ACME_ADMIN, ACME_DEV, WRITERS, cluster
from tests.clouds.security_groups import NODE, admits, pod_groups
from tests.k8s_schema import has_crd, validate_custom
from tests.support import EXAMPLE_TENANTS, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, new_monitor, run_program, stack_config

CLUSTER_GROUP = "sg-0c1d2e3f405162738"
CLIENT = {DATABASE_CLIENT_KEY: "true"}
SGP_RESOURCE = "vpcresources.k8s.aws/v1beta1/securitygrouppolicies"
_PLANS: dict[str, ProgramRun] = {}


def _example() -> ProgramRun:
    if "run" not in _PLANS:
        _PLANS["run"] = plan("prod-aws", EXAMPLE_TENANTS)
    return _PLANS["run"]


def _owner(instance: Any) -> tuple[str, str]:
    tags = instance.inputs.get("tags", {})
    return tags.get("tenant", "platform"), tags.get("environment", "-")


def _tenant_namespaces(run: ProgramRun) -> dict[str, tuple[str, str]]:
    return {
        n["metadata"]["name"]: (
            n["metadata"]["labels"]["tenancy.io/tenant"],
            n["metadata"]["labels"]["tenancy.io/environment"],
        )
        for n in objects_of_kind(run, "Namespace")
        if "tenancy.io/tenant" in n["metadata"].get("labels", {})
    }


def test_each_environment_group_admits_only_its_own_database_clients() -> None:
    run = _example()
    namespaces = _tenant_namespaces(run)
    dedicated = [i for i in run.of_type("aws:rds/instance:Instance") if _owner(i)[0] != "platform"]
    assert {("acme", "dev"), ("acme", "prod")} <= {_owner(i) for i in dedicated}
    for instance in dedicated:
        port = 5432 if instance.inputs["engine"] == "postgres" else 3306
        admitted = {ns for ns in namespaces if admits(run, ns, instance, port, CLIENT)}
        assert admitted == {ns for ns, owner in namespaces.items() if owner == _owner(instance)}, instance.name
        # Nothing on a port that is not a database port, no pod of a namespace without a policy,
        # and no pod that is not a database client.
        assert not any(admits(run, ns, instance, 22, CLIENT) for ns in namespaces)
        assert not any(admits(run, ns, instance, port) for ns in namespaces)


def test_groups_have_only_member_rules_on_database_ports_and_no_egress() -> None:
    groups = _example().of_type("aws:ec2/securityGroup:SecurityGroup")
    assert groups
    for group in groups:
        assert group.inputs["vpcId"] == "vpc-0a1b2c3d4e5f60718"
        assert group.inputs["egress"] == []
        assert [(r["fromPort"], r["toPort"], r["self"]) for r in group.inputs["ingress"]] == [
            (3306, 3306, True),
            (5432, 5432, True),
        ]


def test_policy_puts_the_database_clients_of_the_namespace_in_its_groups_and_the_cluster_group() -> None:
    """Only labelled pods get branch ENIs: the rest keep the node's networking, so the EKS Pod
    Identity agent stays reachable for them whatever the CNI's enforcing mode (docs/adr/0017)."""
    run = _example()
    policies = objects_of_kind(run, "SecurityGroupPolicy")
    assert {p["metadata"]["namespace"] for p in policies} >= {"tenant-acme-dev", "tenant-acme-prod"}
    for policy in policies:
        namespace = policy["metadata"]["namespace"]
        assert policy["metadata"]["name"] == "tenancy-databases"
        assert policy["metadata"]["labels"]["tenancy.io/platform-owned"] == "true"
        assert policy["spec"]["podSelector"] == {"matchLabels": CLIENT}
        assert pod_groups(run, namespace, CLIENT) == {
            f"{namespace.removeprefix('tenant-')}-databases-id",
            CLUSTER_GROUP,
        }
        assert pod_groups(run, namespace) == {NODE}
    # A namespace without databases keeps the node's groups.
    assert pod_groups(run, "tenant-status-page-prod") == {NODE}


def test_policy_passes_the_upstream_crd() -> None:
    policy = objects_of_kind(_example(), "SecurityGroupPolicy")[0]
    if not has_crd(policy):
        pytest.skip(
            "no SecurityGroupPolicy CRD in the CRD dir (aws/amazon-vpc-resource-controller-k8s, config/crd/bases)"
        )
    validate_custom(policy)


@pytest.mark.parametrize("writer", WRITERS)
def test_tenants_cannot_write_a_security_group_policy(writer: Any) -> None:
    """The attack: dev pods join prod's group by a policy of their own. RBAC stops it."""
    who, namespace = writer
    stolen = {
        "apiVersion": "vpcresources.k8s.aws/v1beta1",
        "kind": "SecurityGroupPolicy",
        "metadata": {"name": "mine", "namespace": namespace},
        "spec": {"podSelector": {}, "securityGroups": {"groupIds": ["acme-prod-databases-id"]}},
    }
    layers = cluster(_example())
    assert layers.attempt(who, "CREATE", SGP_RESOURCE, stolen, namespace).stopped_by == "rbac"
    [own] = [p for p in objects_of_kind(_example(), "SecurityGroupPolicy", ACME_DEV)]
    assert layers.attempt(ACME_ADMIN, "DELETE", SGP_RESOURCE, None, ACME_DEV, old=own).stopped_by == "rbac"


def test_shared_instance_group_joins_only_environments_with_a_database_on_it(tmp_path: Path) -> None:
    shared = {"name": "ledger", "engine": "postgres", "version": "16", "placement": "shared"}
    tenants = write_tenants(tmp_path, tenant_document("shop", databases=[{**shared, "environments": ["prod"]}]))
    run = plan("prod-aws", tenants)
    [instance] = [i for i in run.of_type("aws:rds/instance:Instance") if i.name == "shared-pg16"]
    assert "shared-pg16-clients-id" in instance.inputs["vpcSecurityGroupIds"]
    assert pod_groups(run, "tenant-shop-prod", CLIENT) == {"shared-pg16-clients-id", CLUSTER_GROUP}
    assert admits(run, "tenant-shop-prod", instance, 5432, CLIENT)
    assert not admits(run, "tenant-shop-dev", instance, 5432, CLIENT)


def _refused(tmp_path: Path, missing: str) -> str:
    aws = json.loads(stack_config("prod-aws")[0]["tenancy:aws"])
    del aws[missing]
    tenant = tenant_document("shop", databases=[{"name": "orders", "engine": "postgres", "version": "16"}])
    overrides = {
        "tenancy:tenantsDir": str(write_tenants(tmp_path, tenant)),
        "tenancy:aws": json.dumps(aws),
        "tenancy:data": "{}",
    }
    config, secret_keys = stack_config("prod-aws", overrides)
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program("prod-aws", config, secret_keys, monitor=monitor)
    assert monitor.recorded == []
    return str(raised.value)


@pytest.mark.parametrize("missing", ["vpcId", "podSecurityGroupIds"])
def test_a_database_without_the_security_group_settings_is_refused(tmp_path: Path, missing: str) -> None:
    message = _refused(tmp_path, missing)
    assert f"databases.0: RDS needs tenancy:aws.{missing}" in message
    assert "shop.yaml" in message
