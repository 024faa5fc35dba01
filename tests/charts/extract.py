"""Turn a chart's upstream files into the minimal test data tests/charts checks values against.

Run against a local clone of the chart's repository at the pinned tag, once per chart bump:

    python -m tests.charts.extract <clone> <tag> <chart dir in the repo> <chart> <version> <repository> [defaults]

or, where no clone holds the tag but the Go module proxy serves the repository as a module at it, against
the module's folder (`go mod download -json <module>@<tag>` prints it), `<clone>` given as `module:<folder>`:
the proxy serves the tag's tree, and `git hash-object` of a file is its blob id in the repository.

It writes tests/charts/data/<chart>/<version>/ with
- `values.schema.json`: the chart's own schema without its `description` annotations (annotations
  do not take part in validation, JSON Schema 2020-12 section 9; everything else kept verbatim);
- `values.keys.json`: the key tree of the chart's values.yaml (comments and defaults dropped): a
  map for every map with keys, `"map"` for an empty map (free-form: labels, annotations, resources),
  `"list"`, `"scalar"`, or `"any"` for a null default;
- with `defaults`, `values.defaults.json`: the values.yaml defaults themselves (comments dropped),
  for charts whose rendered pods the tests rebuild (the vCluster control plane and its CoreDNS);
- `SOURCE.md`: repository, tag, paths and the git blob ids of the files read, so anyone can check
  the data against upstream with `git rev-parse <tag>:<path>`.
Reading the files through git (not a checkout) means the data is exactly what the tag holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).parent / "data"
# Schema keywords whose values are maps of names to schemas: a `description` key there is a
# property name, not an annotation, and stays.
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def strip_descriptions(schema: Any, in_name_map: bool = False) -> Any:
    """The schema without `description` annotations; property names called `description` stay."""
    if isinstance(schema, list):
        return [strip_descriptions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if in_name_map:
        return {name: strip_descriptions(sub) for name, sub in schema.items()}
    return {
        key: strip_descriptions(value, in_name_map=key in _NAME_MAPS)
        for key, value in schema.items()
        if key != "description"
    }


def key_tree(values: Any) -> Any:
    """The shape of a values.yaml document, without its defaults (see the module docstring)."""
    if isinstance(values, dict):
        return {str(key): key_tree(value) for key, value in values.items()} if values else "map"
    if isinstance(values, list):
        return "list"
    return "any" if values is None else "scalar"


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(clone), *args], check=True, capture_output=True, text=True).stdout


def _file(clone: Path, tag: str, path: str) -> tuple[str, str] | None:
    """The file's text and git blob id at the tag, or None where the tag has no such file."""
    if not (clone / ".git").exists() and (clone / "go.mod").is_file():  # a Go module's folder at the tag
        if not (clone / path).is_file():
            return None
        hashed = subprocess.run(["git", "hash-object", str(clone / path)], check=True, capture_output=True, text=True)
        return (clone / path).read_text(), hashed.stdout.strip()
    try:
        blob = _git(clone, "rev-parse", f"{tag}:{path}").strip()
    except subprocess.CalledProcessError:
        return None
    return _git(clone, "cat-file", "blob", blob), blob


def _module_sum(folder: Path) -> str:
    """The module's `h1:` hash, as go.sum records it (the folder is `<module cache>/<path>@<version>`)."""
    path, version = folder.name.rsplit("@", 1)
    parent = folder.parent.relative_to(_module_cache(folder))
    info = _module_cache(folder) / "cache/download" / parent / path / "@v" / f"{version}.ziphash"
    return info.read_text().strip()


def _module_cache(folder: Path) -> Path:
    for parent in folder.parents:
        if (parent / "cache/download").is_dir():
            return parent
    raise SystemExit(f"{folder} is not in a Go module cache")


def extract(
    clone: Path, tag: str, chart_dir: str, chart: str, version: str, repository: str, defaults: bool = False
) -> Path:
    """Write the data directory for one chart version; return it."""
    out = DATA / chart / version
    out.mkdir(parents=True, exist_ok=True)
    module = not (clone / ".git").exists() and (clone / "go.mod").is_file()
    module_path = (clone / "go.mod").read_text().split()[1] if module else ""
    origin = (
        f"Read from {repository} at tag `{tag}` as the Go module proxy serves it (module `{module_path}@{tag}`,\n"
        f"go.sum `{_module_sum(clone)}`); the blob ids are `git hash-object` of its files, the same as the\n"
        "tag's. Written by tests/charts/extract.py."
        if module
        else f"Read with `git show` from {repository} at tag `{tag}`\n"
        f"(commit `{_git(clone, 'rev-list', '-n', '1', tag).strip()}`), written by tests/charts/extract.py."
    )
    lines = [f"# {chart} {version}: values schema and key tree (test data)", "", origin, ""]
    schema = _file(clone, tag, f"{chart_dir}/values.schema.json")
    if schema is not None:
        text, blob = schema
        stripped = strip_descriptions(json.loads(text))
        (out / "values.schema.json").write_text(json.dumps(stripped, indent=1, sort_keys=True) + "\n", "utf-8")
        lines.append(
            f"- `values.schema.json`: `{chart_dir}/values.schema.json` (blob `{blob}`), `description` removed."
        )
    else:
        lines.append(f"- no `values.schema.json`: the chart ships none at this tag (`{chart_dir}/`).")
    for name in ("values.yaml", "values.tmpl.yaml"):
        found = _file(clone, tag, f"{chart_dir}/{name}")
        if found is not None:
            text, blob = found
            parsed = yaml.safe_load(text)
            (out / "values.keys.json").write_text(
                json.dumps(key_tree(parsed), indent=1, sort_keys=True) + "\n", "utf-8"
            )
            lines.append(f"- `values.keys.json`: the key tree of `{chart_dir}/{name}` (blob `{blob}`).")
            if defaults:
                (out / "values.defaults.json").write_text(json.dumps(parsed, indent=1, sort_keys=True) + "\n", "utf-8")
                lines.append(f"- `values.defaults.json`: the defaults of `{chart_dir}/{name}`, comments dropped.")
            break
    else:
        raise SystemExit(f"{chart_dir}: no values.yaml at {tag}")
    (out / "SOURCE.md").write_text("\n".join(lines) + "\n", "utf-8")
    return out


if __name__ == "__main__":
    if len(sys.argv) not in (7, 8) or sys.argv[7:] not in ([], ["defaults"]):
        raise SystemExit(__doc__)
    clone_arg, tag_arg, dir_arg, chart_arg, version_arg, repo_arg = sys.argv[1:7]
    print(
        extract(
            Path(clone_arg.removeprefix("module:")),
            tag_arg,
            dir_arg,
            chart_arg,
            version_arg,
            repo_arg,
            defaults=len(sys.argv) == 8,
        )
    )
