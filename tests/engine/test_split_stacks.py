"""The engine rules on split stacks: the platform stack and its tenants shards (tools/scale/shards.py),
each a plan of its own. A shard relies on the CRDs its platform stack installs, deployed before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.engine.mixes import disabled_providers, records
from tools.plan.engine_rules import PlanGraph, check_plan, installed_groups
from tools.plan.harness import PROJECT_ROOT, run_stack
from tools.scale.shards import generated_files

COUNT = 2


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_platform_and_shards_keep_every_engine_rule(stack: str, tmp_path: Path) -> None:
    shutil.copy(PROJECT_ROOT / f"Pulumi.{stack}.yaml", tmp_path / f"Pulumi.{stack}.yaml")
    repository = "https://git.example.org/platform/tenancy.git"
    files = generated_files(stack, COUNT, "acme-platform", repository, root=tmp_path)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    platform = records(run_stack(f"{stack}-platform", root=tmp_path))
    assert check_plan(platform, disabled_providers(stack)) == []
    before = installed_groups(PlanGraph(platform))
    operator_objects = 0
    for index in range(COUNT):
        shard = records(run_stack(f"{stack}-shard-{index}", root=tmp_path))
        violations = check_plan(shard, disabled_providers(stack), before)
        assert violations == [], "\n".join(map(str, violations))
        if stack == "dev" and any("postgresql.cnpg.io" in r["type"] for r in shard):
            # Without the platform stack's installs, a dev shard's database objects have no CRD.
            operator_objects += 1
            assert {v.rule for v in check_plan(shard, disabled_providers(stack))} == {"crd-before-object"}
    assert operator_objects or stack != "dev"
