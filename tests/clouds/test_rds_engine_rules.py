"""RDS engine rules (components/clouds/aws/engine_rules.py) over the rendered prod-aws plan: every
instance refuses plaintext through a parameter group of its own family, is created without paid
Extended Support (a setting existing instances keep, never a reason to replace one), and has a
master user name the engine accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.clouds.aws import engine_rules
from components.clouds.aws.cloud import CAPABILITIES
from components.clouds.aws.engine_rules import END_OF_STANDARD_SUPPORT, ENGINES, EXTENDED_SUPPORT_DISABLED
from tests.clouds.test_identity_reach import _run
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun


def _groups(run: ProgramRun) -> dict[str, dict[str, object]]:
    return {g.inputs["name"]: g.inputs for g in run.of_type("aws:rds/parameterGroup:ParameterGroup")}


def test_every_instance_requires_tls() -> None:
    run = _run("prod-aws")
    groups = _groups(run)
    instances = run.of_type("aws:rds/instance:Instance")
    assert {i.inputs["engine"] for i in instances} == {"mysql", "postgres"}
    for instance in instances:
        engine, version = instance.inputs["engine"], instance.inputs["engineVersion"]
        group = groups[instance.inputs["parameterGroupName"]]
        assert group["family"] == engine_rules.family(engine, version), instance.name
        parameters = {p["name"]: p["value"] for p in group["parameters"]}  # type: ignore[attr-defined]
        assert parameters[ENGINES[engine].tls_parameter] == "1", instance.name


def test_mysql_refuses_plaintext() -> None:
    assert engine_rules.tls_parameters("mysql") == [
        {"name": "require_secure_transport", "value": "1", "apply_method": "immediate"}
    ]


def test_no_paid_extended_support_and_no_replacement_over_it() -> None:
    for instance in _run("prod-aws").of_type("aws:rds/instance:Instance"):
        assert instance.inputs["engineLifecycleSupport"] == EXTENDED_SUPPORT_DISABLED, instance.name
        assert "engineLifecycleSupport" in instance.ignore_changes, instance.name


def test_every_offered_version_has_its_end_of_standard_support() -> None:
    offered = {(engine, version) for engine, versions in CAPABILITIES.engine_versions.items() for version in versions}
    assert offered <= END_OF_STANDARD_SUPPORT.keys()


@pytest.mark.parametrize(("engine", "limit"), [("mysql", 16), ("postgres", 63)])
def test_master_user_names_fit_the_engine(engine: str, limit: int) -> None:
    assert len(engine_rules.master_username(engine, "d" + "c" * 30)) == min(31, limit)


def test_a_long_mysql_database_gets_a_16_character_master_user(tmp_path: Path) -> None:
    name = "d" + "c" * 30
    tenant = tenant_document("shop", databases=[{"name": name, "engine": "mysql", "version": "8.4"}])
    run = plan("prod-aws", write_tenants(tmp_path, tenant))
    instances = [i for i in run.of_type("aws:rds/instance:Instance") if i.name.startswith("shop-")]
    assert len(instances) == 2  # dev and prod
    assert {i.inputs["username"] for i in instances} == {name[:16]}


def test_every_rds_instance_applies_its_changes_when_up_runs(prod_aws_plan: ProgramRun) -> None:
    """Without apply_immediately, a class or storage edit stays pending until the maintenance window
    and every `up` before it shows the same diff (docs/adr/0036-rds-changes-apply-when-merged.md)."""
    instances = prod_aws_plan.of_type("aws:rds/instance:Instance")
    assert instances
    assert all(i.inputs.get("applyImmediately") is True for i in instances), [i.name for i in instances]
