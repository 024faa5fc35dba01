"""A tenant file is checked against every stack of the project, whichever stack is planned: a
`stacks:` entry or an `overrides` key naming no stack, and a bad value in another stack's override,
fail every stack's plan with the full field path (the README promises nothing is silently skipped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.model.catalog.load import project_stacks
from components.model.core.errors import ConfigurationError
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import PROJECT_ROOT

STACKS = ["dev", "prod", "prod-aws"]


def problems(tmp_path: Path, stack: str, *documents: dict[str, object]) -> list[str]:
    tenants = write_tenants(tmp_path / "tenants", *documents)
    with pytest.raises(ConfigurationError) as caught:
        plan(stack, tenants)
    return [str(p).split("tenants/", 1)[1] for p in caught.value.problems]


@pytest.mark.parametrize("stack", STACKS)
def test_a_misspelt_stack_in_stacks_fails_every_plan(tmp_path: Path, stack: str) -> None:
    found = problems(tmp_path, stack, tenant_document("acme", stacks=["prod", "prdo"]))
    assert found == [
        "acme.yaml: stacks.1: 'prdo' is not a stack of this project (dev, prod, prod-aws); did you mean 'prod'?"
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_an_override_for_an_unknown_stack_fails_every_plan(tmp_path: Path, stack: str) -> None:
    found = problems(tmp_path, stack, tenant_document("acme", overrides={"staging": {"displayName": "x"}}))
    assert found == ["acme.yaml: overrides.staging: 'staging' is not a stack of this project (dev, prod, prod-aws)"]


def test_a_bad_value_in_another_stacks_override_fails_this_plan(tmp_path: Path) -> None:
    document = tenant_document("acme", overrides={"prod": {"costCenter": "not a code"}})
    found = problems(tmp_path, "dev", document)
    assert found == [
        "acme.yaml: overrides.prod -> costCenter: must be 1 to 63 letters, digits, '-' or '_' (no spaces); "
        "got 'not a code'"
    ]


def test_project_stacks_are_the_stack_files_not_the_generated_shards(tmp_path: Path) -> None:
    assert project_stacks(PROJECT_ROOT) == set(STACKS)
    (tmp_path / "Pulumi.live.yaml").write_text("config: {}\n")
    (tmp_path / "Pulumi.live-shard-0.yaml").write_text(
        "# Generated from Pulumi.live.yaml by `python -m tools.scale.shards`\n"
    )
    assert project_stacks(tmp_path) == {"live"}


@pytest.mark.parametrize("stack", ["dev", "prod-aws"])
def test_another_stacks_override_naming_a_pool_that_stack_lacks_fails_every_plan(tmp_path: Path, stack: str) -> None:
    document = tenant_document("acme", overrides={"prod": {"nodePool": "gpu-huge"}})
    found = problems(tmp_path, stack, document)
    assert found == [
        "acme.yaml: overrides.prod.nodePool: 'gpu-huge' is not a node pool of stack prod "
        "(defined: customers, research, shared)"
    ]


def test_a_name_another_targeted_stack_lacks_fails_this_plan_unless_the_file_leaves_that_stack_out(
    tmp_path: Path,
) -> None:
    # An environment only dev hosts (by --set): prod and prod-aws, which the tenant also targets, lack it.
    environments = '["dev", "prod", "qa"]'
    tenants = write_tenants(tmp_path / "tenants", tenant_document("acme", environments=["dev", "qa"]))
    with pytest.raises(ConfigurationError) as caught:
        plan("dev", tenants, environments=environments)
    found = sorted(str(p).split("tenants/", 1)[1] for p in caught.value.problems)
    assert found == [
        f"acme.yaml: environments: qa not hosted by stack {other} (environments: dev, prod)"
        for other in ("prod", "prod-aws")
    ]
    only_dev = write_tenants(tmp_path / "only-dev", tenant_document("acme", environments=["dev", "qa"], stacks=["dev"]))
    plan("dev", only_dev, environments=environments)
