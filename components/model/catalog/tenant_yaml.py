"""Reading tenant files: one YAML mapping per file, in one flat folder, every problem as a Problem.

Duplicate keys are refused (YAML would keep the last one silently); merge keys (`<<: *defaults`)
are read as YAML defines them. A tenant file in a subfolder is refused, not silently left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from components.model.core.errors import Problem
from components.model.core.messages import yaml_hint

try:
    # libyaml's parser (PyYAML's wheels carry it): it reads a thousand tenant files several times
    # faster than the pure-Python parser, with the same safe constructors and error marks.
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class _UniqueKeyLoader(_SafeLoader):
    """A YAML loader that refuses duplicate keys instead of silently keeping the last one."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    """A mapping whose own keys are unique. Merge keys (`<<: *defaults`) are YAML's: the merged
    mapping's keys come first and the node's own keys override them, which is no duplicate."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    loader.flatten_mapping(node)
    return loader.construct_mapping(node, deep=deep)


_MERGE_TAG = "tag:yaml.org,2002:merge"


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: Path, label: str) -> tuple[dict[str, Any] | None, list[Problem]]:
    try:
        text = path.read_text(encoding="utf-8")
        document = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
        reason = getattr(error, "problem", None) or str(error)
        lines = text.splitlines()
        hint = yaml_hint(reason, lines[mark.line] if mark and mark.line < len(lines) else "")
        return None, [Problem(label, where, f"malformed YAML: {reason}" + (f"; {hint}" if hint else ""))]
    except (OSError, UnicodeDecodeError) as error:
        return None, [Problem(label, "(file)", f"cannot read: {error}")]
    if not isinstance(document, dict):
        return None, [Problem(label, "(file)", "a tenant file must be a YAML mapping")]
    return document, []


def label_of(path: Path, root: Path | None) -> str:
    """`path` as messages name it: relative to the project root where it is inside it."""
    return str(path.relative_to(root)) if root is not None and path.is_relative_to(root) else str(path)


def nested_file_problems(tenants_dir: Path, root: Path | None) -> list[Problem]:
    """A tenant file in a subfolder (`tenants/finance/ledger.yaml`) would be silently left out of the
    stack: refused, saying where tenant files go."""
    problems = []
    folder = label_of(tenants_dir, root)
    for path in sorted([*tenants_dir.glob("*/**/*.yaml"), *tenants_dir.glob("*/**/*.yml")]):
        label = label_of(path, root)
        problems.append(
            Problem(
                label,
                "(file)",
                f"tenant files in subfolders are not read; tenant files go directly in {folder}/, one "
                f"<name>.yaml each: move it to {folder}/{path.name}",
            )
        )
    return problems
