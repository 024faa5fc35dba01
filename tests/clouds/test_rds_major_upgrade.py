"""A tenant upgrades an RDS database by changing `databases.<n>.version` (the way off a version
before its end of standard support, components/clouds/aws/engine_rules.py). Two things must hold
for that `up` to succeed:

- The instance allows major version upgrades. ModifyDBInstance, AllowMajorVersionUpgrade: "This
  parameter must be set to true when specifying a value for the EngineVersion parameter that is a
  different major version than the DB instance's current version."
  (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_ModifyDBInstance.html)
- The instance's parameter group can be replaced: its family (and name) follow the major version,
  and `family` cannot change in place, so the engine replaces the group. A protected resource
  cannot be replaced (https://www.pulumi.com/docs/iac/concepts/resources/options/protect/), so
  the group holds no data and is not protected; it is retained with the instance once released.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import DECOMMISSIONED_ON, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, RecordedResource

GROUP = "aws:rds/parameterGroup:ParameterGroup"
INSTANCE = "aws:rds/instance:Instance"


def _billing(version: str, **fields: object) -> dict[str, object]:
    return tenant_document("shop", databases=[{"name": "billing", "engine": "mysql", "version": version}], **fields)


def _of_shop(run: ProgramRun, kind: str) -> list[RecordedResource]:
    return [r for r in run.of_type(kind) if r.name.startswith("shop-")]


def test_every_instance_allows_the_major_upgrade_its_tenant_asks_for(prod_aws_plan: ProgramRun) -> None:
    instances = prod_aws_plan.of_type(INSTANCE)
    assert instances
    for instance in instances:
        assert instance.inputs.get("allowMajorVersionUpgrade") is True, instance.name


def test_a_version_change_replaces_an_unprotected_parameter_group(tmp_path: Path) -> None:
    before = plan("prod-aws", write_tenants(tmp_path / "a", _billing("8.4")))
    groups = _of_shop(before, GROUP)
    assert groups and {g.inputs["family"] for g in groups} == {"mysql8.4"}
    for group in groups:
        assert not group.protect, group.name
    # The instance itself stays protected: it holds the data.
    assert all(i.protect for i in _of_shop(before, INSTANCE))


def test_a_released_tenant_keeps_the_group_with_its_instance(tmp_path: Path) -> None:
    run = plan(
        "prod-aws",
        write_tenants(tmp_path, _billing("8.4", lifecycle="decommissioned", decommissionedOn=DECOMMISSIONED_ON)),
    )
    groups = _of_shop(run, GROUP)
    assert groups and all(g.retain_on_delete for g in groups)
