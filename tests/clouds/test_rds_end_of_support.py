"""New RDS databases on a major version past its end of standard support are refused before
anything is registered (components/model/checks/engine_support.py).

The program creates every instance with `EngineLifecycleSupport` =
`open-source-rds-extended-support-disabled`; the API reference says that "creating the DB instance
will fail if the DB major version is past its end of standard support date"
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBInstance.html, and
https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/extended-support-creating-db-instance.html:
"creating the DB instance ... always fails"). The dates are the "RDS end of standard support date"
columns of https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/MySQL.Concepts.VersionMgmt.html
and https://docs.aws.amazon.com/AmazonRDS/latest/PostgreSQLReleaseNotes/postgresql-release-calendar.html.
"""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from components.clouds.aws.engine_rules import END_OF_STANDARD_SUPPORT
from components.model.checks import engine_support
from components.model.core.errors import ConfigurationError
from components.model.settings.sharding import shard_of
from tests.support import plan, tenant_document, write_tenants
from tests.vcluster.helpers import previous_outputs
from tools.plan.harness import PROJECT_ROOT, run_stack
from tools.scale.shards import generated_files

# The calendars' dates, as read from the AWS tables (see the module docstring).
CALENDAR = {
    ("mysql", "8.0"): date(2026, 7, 31),
    ("mysql", "8.4"): date(2029, 7, 31),
    ("postgres", "13"): date(2026, 2, 28),
    ("postgres", "14"): date(2027, 2, 28),
    ("postgres", "15"): date(2028, 2, 29),
    ("postgres", "16"): date(2029, 2, 28),
    ("postgres", "17"): date(2030, 2, 28),
}
AFTER_MYSQL_80 = date(2026, 11, 26)


def test_dates_are_the_calendars() -> None:
    assert END_OF_STANDARD_SUPPORT == CALENDAR


def _billing(version: str = "8.0", **fields: object) -> dict[str, object]:
    database = {"name": "billing", "engine": "mysql", "version": version, **fields}
    return tenant_document("shop", databases=[database])


@pytest.fixture
def after_mysql_80(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_support, "today", lambda: AFTER_MYSQL_80)


@pytest.mark.usefixtures("after_mysql_80")
def test_a_new_mysql_80_database_is_refused_on_aws(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        plan("prod-aws", write_tenants(tmp_path, _billing()))
    message = str(raised.value)
    assert "shop.yaml: databases.0.version: mysql 8.0 reached its end of standard support on 2026-07-31" in message
    assert "refuses to create one on that version (dev, prod, not in the stack's last outputs)" in message


@pytest.mark.usefixtures("after_mysql_80")
def test_a_new_postgres_13_database_is_refused_on_aws(tmp_path: Path) -> None:
    document = tenant_document("shop", databases=[{"name": "orders", "engine": "postgres", "version": "13"}])
    with pytest.raises(ConfigurationError, match=r"databases\.0\.version: postgres 13 .* 2026-02-28"):
        plan("prod-aws", write_tenants(tmp_path, document))


@pytest.mark.usefixtures("after_mysql_80")
def test_a_database_the_stack_deployed_before_is_not_refused(tmp_path: Path) -> None:
    databases = {env: {"billing": {"instance": f"shop-{env}-db-billing"}} for env in ("dev", "prod")}
    deployed = {"tenants": {"shop": {"data": {"databases": databases}}}}
    with previous_outputs("prod-aws", deployed):
        run = plan("prod-aws", write_tenants(tmp_path / "a", _billing()))
    versions = [i.inputs["engineVersion"] for i in run.of_type("aws:rds/instance:Instance") if "billing" in i.name]
    assert versions == ["8.0", "8.0"]
    # Deployed in dev only: the new prod instance is refused, naming prod alone.
    del databases["prod"]
    with (
        previous_outputs("prod-aws", deployed),
        pytest.raises(ConfigurationError, match=r"on that version \(prod, not"),
    ):
        plan("prod-aws", write_tenants(tmp_path / "b", _billing()))


@pytest.mark.usefixtures("after_mysql_80")
def test_a_supported_version_and_the_last_day_of_support_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan("prod-aws", write_tenants(tmp_path / "a", _billing("8.4")))
    monkeypatch.setattr(engine_support, "today", lambda: date(2026, 7, 31))
    plan("prod-aws", write_tenants(tmp_path / "b", _billing()))


def test_a_database_on_the_shared_instance_is_not_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No RDS instance is created for it: it is a database on the stack's (existing) shared instance."""
    monkeypatch.setattr(engine_support, "today", lambda: date(2029, 8, 1))
    shared = _billing("8.4", placement="shared", environments=["prod"])
    plan("prod-aws", write_tenants(tmp_path / "a", shared))
    with pytest.raises(ConfigurationError, match=r"mysql 8\.4 reached its end of standard support on 2029-07-31"):
        plan("prod-aws", write_tenants(tmp_path / "b", _billing("8.4", environments=["prod"])))


@pytest.mark.usefixtures("after_mysql_80")
def test_other_clouds_are_not_affected(tmp_path: Path) -> None:
    plan("dev", write_tenants(tmp_path, _billing()))


@pytest.mark.usefixtures("after_mysql_80")
def test_the_example_tenants_plan_on_aws() -> None:
    """tenants/acme.yaml asks for MySQL 8.0 everywhere but prod-aws, where RDS would refuse it."""
    instances = plan("prod-aws").of_type("aws:rds/instance:Instance")
    billing = {i.inputs["engineVersion"] for i in instances if "legacy" in i.name}
    assert billing == {"8.4"}


@pytest.mark.usefixtures("after_mysql_80")
def test_split_stacks_judge_only_the_databases_they_manage(tmp_path: Path) -> None:
    """A shard's outputs list only its own tenants and the platform stack's none: a database
    another stack deployed is not new to this one, so only its own shard may refuse it."""
    shutil.copy(PROJECT_ROOT / "Pulumi.prod-aws.yaml", tmp_path / "Pulumi.prod-aws.yaml")
    files = generated_files("prod-aws", 2, "acme-platform", "https://git.example.org/p/t.git", root=tmp_path)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    tenants = write_tenants(tmp_path / "tenants", _billing())
    overrides = {"tenancy:tenantsDir": str(tenants)}
    own = shard_of("shop", 2)
    run_stack("prod-aws-platform", overrides, root=tmp_path)
    run_stack(f"prod-aws-shard-{1 - own}", overrides, root=tmp_path)
    with pytest.raises(ConfigurationError, match=r"databases\.0\.version: mysql 8\.0"):
        run_stack(f"prod-aws-shard-{own}", overrides, root=tmp_path)
    databases = {env: {"billing": {"instance": f"shop-{env}-db-billing"}} for env in ("dev", "prod")}
    with previous_outputs(f"prod-aws-shard-{own}", {"tenants": {"shop": {"data": {"databases": databases}}}}):
        run_stack(f"prod-aws-shard-{own}", overrides, root=tmp_path)
