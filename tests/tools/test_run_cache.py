"""The suite's cache of mocked runs (tools/plan/run_cache.py) reuses a run only when the program
would read exactly the same inputs, and hands every caller its own copy.

Each test here gets an empty cache of its own, so a hit or a miss is this test's doing.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from components.model.core import labels
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan import harness, run_cache
from tools.plan.harness import (
    PREVIOUS_STACK_OUTPUTS,
    PROJECT_NAME,
    PROJECT_ROOT,
    STACK_REFERENCE_OUTPUTS,
    ProgramRun,
    run_stack,
)
from tools.plan.run_key import tree_digest
from tools.scale.shards import generated_files


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[run_cache.RunCache]:
    """An empty cache for this test; the suite's own comes back after."""
    previous = run_cache.active()
    fresh = run_cache.RunCache(tmp_path / "cache")
    run_cache.activate(fresh)
    yield fresh
    run_cache.activate(previous)


def _tenants(directory: Path, quota_tier: str | None = None) -> Path:
    fields = {"quota": {"tier": quota_tier}} if quota_tier else {}
    return write_tenants(directory, tenant_document("acme", **fields))


def _namespaces(run: ProgramRun) -> list[str]:
    return sorted(obj["metadata"]["name"] for obj in objects_of_kind(run, "Namespace"))


def test_equal_inputs_are_planned_once_even_in_another_directory(cache: run_cache.RunCache, tmp_path: Path) -> None:
    first = plan("dev", _tenants(tmp_path / "one"))
    second = plan("dev", _tenants(tmp_path / "two"))
    assert (cache.stats.misses, cache.stats.stored, cache.stats.hits) == (1, 1, 1)
    assert second == first
    assert second is not first


def test_a_changed_tenant_file_is_planned_afresh(cache: run_cache.RunCache, tmp_path: Path) -> None:
    tenants = _tenants(tmp_path / "tenants")
    before = plan("dev", tenants)
    write_tenants(tenants, tenant_document("beta"))
    after = plan("dev", tenants)
    assert cache.stats.hits == 0
    assert "tenant-beta-dev" not in _namespaces(before)
    assert "tenant-beta-dev" in _namespaces(after)


def test_a_changed_byte_in_a_tenant_file_changes_the_key(tmp_path: Path) -> None:
    tenants = _tenants(tmp_path / "tenants")
    before = tree_digest(tenants)
    path = tenants / "acme.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Acme", "Acmf"), encoding="utf-8")
    assert tree_digest(tenants) != before
    (tenants / "nested").mkdir()
    after_dir = tree_digest(tenants)
    assert after_dir != before
    (tenants / "nested" / "x.txt").write_text("x", encoding="utf-8")
    assert tree_digest(tenants) != after_dir


def test_a_changed_config_value_is_planned_afresh(cache: run_cache.RunCache, tmp_path: Path) -> None:
    tenants = _tenants(tmp_path / "tenants")
    default = plan("dev", tenants)
    other = plan("dev", tenants, domainSuffix="elsewhere.example.org")
    assert cache.stats.hits == 0
    assert default != other


def test_what_the_mocks_answer_for_the_last_deployment_is_part_of_the_key(
    cache: run_cache.RunCache, tmp_path: Path
) -> None:
    tenants = _tenants(tmp_path / "tenants")
    plan("dev", tenants)
    name = f"organization/{PROJECT_NAME}/dev"
    PREVIOUS_STACK_OUTPUTS[name] = {"tenants": {}}
    try:
        plan("dev", tenants)
    finally:
        del PREVIOUS_STACK_OUTPUTS[name]
    assert cache.stats.hits == 0
    plan("dev", tenants)
    assert cache.stats.hits == 1


def test_outputs_of_stacks_the_run_does_not_read_leave_its_key_alone(cache: run_cache.RunCache, tmp_path: Path) -> None:
    """A test worker plans shards (their platform's outputs land in STACK_REFERENCE_OUTPUTS) and
    other stacks' last deployments; a dev run reads neither, so it is still the same run."""
    tenants = _tenants(tmp_path / "tenants")
    plan("dev", tenants)
    unread = [f"organization/{PROJECT_NAME}/dev-platform", f"organization/{PROJECT_NAME}/prod"]
    STACK_REFERENCE_OUTPUTS[unread[0]] = {"platform": {"changed": True}}
    PREVIOUS_STACK_OUTPUTS[unread[1]] = {"tenants": {"acme": {"virtualClusters": {"prod": "x"}}}}
    try:
        plan("dev", tenants)
    finally:
        del STACK_REFERENCE_OUTPUTS[unread[0]], PREVIOUS_STACK_OUTPUTS[unread[1]]
    assert (cache.stats.misses, cache.stats.hits) == (1, 1)


