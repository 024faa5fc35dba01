"""tools.plan.affected: a merge deploys only the stacks and shards whose offline plan changed.

Each test works on a copy of this project in a temporary git repository, with the dev stack split
into two shards by `tools.scale.shards` (each holding tenants), and plans it for real (the tree's own
program, fresh process).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from components.model.settings.sharding import shard_of
from tests.support import tenant_document, write_tenants
from tools.ci.stacks import waves
from tools.plan import affected as affected_module
from tools.plan.affected import affected, plan_digests, select
from tools.plan.harness import PROJECT_ROOT
from tools.scale.shards import generated_files

PARTS = ["dev-platform", "dev-shard-0", "dev-shard-1"]


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=test", "-c", "user.email=test@example.org", *args]
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git copy of the project's tracked files with dev split into two shards; (repo, base sha)."""
    repo = tmp_path_factory.mktemp("affected") / "repo"
    tracked = _git(PROJECT_ROOT, "ls-files").splitlines()
    for name in tracked:
        source = PROJECT_ROOT / name
        if source.is_file() and not name.startswith(("tests/", "docs/")):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    # The examples all hash to shard 1 of 2; `delta` lands in shard 0, so both shards hold tenants.
    write_tenants(repo / "tenants", tenant_document("delta"))
    for path, text in generated_files("dev", 2, "org", "https://git.example.org/tenancy.git", root=repo).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(repo, "init", "-q")
    return repo, _commit(repo, "base")


def _tree_digest(tree: Path) -> str:
    """Every file of `tree` but git's own and Python's byte-code caches, by path and content."""
    digest = hashlib.sha256()
    for path in sorted(tree.rglob("*")):
        if path.is_file() and not {".git", "__pycache__"} & set(path.relative_to(tree).parts):
            digest.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@pytest.fixture(scope="module", autouse=True)
