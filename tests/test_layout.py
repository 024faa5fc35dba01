"""The layout keeps its shape (issue 27): no import cycles, and no flat modules in tools/ or components/model/.

Imports point down (docs/architecture.md): a cycle means two modules cannot be read, tested or
moved apart. Every import counts, also those under `if TYPE_CHECKING:` and inside functions: a
type-only cycle still ties the modules together for a reader and for mypy. The graph is built with
`ast` from the source, so nothing is imported to check it.

tools/ and components/model/ are grouped into packages by job and by concern; a new module goes
into one of them, not beside them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# The project's own packages whose modules may not import each other in a circle.
GRAPH_ROOTS = ("components", "tools", "policy_pack")
# Folders that hold packages only, and the files allowed beside them.
GROUPED_ROOTS = ("tools", "components/model")
FLAT_ALLOWED = frozenset({"__init__.py"})


def module_name(path: Path, root: Path) -> str:
    """`components/model/settings/stack.py` -> `components.model.settings.stack`; a package is named by its folder."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, name: str, is_package: bool, known: Iterable[str]) -> set[str]:
    """The modules of `known` that the module `name` imports, anywhere in its source."""
    modules = set(known)
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                # `from package import module` imports the module; `from module import name` the module.
                if f"{module}.{alias.name}" in modules:
                    found.add(f"{module}.{alias.name}")
                elif module in modules:
                    found.add(module)
    found.discard(name)
    return found


def import_graph(root: Path = PROJECT_ROOT, roots: Iterable[str] = GRAPH_ROOTS) -> dict[str, set[str]]:
    """{module: the project modules it imports} for every module under `roots`."""
    paths = {
        module_name(path, root): path
        for top in roots
        for path in sorted((root / top).rglob("*.py"))
        if "__pycache__" not in path.parts
    }
    return {
        name: imported_modules(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", paths)
        for name, path in paths.items()
    }


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One import cycle per strongly connected group of modules, as `a -> b -> ... -> a`.

    Tarjan's algorithm finds the groups; within each, a shortest way back to its first module is
    reported, so the message names the imports to cut.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_shortest_cycle(graph, group) for group in sorted(groups)]


def _shortest_cycle(graph: Mapping[str, Iterable[str]], group: list[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.get(node, ())):
                if target == start:
                    return [*paths[node], start]
                if target in members and target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"{group} is not a cycle")  # Tarjan's groups always are


def flat_modules(root: Path = PROJECT_ROOT) -> list[str]:
    """Files directly in a grouped root that are not allowed there."""
    return sorted(
        path.relative_to(root).as_posix()
        for folder in GROUPED_ROOTS
        for path in (root / folder).iterdir()
        if path.is_file() and path.name not in FLAT_ALLOWED
    )


def test_no_import_cycles() -> None:
    graph = import_graph()
    # A wrong root would build an empty graph and pass: the program's own imports must be there.
    assert "components.model.core.fields" in graph["components.tenant"] | {
        target for targets in graph.values() for target in targets
    }
    assert len(graph) > 100
    found = cycles(graph)
    assert not found, "import cycles (imports point down: cut one import of each):\n" + "\n".join(
        " -> ".join(cycle) for cycle in found
    )


def test_tools_and_model_hold_packages_only() -> None:
    flat = flat_modules()
    assert not flat, "put these into a package of their folder (docs/architecture.md, layout):\n" + "\n".join(flat)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
        # A circle of three beside a chain into it: the circle is named, from its first module.
        ({"x": {"a"}, "a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c", "a"]]),
        # The shortest way back when the group has more than one.
        ({"a": {"b", "d"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "d", "a"]]),
        ({"a": {"a"}}, [["a", "a"]]),
    ],
)
def test_cycles_finds_every_circle(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(graph) == expected


def test_imports_are_read_everywhere_in_the_source() -> None:
    known = {"p", "p.a", "p.b", "p.c", "p.d", "p.e"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import p.a\n"
        "from p import b\n"
        "from p.c import thing\n"
        "from .d import other\n"
        "if TYPE_CHECKING:\n"
        "    from p.e import Kind\n"
        "def later() -> None:\n"
        "    from p import f\n"
    )
    # `from p import f` names no module of `known`: it imports the package p.
    assert imported_modules(source, "p.x", False, known) == {"p", "p.a", "p.b", "p.c", "p.d", "p.e"}


def test_flat_modules_are_found(tmp_path: Path) -> None:
    for folder in GROUPED_ROOTS:
        (tmp_path / folder / "grouped").mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
        (tmp_path / folder / "grouped" / "module.py").write_text("")
    (tmp_path / "tools" / "loose.py").write_text("")
    assert flat_modules(tmp_path) == ["tools/loose.py"]
