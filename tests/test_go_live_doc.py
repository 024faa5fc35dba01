"""docs/go-live.md names only commands that exist: its `make` targets are the Makefile's, its
`python -m tools.<tool>` commands are modules whose flags the tool accepts, its stacks are stacks."""

from __future__ import annotations

import re

from tools.harness import PROJECT_ROOT
from tools.plan_all import all_stacks

DOC = (PROJECT_ROOT / "docs" / "go-live.md").read_text(encoding="utf-8")
MAKEFILE = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")


def make_targets(makefile: str) -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):", makefile, re.MULTILINE))


def test_every_make_target_exists() -> None:
    used = set(re.findall(r"\bmake ([a-z][a-z0-9-]*)", DOC))
    assert {"plan-all", "preview", "up", "cluster"} <= used
    assert used <= make_targets(MAKEFILE), used - make_targets(MAKEFILE)


def test_every_stack_named_exists() -> None:
    assert set(re.findall(r"STACK=([a-z][a-z0-9-]*)", DOC)) <= set(all_stacks())


def test_every_tool_and_flag_exists() -> None:
    for tool, flags in re.findall(r"python -m tools\.([a-z_]+)((?: --[a-z-]+(?: [^\s`-][^\s`]*)?)*)", DOC):
        source = PROJECT_ROOT / "tools" / f"{tool}.py"
        assert source.exists(), tool
        for flag in re.findall(r"--[a-z-]+", flags):
            assert f'"{flag}"' in source.read_text(encoding="utf-8"), (tool, flag)


def test_the_checks_catch_a_wrong_command() -> None:
    assert "nope" not in make_targets(MAKEFILE)
    assert "plan-all" in make_targets(MAKEFILE)
