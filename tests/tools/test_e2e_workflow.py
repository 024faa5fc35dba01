"""The e2e workflow: on every pull request and on main, least privilege, pinned, no secrets, and
running exactly the repository's scripts in the order `make e2e` runs them.

(Its schema check is in test_workflows.py, which validates every workflow.)
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from tools.plan.harness import PROJECT_ROOT

WORKFLOW = PROJECT_ROOT / ".github" / "workflows" / "e2e.yml"


def workflow() -> dict[str, Any]:
    raw: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return {("on" if key is True else str(key)): value for key, value in raw.items()}


def steps() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = workflow()["jobs"]["kind"]["steps"]
    return found


def test_runs_on_every_pull_request_and_on_main() -> None:
    on = workflow()["on"]
    assert "pull_request" in on and on["push"] == {"branches": ["main"]}


def test_least_privilege_and_no_secrets() -> None:
    # Nothing by default; the one job reads the repository and nothing else.
    assert workflow()["permissions"] == {}
    assert workflow()["jobs"]["kind"]["permissions"] == {"contents": "read"}
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")
    checkout = next(step for step in steps() if str(step.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


def test_actions_are_pinned_by_full_commit_sha_with_the_version_in_a_comment() -> None:
    lines = [line for line in WORKFLOW.read_text(encoding="utf-8").splitlines() if "uses:" in line]
    assert lines
    for line in lines:
        assert re.search(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line


def test_it_runs_the_scripts_make_e2e_runs_in_the_same_order() -> None:
    scripts = [
        m
        for step in steps()
        if step.get("if") != "failure()"
        for m in re.findall(r"scripts/e2e/([\w-]+)\.sh", str(step.get("run", "")))
    ]
    for name in scripts:
        assert (PROJECT_ROOT / "scripts" / "e2e" / f"{name}.sh").is_file(), name
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("\ne2e:", 1)[1].split("\n\n", 1)[0]
    assert scripts[0] == "create-cluster"
    assert scripts[1:] == re.findall(r"scripts/e2e/([\w-]+)\.sh", target)


def test_every_command_is_a_script_of_the_repository() -> None:
    for step in steps():
        run = str(step.get("run", ""))
        if run:
            assert re.fullmatch(r"(make \.venv/bin/activate|scripts/[\w/-]+\.sh[^\n]*)\n?", run), run
    assert "scripts/install-tools.sh kind pulumi" in WORKFLOW.read_text(encoding="utf-8")
