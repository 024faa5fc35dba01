"""`make plan-all` plans every stack and fails when any stack refuses the tenants."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import tenant_document, write_tenants
from tools.plan import all_stacks as plan_all
from tools.plan.harness import PROJECT_ROOT


def test_every_stack_file_is_planned() -> None:
    assert plan_all.all_stacks() == ["dev", "prod", "prod-aws"]


def test_the_makefile_target_runs_it() -> None:
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^plan-all:.*\n\t(.+)$", makefile, re.MULTILINE)
    assert target is not None and target.group(1).strip() == "$(BIN)/tenancy plan-all --out $(OUT)"
    assert re.search(r"^\.PHONY:.* plan-all ", makefile, re.MULTILINE)


def test_a_tenant_valid_for_dev_but_not_for_prod_aws_fails_and_every_stack_still_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # RDS has no connection pool here: prod-aws refuses poolSize; dev (CloudNativePG) accepts it.
    database = {"name": "orders", "engine": "postgres", "version": "16", "poolSize": 20}
    tenants = write_tenants(tmp_path / "tenants", tenant_document("pooled", databases=[database]))
    code = plan_all.main(["--tenants-dir", str(tenants), "--stacks", "prod-aws,dev"])
    output = capsys.readouterr()
    assert code == 2
    assert "prod-aws: FAILED" in output.out and "dev: ok" in output.out
    assert "tenants/pooled.yaml" in output.err and "poolSize" in output.err


def test_all_stacks_ok_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = write_tenants(tmp_path / "tenants", tenant_document("plain"))
    assert plan_all.main(["--tenants-dir", str(tenants), "--stacks", "dev,prod"]) == 0
    assert "dev: ok\nprod: ok" in capsys.readouterr().out
