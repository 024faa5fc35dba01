"""Locked dependencies: uv.lock matches pyproject.toml, the pip files are its exports, and the runtime
set that `pulumi up`, the policy pack and the Pulumi Kubernetes Operator install carries no test tool.

The pip files are what a fresh machine installs (`make test`: requirements-dev.txt; `pulumi install`
and the operator's workspace: requirements.txt), so they must be exactly what `uv export` writes
from the lock, with a hash for every requirement (pip then refuses anything else).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.pins import pins
from tools import requirements
from tools.harness import PROJECT_ROOT
from tools.requirements import EXPORTS

TEST_TOOLS = {
    "pytest",
    "ruff",
    "mypy",
    "kubernetes-validate",
    "check-jsonschema",
    "cel-expr-python",
    "jsonschema",
    "network-config-analyzer",
    "zizmor",
    "uv",
}


def uv(*args: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uv", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def test_the_lock_file_matches_pyproject() -> None:
    result = uv("lock", "--check", "--offline")
    assert result.returncode == 0, f"uv.lock is out of date with pyproject.toml: run `uv lock`\n{result.stderr}"


def test_pip_files_are_the_exports_of_the_lock() -> None:
    assert requirements.stale() == [], "stale: run `python -m tools.requirements` (docs/ci.md, Dependencies)"


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_every_requirement_carries_a_hash(name: str) -> None:
    text = (PROJECT_ROOT / name).read_text(encoding="utf-8").replace("\\\n", " ")
    requirements = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert requirements
    for line in requirements:
        assert "--hash=sha256:" in line, line.split()[0]


def test_the_runtime_set_carries_no_test_tool() -> None:
    runtime = pins(PROJECT_ROOT / "requirements.txt")
    assert {"pulumi", "pulumi-kubernetes", "pulumi-policy", "pydantic"} <= runtime.keys()
    assert TEST_TOOLS.isdisjoint(runtime), sorted(TEST_TOOLS & runtime.keys())
    development = pins(PROJECT_ROOT / "requirements-dev.txt")
    # The development set is the runtime set plus the tools, at the same versions.
    assert runtime.items() <= development.items()
    assert (TEST_TOOLS - {"network-config-analyzer"}) <= development.keys()


def test_a_pin_changed_by_hand_is_caught(tmp_path: Path) -> None:
    for name in ("pyproject.toml", "uv.lock", *EXPORTS):
        (tmp_path / name).write_text((PROJECT_ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert requirements.stale(tmp_path) == []
    runtime = tmp_path / "requirements.txt"
    runtime.write_text(runtime.read_text(encoding="utf-8").replace("pulumi==3.272.0", "pulumi==3.271.0"))
    assert requirements.stale(tmp_path) == ["requirements.txt"]
