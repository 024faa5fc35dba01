"""The offline plan is deterministic: two runs on the same input write byte-identical files.

The plan diff on pull requests compares a plan of the base branch with a plan of the change; any
ordering or timestamp noise would show up there as a change nobody made. The runs happen in
separate processes with different hash seeds, so set or dict ordering that depends on string
hashing would surface here rather than in a reviewer's diff.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.plan.harness import PROJECT_ROOT

ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in PROJECT_ROOT.glob("Pulumi.*.yaml"))


def _plan(stack: str, out: Path, hash_seed: str) -> str:
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-m", "tools.plan.run", "--stack", stack, "--out", str(out)],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # The last line names the output directory, which differs between the two runs on purpose.
    return result.stdout.rsplit("\nwrote ", 1)[0]


def _files(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_every_stack_file_is_covered() -> None:
    assert {"dev", "prod"} <= set(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_two_runs_write_identical_files(stack: str, tmp_path: Path) -> None:
    first_summary = _plan(stack, tmp_path / "first", hash_seed="1")
    second_summary = _plan(stack, tmp_path / "second", hash_seed="2")
    first, second = _files(tmp_path / "first"), _files(tmp_path / "second")
    assert {"resources.json", "outputs.json"} <= set(first)
    assert any(name.startswith("manifests/") for name in first)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []
    assert first_summary == second_summary


def test_plan_files_carry_no_timestamps(tmp_path: Path) -> None:
    """Two runs within one second would not reveal a date stamp; look for ISO timestamps directly."""
    _plan("dev", tmp_path / "plan", hash_seed="0")
    for name, content in _files(tmp_path / "plan").items():
        assert not ISO_TIMESTAMP.search(content.decode("utf-8")), name
