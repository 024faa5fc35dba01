"""A stack that creates the cluster's node pools names the untainted pool the platform's own pods run on.

Every pool the stack creates is tainted `tenancy.io/pool=<pool>:NoSchedule` (components/pools); the
cluster's machinery (CoreDNS, Karpenter, External Secrets, Flux) tolerates none of those taints, so
it needs a pool without taints that the stack does not manage.
"""

from __future__ import annotations

import json

import pytest

from components.clouds.registry import cloud_for
from components.model.catalog.stack_config import parse_settings
from components.model.checks.stack import system_pool_problems
from tools.plan.harness import PROJECT_ROOT, stack_config

BASE = {"tenancy:domainSuffix": "tenants.example.com"}
GCP = {
    "tenancy:cloud": "gcp",
    "tenancy:gcp": '{"project": "tenancy-test", "region": "europe-west1"}',
    "tenancy:nodePools": json.dumps({"shared": {"kind": "gke", "costCode": "platform", "minNodes": 1, "maxNodes": 3}}),
}


def _problems(config: dict[str, str]) -> list[str]:
    settings = parse_settings({**BASE, **config}, "Pulumi.test.yaml")
    return [str(problem) for problem in system_pool_problems(settings, cloud_for(settings))]


def test_a_stack_whose_created_pools_are_all_tainted_must_name_the_system_pool() -> None:
    [problem] = _problems(GCP)
    assert problem.startswith("Pulumi.test.yaml: tenancy:cluster.systemPool: every pool this stack creates is tainted")
    assert "(shared)" in problem
    assert _problems({**GCP, "tenancy:cluster": '{"systemPool": "default-pool"}'}) == []


def test_the_system_pool_is_not_one_the_stack_taints() -> None:
    [problem] = _problems({**GCP, "tenancy:cluster": '{"systemPool": "shared"}'})
    assert "tenancy:cluster.systemPool: 'shared' is a pool of tenancy:nodePools" in problem


def test_local_stacks_and_stacks_without_created_pools_need_none() -> None:
    assert _problems({}) == []
    existing = json.dumps({"shared": {"kind": "existing", "costCode": "platform"}})
    assert _problems({**GCP, "tenancy:nodePools": existing}) == []
    # A kind the cloud cannot run is reported as that (catalog pool_problems), not as a missing system pool.
    assert _problems({"tenancy:nodePools": GCP["tenancy:nodePools"]}) == []


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_the_committed_cloud_stacks_name_their_system_pool(stack: str) -> None:
    config, _ = stack_config(stack, root=PROJECT_ROOT)
    settings = parse_settings(config, f"Pulumi.{stack}.yaml")
    assert system_pool_problems(settings, cloud_for(settings)) == []
    assert settings.cluster.system_pool is not None
    assert settings.cluster.system_pool not in settings.node_pools


def test_the_plan_refuses_the_stack_and_registers_nothing() -> None:
    from components.model.core.errors import ConfigurationError
    from tools.plan.harness import new_monitor, run_program

    config, secret_keys = stack_config("prod", {"tenancy:cluster": '{"name": "tenancy-prod"}'}, root=PROJECT_ROOT)
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program("prod", config, secret_keys, monitor=monitor)
    assert [p.field for p in raised.value.problems] == ["tenancy:cluster.systemPool"]
    assert monitor.recorded == []
