"""Code shape of components/ (issue 12): no function or method over 60 lines, no module over 400.

Small functions and modules are what let a newcomer find and review one concern at a time; this
test keeps the rule from eroding one line at a time. It measures the source with `ast`, so it
names the file, the function and its length when something grows past the limit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
COMPONENTS = PROJECT_ROOT / "components"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
# The name under which a whole module's length is reported.
MODULE = "<module>"

# (path from the project root, function qualname or MODULE) that still break the rule.
KNOWN_OVERSIZED: frozenset[tuple[str, str]] = frozenset(
    # (path, function name or MODULE) allowed to break the rule for now, each with its reason.
)


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method with its qualified name (`Class.method`, `outer.inner`)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((f"{prefix}{child.name}", child))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def measure(source: str) -> dict[str, int]:
    """Lengths over the limits in one module's source: {qualname or MODULE: lines}.

    A function counts from its first decorator to its last line, docstring and comments included:
    what a reader has to take in at once.
    """
    over: dict[str, int] = {}
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        over[MODULE] = lines
    for name, node in _functions(ast.parse(source)):
        start = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        length = (node.end_lineno or node.lineno) - start + 1
        if length > MAX_FUNCTION_LINES:
            over[name] = length
    return over


def oversized() -> dict[tuple[str, str], int]:
    """Everything in components/ over the limits: {(path, qualname or MODULE): lines}."""
    return {
        (path.relative_to(PROJECT_ROOT).as_posix(), name): length
        for path in sorted(COMPONENTS.rglob("*.py"))
        for name, length in measure(path.read_text(encoding="utf-8")).items()
    }


def _describe(path: str, name: str, length: int) -> str:
    if name == MODULE:
        return f"{path} is {length} lines (at most {MAX_MODULE_LINES} per module)"
    return f"{path}: {name} is {length} lines (at most {MAX_FUNCTION_LINES} per function)"


def test_components_keep_functions_and_modules_small() -> None:
    # A wrong path would measure nothing and pass: make sure the program's modules are the ones read.
    assert (COMPONENTS / "tenant.py").is_file()
    found = oversized()
    new = [
        _describe(path, name, length)
        for (path, name), length in sorted(found.items())
        if (path, name) not in KNOWN_OVERSIZED
    ]
    assert not new, "split these (issue 12):\n" + "\n".join(new)


def test_known_oversized_entries_still_break_the_rule() -> None:
    """An entry that no longer breaks the rule must go, or the exception would outlive its reason."""
    found = oversized()
    stale = sorted(f"{path}: {name}" for path, name in KNOWN_OVERSIZED if (path, name) not in found)
    assert not stale, "no longer oversized; remove from KNOWN_OVERSIZED:\n" + "\n".join(stale)


def _function(name: str, body_lines: int) -> str:
    return f"def {name}() -> None:\n" + "    x = 1\n" * body_lines


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (_function("fits", MAX_FUNCTION_LINES - 1), {}),
        (_function("too_long", MAX_FUNCTION_LINES), {"too_long": MAX_FUNCTION_LINES + 1}),
        # The decorator counts, and methods and nested functions are named by where they live.
        ("@staticmethod\n" + _function("decorated", MAX_FUNCTION_LINES - 1), {"decorated": MAX_FUNCTION_LINES + 1}),
        (
            "class Box:\n" + "\n".join("    " + line for line in _function("method", MAX_FUNCTION_LINES).splitlines()),
            {"Box.method": MAX_FUNCTION_LINES + 1},
        ),
        (
            "def outer() -> None:\n"
            + "\n".join("    " + line for line in _function("inner", MAX_FUNCTION_LINES).splitlines()),
            {"outer": MAX_FUNCTION_LINES + 2, "outer.inner": MAX_FUNCTION_LINES + 1},
        ),
        ("x = 1\n" * MAX_MODULE_LINES, {}),
        ("x = 1\n" * (MAX_MODULE_LINES + 1), {MODULE: MAX_MODULE_LINES + 1}),
    ],
)
def test_measure_finds_what_is_too_long(source: str, expected: dict[str, int]) -> None:
    assert measure(source) == expected