def test_a_shard_planned_again_is_served_whole(cache: run_cache.RunCache, tmp_path: Path) -> None:
    """A shard is two runs: its settings in the platform role (which read no other stack), whose
    outputs then answer the shard's StackReference. Both are served the second time."""
    (tmp_path / "Pulumi.dev.yaml").write_text((PROJECT_ROOT / "Pulumi.dev.yaml").read_text(), encoding="utf-8")
    for path, text in generated_files("dev", 2, "org", "https://git.example.org/t.git", root=tmp_path).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    first = run_stack("dev-shard-1", root=tmp_path)
    again = run_stack("dev-shard-1", root=tmp_path)
    assert (cache.stats.misses, cache.stats.hits, cache.stats.refused) == (2, 2, 0)
    assert again == first


def test_a_run_that_read_a_stack_its_key_does_not_hold_is_not_kept(
    cache: run_cache.RunCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard behind the narrow key: should the program read another stack than
    `readable_stacks` names, its run is computed every time rather than served for other outputs."""
    monkeypatch.setattr(harness, "readable_stacks", lambda stack, config: frozenset())
    tenants = _tenants(tmp_path / "tenants")
    plan("dev", tenants)
    plan("dev", tenants)
    assert (cache.stats.stored, cache.stats.hits, cache.stats.refused) == (0, 0, 2)


def test_a_mutated_result_does_not_reach_the_next_caller(cache: run_cache.RunCache, tmp_path: Path) -> None:
    tenants = _tenants(tmp_path / "tenants")
    first = plan("dev", tenants)
    pristine = copy.deepcopy(first)
    second = plan("dev", tenants)
    for run in (first, second):
        next(r for r in run.resources if r.inputs).inputs.clear()
        run.resources[0].inputs["mutated"] = True
        run.resources.pop()
        run.outputs.clear()
    again = plan("dev", tenants)
    assert cache.stats.hits == 2
    assert again == pristine
    assert again != first


def test_a_failed_plan_is_not_kept(cache: run_cache.RunCache, tmp_path: Path) -> None:
    tenants = write_tenants(tmp_path / "tenants", tenant_document("acme", nodePool="no-such-pool"))
    for _ in range(2):
        with pytest.raises(Exception, match="no-such-pool"):
            plan("dev", tenants)
    assert (cache.stats.stored, cache.stats.hits) == (0, 0)


def test_a_run_that_names_its_tenant_directory_is_not_kept(cache: run_cache.RunCache, tmp_path: Path) -> None:
    run = ProgramRun(stack="dev", outputs={"source": str(tmp_path / "tenants")})
    cache.store("key", run, [], forbidden=[str(tmp_path / "tenants")])
    assert cache.load("key") is None
    assert cache.stats.refused == 1


def test_a_test_that_monkeypatches_plans_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's autouse fixture (tests/conftest.py) turns the cache off here: the patched plan
    must show the patch, which a run kept from before the patch would not."""
    assert run_cache.active() is None
    tenants = _tenants(tmp_path / "tenants")
    before = plan("dev", tenants)
    monkeypatch.setattr(labels, "MANAGED_BY_VALUE", "patched-by-test")
    after = plan("dev", tenants)
    assert before != after
    assert "patched-by-test" in str([r.inputs for r in after.resources])


def test_what_a_run_logged_is_logged_again_on_a_hit(
    cache: run_cache.RunCache, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = ProgramRun(stack="dev")
    cache.store("key", run, [(logging.WARNING, "could not read this stack's last outputs")], forbidden=[])
    hit = cache.load("key")
    assert hit is not None
    with caplog.at_level(logging.INFO):
        run_cache.replay(hit[1])
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "could not read this stack's last outputs")
    ]
