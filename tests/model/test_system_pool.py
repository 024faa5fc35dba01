"""A stack that creates the cluster's node pools names the untainted pool the platform's own pods run on.

Every pool the stack creates is tainted `tenancy.io/pool=<pool>:NoSchedule` (components/pools); the
cluster's machinery (CoreDNS, Karpenter, External Secrets, Flux) tolerates none of those taints, so
it needs a pool without taints that the stack does not manage.
"""

from __future__ import annotations

import json

import pytest

from components.model.errors import ConfigurationError
from components.model.stack import parse_settings
from tools.harness import PROJECT_ROOT, stack_config

BASE = {"tenancy:domainSuffix": "tenants.example.com"}
GCP = {
    "tenancy:cloud": "gcp",
    "tenancy:gcp": '{"project": "tenancy-test", "region": "europe-west1"}',
    "tenancy:nodePools": json.dumps({"shared": {"kind": "gke", "costCode": "platform", "minNodes": 1, "maxNodes": 3}}),
}


def _problems(config: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({**BASE, **config}, "Pulumi.test.yaml")
    return [str(problem) for problem in raised.value.problems]


def test_a_stack_whose_created_pools_are_all_tainted_must_name_the_system_pool() -> None:
    [problem] = _problems(GCP)
    assert problem.startswith("Pulumi.test.yaml: tenancy:cluster.systemPool: every pool this stack creates is tainted")
    assert "(shared)" in problem
    settings = parse_settings({**BASE, **GCP, "tenancy:cluster": '{"systemPool": "default-pool"}'}, "Pulumi.test.yaml")
    assert settings.cluster.system_pool == "default-pool"


def test_the_system_pool_is_not_one_the_stack_taints() -> None:
    [problem] = _problems({**GCP, "tenancy:cluster": '{"systemPool": "shared"}'})
    assert "tenancy:cluster.systemPool: 'shared' is a pool of tenancy:nodePools" in problem


def test_local_stacks_and_stacks_without_created_pools_need_none() -> None:
    assert parse_settings(BASE, "Pulumi.test.yaml").cluster.system_pool is None
    existing = json.dumps({"shared": {"kind": "existing", "costCode": "platform"}})
    assert parse_settings({**BASE, **GCP, "tenancy:nodePools": existing}, "x").cluster.system_pool is None


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_the_committed_cloud_stacks_name_their_system_pool(stack: str) -> None:
    config, _ = stack_config(stack, root=PROJECT_ROOT)
    settings = parse_settings(config, f"Pulumi.{stack}.yaml")
    assert settings.cluster.system_pool is not None
    assert settings.cluster.system_pool not in settings.node_pools
