"""Database disks on both clouds (issue 44, 8, 10 and 11): a raised `storageGb` reaches a Cloud SQL
instance (the larger of requested and live, never a shrink), autoresize has a limit as RDS storage
autoscaling has, and RDS storage is gp3.

Before: Cloud SQL ignored `settings.diskSize` after create, so a raise changed nothing while the
outputs showed the new size; `disk_autoresize_limit` was unset (0: no limit); RDS left `storage_type`
unset, which is gp2 (components/clouds/gcp/disk_size.py, components/clouds/aws/rds.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.clouds.gcp.disk_size import AUTORESIZED_DISK
from tests.support import EXAMPLE_TENANTS, plan
from tests.vcluster.helpers import previous_outputs
from tools.plan import harness
from tools.plan.harness import PROJECT_ROOT, ProgramRun

_SQL = "gcp:sql/databaseInstance:DatabaseInstance"
_RDS = "aws:rds/instance:Instance"
_ORDERS = "acme-prod-db-orders-instance"


def _raised_tenants(tmp_path: Path, storage_gb: int) -> Path:
    directory = tmp_path / "tenants"
    shutil.copytree(EXAMPLE_TENANTS, directory)
    acme = yaml.safe_load((directory / "acme.yaml").read_text(encoding="utf-8"))
    (orders,) = [d for d in acme["databases"] if d["name"] == "orders"]
    orders["storageGb"] = storage_gb
    (directory / "acme.yaml").write_text(yaml.safe_dump(acme), encoding="utf-8")
    return directory


def _instance(run: ProgramRun, name: str) -> Any:
    (instance,) = [r for r in run.of_type(_SQL) if r.name == name]
    return instance


@pytest.mark.parametrize(("live", "sent"), [(120, 120), (60, 80)])
def test_a_raised_storage_reaches_the_instance_as_the_larger_of_requested_and_live(
    prod_plan: ProgramRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, live: int, sent: int
) -> None:
    # Deployed with 50 GB (the example), autoresize has since grown it to `live`; the file asks for 80.
    instance_id = str(prod_plan.outputs["tenants"]["acme"]["data"]["databases"]["prod"]["orders"]["instance"])
    monkeypatch.setitem(harness.LIVE_CLOUD_SQL_DISKS, instance_id.rsplit(":", 1)[-1], live)
    with previous_outputs("prod", prod_plan.outputs):
        run = plan("prod", _raised_tenants(tmp_path, 80))
    orders = _instance(run, _ORDERS)
    assert orders.inputs["settings"]["diskSize"] == sent
    assert AUTORESIZED_DISK not in orders.ignore_changes
    assert orders.inputs["settings"]["diskAutoresizeLimit"] == max(80 * 4, sent)
    # dev's orders was raised too (the file's entry covers both environments); Cloud SQL reports no
    # live size for it here, so the requested one is sent.
    dev_orders = _instance(run, _ORDERS.replace("-prod-", "-dev-"))
    assert dev_orders.inputs["settings"]["diskSize"] == 80 and AUTORESIZED_DISK not in dev_orders.ignore_changes
    # Instances whose size did not change keep Cloud SQL's (no shrink, no read).
    for other in run.of_type(_SQL):
        if other.name not in (_ORDERS, dev_orders.name):
            assert AUTORESIZED_DISK in other.ignore_changes, other.name


def test_an_unchanged_size_is_left_to_cloud_sql(prod_plan: ProgramRun, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(harness.LIVE_CLOUD_SQL_DISKS, "unused", 1)  # plans afresh (no run cache)
    with previous_outputs("prod", prod_plan.outputs):
        run = plan("prod")
    for instance in run.of_type(_SQL):
        assert AUTORESIZED_DISK in instance.ignore_changes, instance.name
        assert instance.inputs["settings"]["diskSize"] > 0


def test_cloud_sql_autoresize_and_rds_autoscaling_stop_at_the_stacks_factor(
    prod_plan: ProgramRun, prod_aws_plan: ProgramRun
) -> None:
    for instance in prod_plan.of_type(_SQL):
        settings = instance.inputs["settings"]
        assert settings["diskAutoresize"] is True
        assert settings["diskAutoresizeLimit"] == settings["diskSize"] * 4, instance.name
    for instance in prod_aws_plan.of_type(_RDS):
        assert instance.inputs["maxAllocatedStorage"] == instance.inputs["allocatedStorage"] * 4, instance.name


def test_the_growth_factor_is_the_stacks_choice() -> None:
    config = yaml.safe_load((PROJECT_ROOT / "Pulumi.prod.yaml").read_text(encoding="utf-8"))["config"]
    run = plan("prod", data=json.dumps({**config["tenancy:data"], "storageGrowthFactor": 2}))
    for instance in run.of_type(_SQL):
        settings = instance.inputs["settings"]
        assert settings["diskAutoresizeLimit"] == settings["diskSize"] * 2, instance.name


def test_rds_storage_is_gp3(prod_aws_plan: ProgramRun) -> None:
    instances = prod_aws_plan.of_type(_RDS)
    assert instances
    assert {i.inputs.get("storageType") for i in instances} == {"gp3"}
