"""tools.ci.stacks: CI's stack lists become deployment waves, split stacks become their parts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.ci.stacks import waves
from tools.plan.harness import PROJECT_ROOT
from tools.scale.shards import generated_files


def _split(root: Path, stack: str, shards: int) -> None:
    layout = root / "deploy" / "shards" / f"{stack}.json"
    layout.parent.mkdir(parents=True, exist_ok=True)
    names = [f"{stack}-shard-{index}" for index in range(shards)]
    layout.write_text(json.dumps({"platform": f"{stack}-platform", "shards": names}), encoding="utf-8")


def test_unsplit_stacks_run_in_the_first_wave_under_their_own_environment(tmp_path: Path) -> None:
    result = waves(["dev", "prod"], tmp_path)
    assert result["first"] == [{"stack": "dev", "environment": "dev"}, {"stack": "prod", "environment": "prod"}]
    assert result["shards"] == []
    assert result["all"] == result["first"]


def test_a_split_stack_runs_its_platform_first_and_its_shards_after_under_the_base_environment(
    tmp_path: Path,
) -> None:
    _split(tmp_path, "prod", 3)
    result = waves(["dev", "prod"], tmp_path)
    assert result["first"] == [
        {"stack": "dev", "environment": "dev"},
        {"stack": "prod-platform", "environment": "prod"},
    ]
    assert result["shards"] == [{"stack": f"prod-shard-{i}", "environment": "prod"} for i in range(3)]
    assert result["all"] == result["first"] + result["shards"]


def test_reads_the_layout_file_that_tools_shards_writes(tmp_path: Path) -> None:
    files = generated_files("prod", 2, "acme", "https://git.example.org/platform/tenancy.git")
    layout = next(text for path, text in files.items() if path.suffix == ".json")
    target = tmp_path / "deploy" / "shards" / "prod.json"
    target.parent.mkdir(parents=True)
    target.write_text(layout, encoding="utf-8")
    result = waves(["prod"], tmp_path)
    assert [entry["stack"] for entry in result["all"]] == ["prod-platform", "prod-shard-0", "prod-shard-1"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.ci.stacks", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
    )


def test_prints_github_step_outputs(tmp_path: Path) -> None:
    _split(tmp_path, "prod", 2)
    result = _run("--stacks", '["dev", "prod"]', "--root", str(tmp_path))
    assert result.returncode == 0, result.stderr
    outputs = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert set(outputs) == {"first", "shards", "all"}
    assert json.loads(outputs["shards"]) == [
        {"stack": "prod-shard-0", "environment": "prod"},
        {"stack": "prod-shard-1", "environment": "prod"},
    ]
    # One line per output: GitHub reads `name=value` lines, so the JSON must not span lines.
    assert len(result.stdout.splitlines()) == 3


@pytest.mark.parametrize("stacks", ["dev", '{"dev": 1}', '["dev", ""]', "[1]"])
def test_refuses_anything_but_a_list_of_stack_names(stacks: str) -> None:
    result = _run("--stacks", stacks)
    assert result.returncode == 2
    assert "--stacks: expected a JSON list of stack names" in result.stderr


def test_a_malformed_layout_file_names_the_file(tmp_path: Path) -> None:
    target = tmp_path / "deploy" / "shards" / "prod.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps({"shards": "prod-shard-0"}), encoding="utf-8")
    result = _run("--stacks", '["prod"]', "--root", str(tmp_path))
    assert result.returncode == 2
    assert str(target) in result.stderr


def test_runs_without_the_project_requirements() -> None:
    # The workflows call it with the runner's python3 before anything is installed (-S: no site-packages).
    result = subprocess.run(
        [sys.executable, "-S", "-m", "tools.ci.stacks", "--stacks", '["dev"]'],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
