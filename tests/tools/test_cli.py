"""The `tenancy` command (tools/cli/main.py): one subcommand per tool, each answering `--help` with a
`tenancy <name>` usage line, exit codes as docs/cli.md's table says, and the docs and the Makefile
using it instead of `python -m tools.<module>`."""

from __future__ import annotations

import ast
import inspect
import re
import tomllib
from pathlib import Path

import pytest

from tools.cli import main as cli
from tools.cli.exit_codes import EXIT_CODES
from tools.plan.harness import PROJECT_ROOT

CLI_DOC = PROJECT_ROOT / "docs" / "cli.md"
DOC_FILES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]
SUBCOMMANDS = sorted(cli.COMMANDS)
# What a user-facing text must not name: the project's modules and files.
MODULE_NAME = re.compile(r"\b(tools|components|tests)[./][a-z_]+|\b[a-z_]+\.py\b")


def module_of(name: str) -> str:
    """The module a subcommand imports its `main` from, read from the subcommand's own source."""
    run = cli.COMMANDS[name].run
    imports = [n for n in ast.walk(ast.parse(inspect.getsource(run))) if isinstance(n, ast.ImportFrom)]
    (found,) = [n.module for n in imports if any(alias.name == "main" for alias in n.names)]
    assert found is not None
    return found


def _module_tree(module: str) -> ast.Module:
    return ast.parse((PROJECT_ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))


def _imported_from(tree: ast.Module, name: str) -> str | None:
    """The project module `name` is imported from at the top of `tree`, if any."""
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("tools."):
            continue
        if any((alias.asname or alias.name) == name for alias in node.names):
            return node.module
    return None


# The shell's codes for a command a signal ended: 128 + SIGINT (Ctrl-C), 128 + SIGTERM.
SIGNAL_CODES = {130, 143}


def _called(call: ast.Call) -> str | None:
    """The name a call calls: `f(...)` and `module.f(...)` both give `f`."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def returned_codes(module: str, function: str = "main") -> set[int]:
    """The exit codes `function` of `module` can return: int constants and named ones (also imported
    from another tool), conditional ones, EXIT_CODES-style tables, and what a helper of the project
    it returns the result of can return (`return report_refusals(diff)`)."""
    tree = _module_tree(module)
    table: dict[str, set[int]] = {}
    constants: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            values = {v.value for v in node.value.values if isinstance(v, ast.Constant) and isinstance(v.value, int)}
            table.update({t.id: values for t in node.targets if isinstance(t, ast.Name)})
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
            constants.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    nested = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name not in functions}

    def codes(value: ast.expr | None) -> set[int]:
        if isinstance(value, ast.Constant) and isinstance(value.value, int):
            return {value.value}
        if isinstance(value, ast.IfExp):
            return codes(value.body) | codes(value.orelse)
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id in table:
            return table[value.value.id]
        if isinstance(value, ast.Name):
            if value.id in constants:
                return {constants[value.id]}
            source = _imported_from(tree, value.id)
            if source is not None:
                return {_module_constant(source, value.id)}
        if isinstance(value, ast.Call) and _called(value) == "entry_point" and value.args:
            # A real-run entry point returns its body's code, or a signal's (tools/realrun/processes.py).
            body = value.args[0]
            if isinstance(body, ast.Lambda):
                return codes(body.body) | SIGNAL_CODES
            if isinstance(body, ast.Name) and body.id in nested:  # a function defined inside this one
                returns = [node for node in ast.walk(nested[body.id]) if isinstance(node, ast.Return)]
                return {code for node in returns for code in codes(node.value)} | SIGNAL_CODES
            return codes(ast.Call(body, [], [])) | SIGNAL_CODES
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id in functions:
                return returned_codes(module, value.func.id)
            imported = _import_of(tree, value.func.id)
            if imported is not None:
                return returned_codes(*imported)
        raise AssertionError(f"{module}.{function} returns {ast.unparse(value) if value else None}: document it")

    body = functions[function]
    return {code for node in ast.walk(body) if isinstance(node, ast.Return) for code in codes(node.value)}


def _import_of(tree: ast.Module, name: str) -> tuple[str, str] | None:
    """(module, its own name) of the project function `name` is imported as, anywhere in `tree` (a
    function may import lazily: `from tools.realrun.bench import main as bench`)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("tools."):
            continue
        for alias in node.names:
            if (alias.asname or alias.name) == name:
                return node.module or "", alias.name
    return None


def _module_constant(module: str, name: str) -> int:
    tree = _module_tree(module)
    for node in tree.body:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
            continue
        value = node.value.value
        if isinstance(value, int) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return value
    source = _imported_from(tree, name)
    if source is None:
        raise AssertionError(f"{module}: no int constant {name}")
    return _module_constant(source, name)


def documented() -> dict[str, tuple[str, set[int]]]:
    """Subcommand -> (module path, the codes whose cell is filled) from docs/cli.md's table."""
    rows: dict[str, tuple[str, set[int]]] = {}
    for line in CLI_DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`") and cells[1].startswith("`tools/"):
            rows[cells[0].strip("`")] = (cells[1].strip("`"), {c for c in (0, 1, 2, 3) if cells[2 + c]})
    return rows


