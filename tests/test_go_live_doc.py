"""docs/go-live.md names only commands that exist: its `make` targets are the Makefile's, its
`tenancy <subcommand>` commands are subcommands whose flags the tool accepts, its stacks are stacks."""

from __future__ import annotations

import re

from tools.cli import main as cli
from tools.plan.all_stacks import all_stacks
from tools.plan.harness import PROJECT_ROOT

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


def tool_commands(doc: str) -> list[tuple[str, str]]:
    """Each `tenancy <subcommand> --flag ...` of a page: (subcommand, flags)."""
    return re.findall(r"`tenancy ([a-z][a-z0-9-]*)((?: --[a-z-]+(?: [^\s`-][^\s`]*)?)*)", doc)


def test_every_tool_and_flag_exists() -> None:
    commands = tool_commands(DOC)
    assert ("status", " --stack prod") in commands
    for name, flags in commands:
        assert name in cli.COMMANDS, name
        source = PROJECT_ROOT / (cli_module(name).replace(".", "/") + ".py")
        for flag in re.findall(r"--[a-z-]+", flags):
            assert f'"{flag}"' in source.read_text(encoding="utf-8"), (name, flag)


def cli_module(name: str) -> str:
    """The tool module a subcommand runs (tests/tools/test_cli.py reads it the same way)."""
    from tests.tools.test_cli import module_of

    return module_of(name)


def test_the_checks_catch_a_wrong_command() -> None:
    assert "nope" not in make_targets(MAKEFILE)
    assert "plan-all" in make_targets(MAKEFILE)
    assert tool_commands("`tenancy nope --stack dev`") == [("nope", " --stack dev")]
    assert "nope" not in cli.COMMANDS
