"""The offline plan is deterministic: two runs on the same input write byte-identical files.

The plan diff on pull requests compares a plan of the base branch with a plan of the change; any
ordering or timestamp noise would show up there as a change nobody made. The runs happen in
separate processes with different hash seeds, so set or dict ordering that depends on string
hashing would surface here rather than in a reviewer's diff. One run is `tenancy plan` of the stack
in a fresh process, as the pull request job runs it; the other is `tenancy plan-all`, one process
for every stack (a process start imports the cloud SDKs, most of a run's time), so a stack planned
after others in one process must also write the same files as planned alone.
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


def _run(arguments: list[str], hash_seed: str) -> str:
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-m", *arguments],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _plan(stack: str, out: Path, hash_seed: str) -> str:
    """`tenancy plan` of one stack in a fresh process; its summary without the last line, which names
    the output directory (different between the two runs on purpose)."""
    return _run(["tools.plan.run", "--stack", stack, "--out", str(out)], hash_seed).rsplit("\nwrote ", 1)[0]


@pytest.fixture(scope="module")
def plan_all(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """`tenancy plan-all` of every stack in one process: (output directory, summary by stack)."""
    out = tmp_path_factory.mktemp("plan-all")
    stdout = _run(["tools.plan.all_stacks", "--out", str(out)], hash_seed="1")
    # `== <stack>` opens each stack's section (tools/plan/all_stacks.py); `wrote` closes it.
    sections = re.split(r"^== (\S+)\n", stdout, flags=re.MULTILINE)[1:]
    summaries = {
        stack: text.rsplit("\nwrote ", 1)[0] for stack, text in zip(sections[::2], sections[1::2], strict=True)
    }
    assert sorted(summaries) == STACKS
    return out, summaries


def _files(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_every_stack_file_is_covered() -> None:
    assert {"dev", "prod"} <= set(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_two_runs_write_identical_files(stack: str, tmp_path: Path, plan_all: tuple[Path, dict[str, str]]) -> None:
    all_out, all_summaries = plan_all
    first_summary = all_summaries[stack]
    second_summary = _plan(stack, tmp_path / "second", hash_seed="2")
    first, second = _files(all_out / stack), _files(tmp_path / "second")
    assert {"resources.json", "outputs.json"} <= set(first)
    assert any(name.startswith("manifests/") for name in first)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []
    assert first_summary == second_summary


def test_plan_files_carry_no_timestamps(plan_all: tuple[Path, dict[str, str]]) -> None:
    """Two runs within one second would not reveal a date stamp; look for ISO timestamps directly."""
    all_out, _ = plan_all
    assert _files(all_out / "dev")
    for name, content in _files(all_out / "dev").items():
        assert not ISO_TIMESTAMP.search(content.decode("utf-8")), name