def test_tenancy_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    # The same (argparse) style as every subcommand's help.
    assert out.startswith("usage: tenancy ")
    listed = re.findall(r"^    ([a-z][a-z0-9-]+)(?:\s|$)", out.split("commands:", 1)[1], flags=re.MULTILINE)
    assert listed == SUBCOMMANDS
    assert {"plan", "diff", "status", "offboard", "shards", "affected", "bench", "docs", "schema"} <= set(listed)
    assert not MODULE_NAME.search(out), MODULE_NAME.search(out)


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_answers_help_with_its_usage(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: tenancy {name} "), out.splitlines()[0]
    # A description after the usage lines.
    description = out.split("\n\n", 2)[1]
    assert description.strip() and not description.startswith(("options:", "positional arguments:")), out
    # The user reads commands and files to edit, not the project's module names.
    assert not MODULE_NAME.search(out), MODULE_NAME.search(out)


def test_the_help_check_finds_a_module_name() -> None:
    assert MODULE_NAME.search("plan directory (tools.plan.run --out)")
    assert MODULE_NAME.search("the cases (tools/generators/admission_cases.py)")
    assert not MODULE_NAME.search("writes kind/cluster.yaml and schemas/tenant.schema.json; `tenancy plan`")


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_an_unknown_option_is_invalid_input(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([name, "--no-such-option"]) == 2
    assert "usage: " in capsys.readouterr().err


def test_an_unknown_subcommand_is_invalid_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["plna"]) == 2
    assert "unknown command 'plna' (did you mean 'plan'?)" in capsys.readouterr().err


def test_the_exit_code_table_covers_every_subcommand_and_only_codes_it_can_return() -> None:
    rows = documented()
    assert sorted(rows) == SUBCOMMANDS
    for name in SUBCOMMANDS:
        module = module_of(name)
        path, codes = rows[name]
        assert path == module.replace(".", "/") + ".py", name
        # 0 for --help and 2 for a usage error come from argparse in every tool; 130 (Ctrl-C) is a
        # signal's code, listed in the help's table (tools/cli/exit_codes.py) and in the prose.
        returned = returned_codes(module) | {0, 2}
        assert returned - SIGNAL_CODES == codes, (name, sorted(returned_codes(module)), sorted(codes))
        assert returned == set(EXIT_CODES[name]) | {0, 2}, name


def test_every_help_page_ends_with_the_exit_codes_docs_cli_lists() -> None:
    """The help's table and docs/cli.md's say the same, cell by cell."""
    cells: dict[str, dict[int, str]] = {}
    for line in CLI_DOC.read_text(encoding="utf-8").splitlines():
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(row) == 6 and row[0].startswith("`") and row[1].startswith("`tools/"):
            cells[row[0].strip("`")] = {code: row[2 + code] for code in range(4) if row[2 + code]}
    assert cells == {name: {c: t for c, t in codes.items() if c < 4} for name, codes in EXIT_CODES.items()}


@pytest.mark.parametrize("argv", [[name] for name in SUBCOMMANDS] + [["shards", "layout"], ["shards", "write"]])
def test_every_help_page_lists_exit_codes_and_explains_every_option(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([*argv, "--help"]) == 0
    out = capsys.readouterr().out
    assert "\nexit codes:\n  0   " in out, argv
    lines = out.split("options:", 1)[1].split("\nexit codes:", 1)[0].splitlines()
    for index, line in enumerate(lines):
        # An option line: `  --name VALUE   its help`, or its help on the next, deeper indented line.
        if not line.startswith("  -"):
            continue
        has_help = re.search(r"\S\s{2,}\S", line.strip()) is not None
        follows = index + 1 < len(lines) and lines[index + 1].startswith(" " * 8) and lines[index + 1].strip()
        assert has_help or follows, (argv, line)


def test_the_exit_code_check_sees_a_code_the_table_does_not_list(tmp_path: Path) -> None:
    assert returned_codes("tools.ci.pulumi_run") == {0, 1, 2}
    assert returned_codes("tools.generators.schema") == {0, 1}
    assert returned_codes("tools.scale.bench") == {0}


def test_pyproject_declares_the_command() -> None:
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"tenancy": "tools.cli.main:main"}
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"


@pytest.mark.parametrize("name", ["docs", "schema", "kind-config"])
def test_a_check_that_passes_says_so(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([name, "--check"]) == 0
    assert capsys.readouterr().out.strip().endswith(("is current", "matches the code"))


def test_the_makefile_installs_and_calls_tenancy() -> None:
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-m tools." not in makefile
    assert "$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation -e ." in makefile
    for target in ("plan", "schema", "docs", "e2e-manifests", "bench"):
        assert f"$(BIN)/tenancy {target} " in makefile, target


def python_m_tools(text: str) -> list[tuple[int, str]]:
    """Lines running a tool module directly, except where the line above points at docs/cli.md's reason."""
    lines = text.splitlines()
    return [
        (number + 1, line)
        for number, line in enumerate(lines)
        if re.search(r"-m tools\.", line) and not (number and "docs/cli.md" in lines[number - 1])
    ]


def test_readme_and_docs_use_tenancy_not_python_m_tools() -> None:
    found = {
        str(path.relative_to(PROJECT_ROOT)): python_m_tools(path.read_text(encoding="utf-8"))
        for path in DOC_FILES
        if path != CLI_DOC  # the page that says when `python -m tools.plan` is still the right call
    }
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_the_docs_check_finds_python_m_tools_without_a_reason() -> None:
    assert python_m_tools("run:\n    python -m tools.operations.status --stack dev\n") == [
        (2, "    python -m tools.operations.status --stack dev")
    ]
    assert python_m_tools("# the base checkout's code (docs/cli.md)\npython -m tools.plan --stack dev\n") == []
