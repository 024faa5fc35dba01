"""Storage changes judged as the clouds judge them (components/model/checks/storage.py): a shrink of a
dedicated database is refused at plan time naming the field, and where the cloud grows the disk on
its own the program never sends the smaller configured size back."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.model.core.errors import ConfigurationError
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun
from tools.plan.run import main as plan_main

ORDERS = {"name": "orders", "engine": "postgres", "version": "16", "placement": "dedicated"}


def _tenant(storage_gb: int) -> dict[str, object]:
    return tenant_document("shop", environments=["prod"], databases=[{**ORDERS, "storageGb": storage_gb}])


def _plan(tenants: Path, out: Path) -> int:
    return plan_main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out)])


def test_the_deployed_size_is_in_the_outputs(tmp_path: Path) -> None:
    run = plan("dev", write_tenants(tmp_path / "t", _tenant(50)))
    assert run.outputs["tenants"]["shop"]["data"]["databases"]["prod"]["orders"]["storageGb"] == 50


def test_shrinking_a_database_is_refused_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants, out = tmp_path / "tenants", tmp_path / "plan"
    write_tenants(tenants, _tenant(50))
    assert _plan(tenants, out) == 0
    capsys.readouterr()

    write_tenants(tenants, _tenant(20))
    assert _plan(tenants, out) == 2
    err = capsys.readouterr().err
    assert "shop.yaml: databases.0.storageGb: 20 is smaller than the deployed disk (50 GB in prod)" in err
    assert "keep storageGb at 50 or more" in err
    # Nothing written: the previous plan still stands.
    assert '"storageGb": 50' in (out / "outputs.json").read_text(encoding="utf-8")


def test_growing_a_database_is_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants, out = tmp_path / "tenants", tmp_path / "plan"
    write_tenants(tenants, _tenant(50))
    assert _plan(tenants, out) == 0
    write_tenants(tenants, _tenant(80))
    assert _plan(tenants, out) == 0


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_shrinks_are_refused_on_every_cloud(tmp_path: Path, stack: str) -> None:
    from tools.plan.dirs import as_last_deployment

    first = plan(stack, write_tenants(tmp_path / "a", _tenant(50)))
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "outputs.json").write_text(__import__("json").dumps(first.outputs), encoding="utf-8")
    with as_last_deployment(stack, tmp_path / "base"), pytest.raises(ConfigurationError) as refused:
        plan(stack, write_tenants(tmp_path / "b", _tenant(20)))
    assert [p.field for p in refused.value.problems] == ["databases.0.storageGb"]


def _instances(run: ProgramRun, type_token: str) -> list[dict[str, object]]:
    return [{"inputs": r.inputs, "ignore": r.ignore_changes} for r in run.resources if r.type == type_token]


def test_cloud_sql_grows_its_disk_and_the_program_never_sends_it_back(prod_plan: ProgramRun) -> None:
    instances = _instances(prod_plan, "gcp:sql/databaseInstance:DatabaseInstance")
    assert instances, "the prod stack registers no Cloud SQL instance"
    for instance in instances:
        settings = instance["inputs"]["settings"]  # type: ignore[index]
        assert settings["diskAutoresize"] is True
        # Autoresize grows the disk past `diskSize`; sending `diskSize` again would ask for a shrink.
        assert "settings.diskSize" in instance["ignore"]  # type: ignore[operator]


def test_rds_autoscales_storage_so_the_provider_ignores_the_grown_size(prod_aws_plan: ProgramRun) -> None:
    instances = _instances(prod_aws_plan, "aws:rds/instance:Instance")
    assert instances, "the prod-aws stack registers no RDS instance"
    for instance in instances:
        inputs = instance["inputs"]
        # With `maxAllocatedStorage` set, the provider ignores `allocatedStorage` below the live size
        # ("differences from the configuration will be ignored automatically when Storage Autoscaling
        # occurs", rds.Instance `allocatedStorage`): autoscaled growth is no diff.
        assert inputs["maxAllocatedStorage"] > inputs["allocatedStorage"]  # type: ignore[index]
