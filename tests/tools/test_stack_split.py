"""The platform/tenants split: generated shard stacks plan cleanly, partition the tenants, and the
operator manifests keep every shard refreshed and resynced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from components.model.checks.stack import OPERATOR_IDENTITY
from tests.k8s_schema import CRDS_DIR, has_crd, validate_custom
from tools.plan.harness import PROJECT_ROOT, ProgramRun, run_stack
from tools.scale.shards import generated_files, layout

COUNT = 2


def _key(run: ProgramRun) -> set[tuple[str, str]]:
    # Reads (StackReference, `.get()` of existing objects) are not managed, so any stack may repeat them.
    return {(r.type, r.name) for r in run.resources if not r.read}


@pytest.fixture(scope="module", params=["dev", "prod"])
def split(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, dict[Path, str]]:
    stack = request.param
    root = tmp_path_factory.mktemp(f"split-{stack}")
    document = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text())
    # Run by the operator, so `write` produces its Stack objects too (ADR 0032: one runner per split stack).
    document["config"]["tenancy:shards"] = {"runner": "operator"}
    (root / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    files = generated_files(stack, COUNT, "acme-platform", "https://git.example.org/platform/tenancy.git", root=root)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return stack, root, files


def test_platform_and_shards_partition_the_all_in_one_plan(split: tuple[str, Path, dict[Path, str]]) -> None:
    stack, root, _ = split
    whole = run_stack(stack, root=root)
    platform = run_stack(f"{stack}-platform", root=root)
    shards = [run_stack(f"{stack}-shard-{index}", root=root) for index in range(COUNT)]

    assert platform.of_type("tenancy:index:Tenant") == []
    tenant_sets = [{r.name for r in shard.of_type("tenancy:index:Tenant")} for shard in shards]
    assert set.union(*tenant_sets) == {r.name for r in whole.of_type("tenancy:index:Tenant")}
    assert not set.intersection(*tenant_sets)

    # Every resource of the all-in-one stack is in exactly one of the split stacks (providers aside,
    # which every stack has, and the StackReference only shards have).
    providers_and_refs = {k for k in _key(whole) if k[0].startswith("pulumi:")}
    split_keys = [_key(platform)] + [_key(shard) for shard in shards]
    for key in _key(whole) - providers_and_refs:
        assert sum(key in keys for keys in split_keys) == 1, key
    for shard in shards:
        assert [r.inputs["name"] for r in shard.of_type("pulumi:pulumi:StackReference")] == [
            f"acme-platform/tenancy/{stack}-platform"
        ]
    assert "platform" in platform.outputs and "tenants" not in platform.outputs


def test_layout_counts_every_tenant_resource_once(split: tuple[str, Path, dict[Path, str]]) -> None:
    stack, root, _ = split
    result = layout(stack, COUNT, root=root)
    whole = run_stack(stack, root=root)
    assert sum(len(names) for names in result.tenants.values()) == len(whole.of_type("tenancy:index:Tenant"))
    assert result.platform_resources + sum(result.resources.values()) == len(whole.resources)
    assert layout(stack, COUNT, root=root).tenants == result.tenants


def test_budget_warning(split: tuple[str, Path, dict[Path, str]]) -> None:
    stack, root, _ = split
    result = layout(stack, 1, root=root)
    result.budget = 10
    assert result.over_budget() == [0]


def test_generated_stack_files_carry_the_role(split: tuple[str, Path, dict[Path, str]]) -> None:
    stack, root, _ = split
    base = yaml.safe_load((root / f"Pulumi.{stack}.yaml").read_text())["config"]
    shard = yaml.safe_load((root / f"Pulumi.{stack}-shard-1.yaml").read_text())["config"]
    assert shard["tenancy:stackRole"] == "tenants"
    assert shard["tenancy:shards"] == {"count": COUNT, "index": 1}
    # The base config carries over unchanged, except that the operator's identity joins the platform
    # identities (components/model/checks/stack.py refuses a split stack without it).
    policy = shard["tenancy:policy"]
    assert OPERATOR_IDENTITY in policy["platformIdentities"]["users"]
    base_policy = base.get("tenancy:policy", {})
    base_users = base_policy.get("platformIdentities", {}).get("users", [])
    assert policy["platformIdentities"]["users"] == [*base_users, OPERATOR_IDENTITY]
    own = ("tenancy:policy", "tenancy:shards")  # the roles' own keys
    assert {k: v for k, v in shard.items() if k in base and k not in own} == {
        k: v for k, v in base.items() if k not in own
    }
    matrix = json.loads((root / "deploy" / "shards" / f"{stack}.json").read_text())
    assert matrix == {
        "platform": f"{stack}-platform",
        "runner": "operator",
        "shards": [f"{stack}-shard-0", f"{stack}-shard-1"],
    }


def test_operator_stacks_refresh_resync_and_wait_for_the_platform(split: tuple[str, Path, dict[Path, str]]) -> None:
    stack, root, _ = split
    documents = yaml.safe_load_all((root / "deploy" / "operator" / f"{stack}.yaml").read_text())
    # The file also holds the workspace's ServiceAccount and RBAC (tests/tools/test_operator_stack.py).
    objects = [o for o in documents if o["kind"] == "Stack"]
    assert [o["metadata"]["name"] for o in objects] == [
        f"tenancy-{stack}-platform",
        f"tenancy-{stack}-shard-0",
        f"tenancy-{stack}-shard-1",
    ]
    for obj in objects:
        assert obj["apiVersion"] == "pulumi.com/v1" and obj["kind"] == "Stack"
        spec = obj["spec"]
        assert spec["refresh"] is True and spec["continueResyncOnCommitMatch"] is True
        assert spec["resyncFrequencySeconds"] > 0 and spec["destroyOnFinalize"] is False
    assert "prerequisites" not in objects[0]["spec"]
    for shard in objects[1:]:
        assert shard["spec"]["prerequisites"][0]["name"] == f"tenancy-{stack}-platform"


def test_operator_stacks_pass_the_operator_crd(split: tuple[str, Path, dict[Path, str]]) -> None:
    stack, root, _ = split
    documents = yaml.safe_load_all((root / "deploy" / "operator" / f"{stack}.yaml").read_text())
    objects = [o for o in documents if o["kind"] == "Stack"]
    if not has_crd(objects[0]):
        pytest.skip(f"no pulumi.com Stack CRD in {CRDS_DIR}; the structure is checked by the test above")
    for obj in objects:
        validate_custom(obj)
