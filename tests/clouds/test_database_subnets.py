"""Per-environment DB subnets on AWS (components/clouds/aws/subnets.py, docs/adr/0017): where
instances live, and the stack settings refused before anything is registered, naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from tests.support import EXAMPLE_TENANTS, plan, tenant_document, write_tenants
from tools.plan.harness import new_monitor, run_program, stack_config

_ORDERS = {"name": "orders", "engine": "postgres", "version": "16"}


def _aws() -> dict[str, Any]:
    settings: dict[str, Any] = json.loads(stack_config("prod-aws")[0]["tenancy:aws"])
    return settings


def _refused(tmp_path: Path, aws: dict[str, Any]) -> str:
    overrides = {
        "tenancy:tenantsDir": str(write_tenants(tmp_path, tenant_document("shop", databases=[_ORDERS]))),
        "tenancy:aws": json.dumps(aws),
    }
    config, secret_keys = stack_config("prod-aws", overrides)
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program("prod-aws", config, secret_keys, monitor=monitor)
    assert monitor.recorded == []
    return str(raised.value)


def test_instances_live_in_their_environments_subnets() -> None:
    groups = {env: subnets["subnetGroup"] for env, subnets in _aws()["databaseSubnets"].items()}
    run = plan("prod-aws", EXAMPLE_TENANTS)
    instances = run.of_type("aws:rds/instance:Instance")
    for instance in instances:
        tags = instance.inputs["tags"]
        if "environment" in tags:
            assert instance.inputs["dbSubnetGroupName"] == groups[tags["environment"]], instance.name
    by_name = {i.name: i.inputs["dbSubnetGroupName"] for i in instances}
    # A shared instance serving only prod lives in prod's subnets; one serving every environment
    # in the shared ones.
    assert by_name["shared-mysql84"] == groups["prod"]
    assert by_name["shared-pg16"] == _aws()["dbSubnetGroup"]


def test_an_environment_with_databases_needs_its_own_subnets(tmp_path: Path) -> None:
    aws = _aws()
    del aws["databaseSubnets"]["dev"]
    message = _refused(tmp_path, aws)
    assert "Pulumi.prod-aws.yaml: tenancy:aws.databaseSubnets.dev: required: tenant shop has databases in 'dev'" in (
        message
    )


def test_no_database_subnets_at_all_is_refused_on_the_database(tmp_path: Path) -> None:
    aws = _aws()
    del aws["databaseSubnets"]
    assert "shop.yaml: databases.0: RDS needs tenancy:aws.databaseSubnets" in _refused(tmp_path, aws)


@pytest.mark.parametrize(
    ("dev", "other"),
    [("10.20.98.0/24", "databaseSubnets.prod 10.20.98.0/23"), ("10.20.100.0/24", "databaseCidrs 10.20.100.0/23")],
)
def test_overlapping_environments_are_refused(tmp_path: Path, dev: str, other: str) -> None:
    aws = _aws()
    aws["databaseSubnets"]["dev"]["cidrs"] = [dev]
    message = _refused(tmp_path, aws)
    assert "tenancy:aws" in message and other in message and "overlaps" in message


def test_subnets_for_an_unknown_environment_are_refused(tmp_path: Path) -> None:
    aws = _aws()
    aws["databaseSubnets"]["staging"] = {"subnetGroup": "tenancy-prod-databases-staging", "cidrs": ["10.20.102.0/23"]}
    assert "tenancy:aws.databaseSubnets.staging: 'staging' is not in tenancy:environments" in _refused(tmp_path, aws)


def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(stack_config("prod-aws")[0]["tenancy:data"])
    return data


def _refused_data(tmp_path: Path, data: dict[str, Any]) -> str:
    overrides = {
        "tenancy:tenantsDir": str(write_tenants(tmp_path, tenant_document("shop", databases=[_ORDERS]))),
        "tenancy:data": json.dumps(data),
    }
    config, secret_keys = stack_config("prod-aws", overrides)
    with pytest.raises(ConfigurationError) as raised:
        run_program("prod-aws", config, secret_keys, monitor=new_monitor())
    return str(raised.value)


def test_adding_an_environment_never_moves_a_shared_instance_to_another_subnet_group(tmp_path: Path) -> None:
    """RDS cannot move an instance to another DB subnet group of the same VPC: adding dev to the
    prod-only mysql84 used to move it from prod's group to the shared one. Now it is refused."""
    data = _data()
    data["sharedInstances"]["mysql84"]["environments"] = ["dev", "prod"]
    message = _refused_data(tmp_path, data)
    assert "tenancy:data.sharedInstances.mysql84.environments: it lives in 'prod''s DB subnets" in message


def test_a_single_environment_instance_must_say_where_it_lives(tmp_path: Path) -> None:
    data = _data()
    del data["sharedInstances"]["mysql84"]["subnets"]
    message = _refused_data(tmp_path, data)
    assert "tenancy:data.sharedInstances.mysql84.subnets: required: it serves only 'prod'" in message


def test_an_instance_in_the_shared_subnets_stays_there_whatever_it_serves(tmp_path: Path) -> None:
    groups = []
    for environments in (["prod"], ["dev", "prod"]):
        data = _data()
        data["sharedInstances"]["mysql84"].update(subnets="shared", environments=environments)
        run = plan("prod-aws", EXAMPLE_TENANTS, data=json.dumps(data))
        (instance,) = [r for r in run.of_type("aws:rds/instance:Instance") if r.name == "shared-mysql84"]
        groups.append(instance.inputs["dbSubnetGroupName"])
    assert groups == [_aws()["dbSubnetGroup"]] * 2
