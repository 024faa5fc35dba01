"""Locked dependencies: uv.lock matches pyproject.toml, the pip files are its exports, and the runtime
set that `pulumi up`, the policy pack and the Pulumi Kubernetes Operator install carries no test tool
and no Kubernetes client (issue 16), nor anything only the `ops` or `dev` groups need.

The pip files are what a fresh machine installs (`make test`: requirements-dev.txt; `pulumi install`
and the operator's workspace: requirements.txt; `tools.operations.status`: requirements-ops.txt), so they must
be exactly what `uv export` writes from the lock, with a hash for every requirement (pip then
refuses anything else).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.pins import pins
from tools.generators import requirements
from tools.generators.requirements import EXPORTS
from tools.plan.harness import PROJECT_ROOT

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


# The client of `tools.operations.status` (the `ops` group); the runtime parses quantities without it.
OPS_TOOLS = {"kubernetes"}


def uv(*args: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uv", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def test_the_lock_file_matches_pyproject() -> None:
    result = uv("lock", "--check", "--offline")
    assert result.returncode == 0, f"uv.lock is out of date with pyproject.toml: run `uv lock`\n{result.stderr}"


def test_pip_files_are_the_exports_of_the_lock() -> None:
    assert requirements.stale() == [], "stale: run `tenancy requirements` (docs/ci.md, Dependencies)"


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
    assert OPS_TOOLS.isdisjoint(runtime), sorted(OPS_TOOLS & runtime.keys())
    ops = pins(PROJECT_ROOT / "requirements-ops.txt")
    development = pins(PROJECT_ROOT / "requirements-dev.txt")
    # Each set is the one before plus its group, at the same versions.
    assert runtime.items() < ops.items() <= development.items()
    assert OPS_TOOLS.issubset(ops) and TEST_TOOLS.isdisjoint(ops)
    assert (TEST_TOOLS - {"network-config-analyzer"}) <= development.keys()


def _closure(packages: dict[str, dict[str, Any]], roots: Iterable[str]) -> set[str]:
    """Every package `roots` pull in, following the lock's dependency lists (markers included)."""
    found: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo.extend(dependency["name"] for dependency in packages[name].get("dependencies", []))
    return found


def test_the_runtime_set_has_nothing_only_the_ops_and_dev_groups_need() -> None:
    # Computed from uv.lock's graph, independently of `uv export`.
    lock = tomllib.loads((PROJECT_ROOT / "uv.lock").read_text(encoding="utf-8"))
    packages = {package["name"]: package for package in lock["package"]}
    project = packages["tenancy"]
    runtime_closure = _closure(packages, (d["name"] for d in project["dependencies"]))
    groups = project["dev-dependencies"]
    group_closure = _closure(packages, (d["name"] for group in groups.values() for d in group))
    only_groups = group_closure - runtime_closure
    # The client's own tree (websocket-client, durationpy, oauthlib, ...) is among them.
    assert {"kubernetes", "websocket-client", "durationpy", "oauthlib", "pytest"} <= only_groups
    runtime = pins(PROJECT_ROOT / "requirements.txt")
    assert only_groups.isdisjoint(runtime), sorted(only_groups & runtime.keys())
    assert runtime.keys() == runtime_closure


def test_the_program_and_the_policy_pack_run_without_the_kubernetes_client(tmp_path: Path) -> None:
    # What a machine with requirements.txt only runs: the program under mocks, then the policy pack.
    script = (
        "import runpy, sys; sys.modules['kubernetes'] = None\n"
        "def run(module, *args):\n"
        "    sys.argv = [module, *args]\n"
        "    try:\n"
        "        runpy.run_module(module, run_name='__main__')\n"
        "    except SystemExit as done:\n"
        "        assert not done.code, (module, done.code)\n"
        f"run('tools.plan.run', '--stack', 'dev', '--out', {str(tmp_path / 'dev')!r})\n"
        f"run('policy_pack.offline', {str(tmp_path / 'dev')!r})\n"
        "assert sys.modules['kubernetes'] is None\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "dev" / "resources.json").exists()


def test_a_pin_changed_by_hand_is_caught(tmp_path: Path) -> None:
    for name in ("pyproject.toml", "uv.lock", *EXPORTS):
        (tmp_path / name).write_text((PROJECT_ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert requirements.stale(tmp_path) == []
    runtime = tmp_path / "requirements.txt"
    runtime.write_text(runtime.read_text(encoding="utf-8").replace("pulumi==3.272.0", "pulumi==3.271.0"))
    assert requirements.stale(tmp_path) == ["requirements.txt"]