def planned_once() -> Iterator[None]:
    """Plan a tree's stacks once per distinct content: the base commit comes back as an exported copy
    in most tests, and each plan is a fresh process planning three stacks. A tree that differs in any
    file (an edit, a file the export lost) is planned again, by the real `plan_digests`."""
    seen: dict[tuple[str, str], dict[str, str]] = {}

    def digests(tree: Path, entries: list[dict[str, str]]) -> dict[str, str]:
        key = (_tree_digest(tree), json.dumps(entries, sort_keys=True))
        if key not in seen:
            seen[key] = plan_digests(tree, entries)
        return dict(seen[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(affected_module, "plan_digests", digests)
        yield


@pytest.fixture(scope="module")
def base_digests(project: tuple[Path, str], planned_once: None) -> dict[str, str]:
    repo, _ = project
    return affected_module.plan_digests(repo, waves(["dev"], repo)["all"])


def _edit(repo: Path, name: str, old: str, new: str) -> None:
    path = repo / name
    text = path.read_text(encoding="utf-8")
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _selected(repo: Path, base: dict[str, str]) -> list[str]:
    entries = waves(["dev"], repo)
    return [
        entry["stack"] for entry in select(entries, base, affected_module.plan_digests(repo, entries["all"]))["all"]
    ]


def _restore(repo: Path) -> None:
    _git(repo, "checkout", "-q", "--", ".")


def test_a_change_no_plan_sees_deploys_nothing(project: tuple[Path, str], base_digests: dict[str, str]) -> None:
    repo, _ = project
    assert set(base_digests) == set(PARTS)
    _edit(repo, "components/model/core/labels.py", '"""Label keys', '"""Label keys (a comment-only refactor)')
    _edit(repo, "README.md", "# tenancy", "# tenancy (docs only)")
    try:
        assert _selected(repo, base_digests) == []
    finally:
        _restore(repo)


def test_one_tenant_file_selects_only_its_shard(project: tuple[Path, str], base_digests: dict[str, str]) -> None:
    repo, _ = project
    _edit(repo, "tenants/status-page.yaml", "displayName:", "displayName: Renamed #")
    try:
        shard = shard_of("status-page", 2, None)
        assert shard_of("delta", 2, None) != shard
        assert _selected(repo, base_digests) == [f"dev-shard-{shard}"]
    finally:
        _restore(repo)


def test_shared_code_selects_the_platform_and_every_shard(
    project: tuple[Path, str], base_digests: dict[str, str]
) -> None:
    repo, _ = project
    _edit(
        repo, "components/model/core/labels.py", 'MANAGED_BY_VALUE = "tenancy"', 'MANAGED_BY_VALUE = "tenancy-platform"'
    )
    try:
        assert _selected(repo, base_digests) == PARTS
    finally:
        _restore(repo)


def test_the_stack_file_selects_every_part_of_its_stack(
    project: tuple[Path, str], base_digests: dict[str, str]
) -> None:
    repo, _ = project
    # Any edit counts, even one the plan cannot see: a rotated `secure:` value is redacted in it.
    _edit(repo, "Pulumi.dev.yaml", "# dev: the embedded default.", "# dev: the embedded default (edited).")
    try:
        assert _selected(repo, base_digests) == PARTS
    finally:
        _restore(repo)


def test_provider_pins_select_everything_without_planning(project: tuple[Path, str]) -> None:
    repo, base = project
    (repo / "requirements.txt").write_text((repo / "requirements.txt").read_text() + "# bump\n", encoding="utf-8")
    try:
        result = affected(["dev"], base, None, repo)
        assert [entry["stack"] for entry in result["waves"]["all"]] == PARTS
        assert "requirements.txt changed" in result["reason"]
    finally:
        _restore(repo)


def test_no_base_commit_selects_everything(project: tuple[Path, str]) -> None:
    repo, _ = project
    result = affected(["dev"], "0" * 40, None, repo)
    assert [entry["stack"] for entry in result["waves"]["all"]] == PARTS


def test_cli_between_two_commits_prints_the_one_changed_shard(project: tuple[Path, str]) -> None:
    repo, base = project
    _edit(repo, "tenants/genomics-lab.yaml", "displayName:", "displayName: Renamed #")
    head = _commit(repo, "rename genomics-lab")
    try:
        command = [sys.executable, "-m", "tools.plan.affected", "--stacks", '["dev"]', "--base", base, "--head", head]
        result = subprocess.run(
            [*command, "--repo", str(repo)], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        outputs = dict(line.split("=", 1) for line in result.stdout.splitlines())
        shard = f"dev-shard-{shard_of('genomics-lab', 2, None)}"
        assert json.loads(outputs["first"]) == []
        assert json.loads(outputs["shards"]) == [{"stack": shard, "environment": "dev"}]
        assert re.search(r"1 of 3 plans changed", result.stderr)
    finally:
        _git(repo, "reset", "-q", "--hard", base)


def test_a_stack_the_deployment_record_does_not_list_is_deployed_unchanged(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    # Adding a stack to PULUMI_DEV_STACKS changes no file: its plan is the same at the base, so only
    # the record of what the last successful run deployed can tell that it never was.
    repo, base = project
    record = tmp_path / "deployed.json"
    record.write_text(json.dumps(["dev-platform", "dev-shard-0"]), encoding="utf-8")
    result = affected(["dev"], base, None, repo, record)
    assert [entry["stack"] for entry in result["waves"]["all"]] == ["dev-shard-1"]
    assert "not in the record: dev-shard-1" in result["reason"]
    # With everything recorded, an unchanged tree deploys nothing.
    record.write_text(json.dumps(PARTS), encoding="utf-8")
    assert affected(["dev"], base, None, repo, record)["waves"]["all"] == []


def test_a_missing_deployment_record_deploys_everything(project: tuple[Path, str], tmp_path: Path) -> None:
    repo, base = project
    result = affected(["dev"], base, None, repo, tmp_path / "absent.json")
    assert [entry["stack"] for entry in result["waves"]["all"]] == PARTS
    assert "no deployment record" in result["reason"]


def test_the_record_lists_every_stack_and_shard_of_both_lists(project: tuple[Path, str]) -> None:
    repo, _ = project
    command = [sys.executable, "-m", "tools.plan.affected", "--record", '["dev"]', '["prod"]', "--repo", str(repo)]
    result = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'stacks=["dev-platform","dev-shard-0","dev-shard-1","prod"]\n'
    bad = subprocess.run([*command[:3], "--record", "dev"], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "--record: expected JSON lists" in bad.stderr
