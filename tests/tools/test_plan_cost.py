"""Added and changed resources show what they cost in the plan diff (tools/plan/cost.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support import EXAMPLE_TENANTS, tenant_document
from tools.plan.cost import cost_line
from tools.plan.diff import PlanDiff, diff_dirs, render_markdown
from tools.plan.harness import run_program, stack_config
from tools.plan.run import write_plan

DATABASE = {"name": "main", "engine": "postgres", "version": "16", "size": "medium", "storageGb": 20}


def _write_plan(out: Path, stack: str, tenants: Path | None = None, **config: str) -> Path:
    overrides = {f"tenancy:{key}": value for key, value in config.items()}
    if tenants is not None:
        overrides["tenancy:tenantsDir"] = str(tenants)
    write_plan(run_program(stack, *stack_config(stack, overrides)), out)
    return out


def _with_newco(tmp_path: Path) -> Path:
    tenants = tmp_path / "tenants"
    shutil.copytree(EXAMPLE_TENANTS, tenants)
    document = tenant_document("newco", databases=[DATABASE])
    (tenants / "newco.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    return tenants


def _lines(diff: PlanDiff, name: str) -> list[str]:
    """The Markdown lines of one resource: its bullet and the sub-bullets under it."""
    lines = render_markdown(diff).splitlines()
    start = next(index for index, line in enumerate(lines) if f"`{name}`" in line and line.startswith("- "))
    end = next((index for index in range(start + 1, len(lines)) if not lines[index].startswith("  ")), len(lines))
    return lines[start:end]


@pytest.mark.parametrize(
    ("stack", "type_token", "expected"),
    [
        (
            "prod",
            "gcp:sql/databaseInstance:DatabaseInstance",
            "  - cost: edition `ENTERPRISE`, tier `db-custom-2-7680`, availability `ZONAL`, disk GB `20`",
        ),
        ("prod-aws", "aws:rds/instance:Instance", "  - cost: class `db.m7g.large`, storage GB `20`"),
    ],
)
def test_an_added_database_instance_shows_its_size(tmp_path: Path, stack: str, type_token: str, expected: str) -> None:
    base = _write_plan(tmp_path / "base", stack)
    diff = diff_dirs(base, _write_plan(tmp_path / "head", stack, _with_newco(tmp_path)))
    instances = [record for record in diff.scopes["newco"].added if record["type"] == type_token]
    assert len(instances) == 2  # dev and prod
    lines = _lines(diff, instances[0]["name"])
    assert lines[1].startswith(expected), lines


def test_a_changed_node_pool_shows_old_and_new_machine_type(tmp_path: Path) -> None:
    config, _ = stack_config("prod")
    pools = json.loads(config["tenancy:nodePools"])
    base = _write_plan(tmp_path / "base", "prod")
    pools["customers"]["machineType"] = "n2-standard-16"
    diff = diff_dirs(base, _write_plan(tmp_path / "head", "prod", nodePools=json.dumps(pools)))
    records = [r for s in diff.scopes.values() for r, _ in s.changed if r["type"] == "gcp:container/nodePool:NodePool"]
    assert len(records) == 1
    lines = _lines(diff, records[0]["name"])
    assert lines[1] == (
        "  - cost: machine `n2-standard-8` → `n2-standard-16`, spot `no`, disk GB `200`, min nodes `2`, max nodes `10`"
    )


def test_karpenter_limits_eks_groups_and_database_storage_have_cost_lines(tmp_path: Path) -> None:
    run = run_program("prod-aws", *stack_config("prod-aws"))
    by_type = {resource.type: {"type": resource.type, "inputs": resource.inputs} for resource in run.resources}
    pools = [r for r in run.resources if r.type == "kubernetes:karpenter.sh/v1:NodePool"]
    karpenter = next(r for r in pools if r.inputs["metadata"]["name"] == "customers")
    assert cost_line({"type": karpenter.type, "inputs": karpenter.inputs}) == (
        "cpu limit `256`, memory limit `1024Gi`, instance families `m7i, m6i, c7i, r7i`, capacity `on-demand`"
    )
    assert cost_line(by_type["aws:eks/nodeGroup:NodeGroup"]) == (
        "instance types `m7i.large, m6i.large`, capacity `ON_DEMAND`, desired nodes `2`, min nodes `2`, max nodes `6`"
    )
    dev = run_program("dev", *stack_config("dev"))
    cluster = next(r for r in dev.resources if r.type == "kubernetes:postgresql.cnpg.io/v1:Cluster")
    assert cost_line({"type": cluster.type, "inputs": cluster.inputs}) == "instances `2`, storage `50Gi`"
    # Types that cost nothing by themselves have no line.
    assert cost_line({"type": "kubernetes:core/v1:ConfigMap", "inputs": {}}) is None
