"""Generate the parts of docs/ that follow from the code: reference tables and the layout.

    tenancy docs --write     # regenerate the marked regions of the docs (also `make docs`)
    tenancy docs --check     # exit 1 if a marked region is stale (tests do this too)

A generated region sits between `<!-- BEGIN GENERATED: <name> -->` and `<!-- END GENERATED: <name> -->`
in a Markdown file; everything outside the markers is hand-written and left alone. The regions:

- `tenant-overview` and `stack-overview`: one row per top-level key of each file, with its default
  and the first sentence of its description;
- `tenant-file` in docs/reference/tenant-file.md: one table per model of a tenant file
  (`TenantFile` and the models it uses), from the pydantic JSON Schema;
- `stack-config` in docs/reference/stack-config.md: the same for `StackSettings`;
- `layout` in docs/architecture.md: every package and module of components/, tools/ and
  policy_pack/ with the first sentence of its docstring, read from the tree without importing it;
- `gcp-deploy` and `aws-deploy` in docs/runbooks/gke.md and eks.md: the deploy identity's roles or
  actions per resource type, from the clouds' deploy rules (tools/generators/deploy_docs.py).

Descriptions come from `Field(description=...)` where a field has one, else from the comment
lines written directly above the field (or at the end of its line) in the model's source.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import json
import re
import sys
import textwrap
import tokenize
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_jsonable_python

from components.model.core.fields import DnsLabel, Domain, Quantity
from components.model.core.labels import DNS_LABEL
from components.model.settings.stack import StackSettings
from tools.generators.deploy_docs import aws_deploy, gcp_deploy
from tools.plan.harness import PROJECT_ROOT

DOCS_DIR = PROJECT_ROOT / "docs"
BEGIN = "<!-- BEGIN GENERATED: {name} (tenancy docs --write) -->"
END = "<!-- END GENERATED: {name} -->"
# The packages whose layout docs/architecture.md shows.
LAYOUT_ROOTS = ("components", "tools", "policy_pack")
# A default longer than this is summarised (keys of a mapping) instead of printed whole.
MAX_DEFAULT = 60


@dataclass(frozen=True)
class Region:
    """One generated region: the file it lives in, its marker name and how to render it."""

    path: Path
    name: str

    def render(self) -> str:
        """The region's current content, without the markers."""
        return _RENDERERS[self.name]()


# --- reference tables from the models ------------------------------------------------------------


def field_comments(model: type[BaseModel]) -> dict[str, str]:
    """Per field name, the comment written above the field (or at the end of its line) in the class
    or in the model class it inherits the field from (`TenantFile` inherits `TenantSpec`'s)."""
    found: dict[str, str] = {}
    for base in reversed(model.__mro__):
        if isinstance(base, type) and issubclass(base, BaseModel) and base is not BaseModel:
            found.update(_own_field_comments(base))
    return found


def _own_field_comments(model: type[BaseModel]) -> dict[str, str]:
    """The comments on the fields a class declares itself."""
    try:
        source = textwrap.dedent(inspect.getsource(model))
    except (OSError, TypeError):
        return {}
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    lines = source.splitlines()
    found: dict[str, str] = {}
    class_node = ast.parse(source).body[0]
    assert isinstance(class_node, ast.ClassDef)
    for node in class_node.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above: list[str] = []
        line = node.lineno - 1
        while line >= 1 and line in comments and lines[line - 1].lstrip().startswith("#"):
            above.insert(0, comments[line])
            line -= 1
        end = node.end_lineno or node.lineno
        inline = comments.get(end) if not lines[end - 1].lstrip().startswith("#") else None
        text = " ".join(part for part in [*above, inline or ""] if part)
        if text:
            found[node.target.id] = text
    return found


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for argument in typing.get_args(annotation):
        yield from _models_in(argument)


def models_by_name(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model reachable from `root` through its fields, by class name (the schema's `$defs` keys)."""
    found: dict[str, type[BaseModel]] = {}
    pending = [root]
    while pending:
        model = pending.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for field in model.model_fields.values():
            pending.extend(_models_in(field.annotation))
    return found


def _cell(text: str) -> str:
    """Text that is safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(value: str) -> str:
    return f"`{value}`" if "`" not in value else f"`` {value} ``"


def _ref_name(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _named_types() -> list[tuple[dict[str, Any], str]]:
    """Field types shared by many models, shown by name instead of by their pattern."""
    named = [
        (DnsLabel, "DNS label (lower case, at most 63 characters)"),
        (Domain, "domain name (`*.` allowed)"),
        (Quantity, "quantity (`500m`, `2`, `512Mi`)"),
    ]
    return [(TypeAdapter(kind).json_schema(), text) for kind, text in named]


NAMED_TYPES = _named_types()


def type_text(schema: dict[str, Any]) -> str:
    """A short human reading of a JSON Schema: `string, pattern ...`, `list of [Model](#model)`."""
    bare = {key: value for key, value in schema.items() if key not in ("title", "default", "description")}
    for named_schema, text in NAMED_TYPES:
        if bare == {key: value for key, value in named_schema.items() if key != "description"}:
            return text
    name = _ref_name(schema)
    if name:
        return f"[{name}](#{name.lower()})"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [type_text(option) for option in schema[key] if option.get("type") != "null"]
            text = " or ".join(options)
            discriminator = schema.get("discriminator", {}).get("propertyName")
            return f"{text}, chosen by `{discriminator}`" if discriminator else text
    if "enum" in schema:
        return ", ".join(_code(json.dumps(value) if not isinstance(value, str) else value) for value in schema["enum"])
    if "const" in schema:
        return _code(str(schema["const"]))
    kind = schema.get("type")
    parts: list[str] = []
    if kind == "array":
        parts.append(f"list of {type_text(schema.get('items', {}))}")
        if "minItems" in schema:
            parts.append(f"at least {schema['minItems']}")
    elif kind == "object":
        values = schema.get("additionalProperties")
        patterns = schema.get("patternProperties", {})
        names = schema.get("propertyNames", {})
        if isinstance(values, dict) or patterns:
            value_schema = values if isinstance(values, dict) else next(iter(patterns.values()))
            if "enum" in names:
                keys = ", ".join(_code(str(key)) for key in names["enum"])
            elif patterns and next(iter(patterns)) == DNS_LABEL.pattern:
                keys = "DNS label"
            elif patterns:
                keys = f"name ({_code(next(iter(patterns)))})"
            else:
                keys = "string"
            parts.append(f"map of {keys} to {type_text(value_schema)}")
        else:
            parts.append("mapping")
    elif isinstance(kind, str):
        parts.append(kind)
    elif isinstance(kind, list):
        parts.append(" or ".join(str(option) for option in kind))
    if "format" in schema:
        parts.append(schema["format"])
    if "minimum" in schema or "maximum" in schema:
        parts.append(f"{schema.get('minimum', '')}..{schema.get('maximum', '')}")
    if "minLength" in schema or "maxLength" in schema:
        parts.append(f"length {schema.get('minLength', 0)}..{schema.get('maxLength', '')}")
    if "pattern" in schema:
        parts.append(f"pattern {_code(schema['pattern'])}")
    return ", ".join(parts) or "any"


def default_text(model: type[BaseModel], field_name: str, required: bool) -> str:
    """The default as YAML-ish JSON, summarised when long; `required` when there is none."""
    if required:
        return "required"
    value = to_jsonable_python(model.model_fields[field_name].get_default(call_default_factory=True), by_alias=True)
    text = json.dumps(value, separators=(", ", ": "))
    if len(text) <= MAX_DEFAULT:
        return _code(text)
    if isinstance(value, dict):
        return "keys " + ", ".join(_code(str(key)) for key in value)
    return "see the model"


def _aliases(model: type[BaseModel]) -> dict[str, str]:
    """Field name per key as files spell it (`storageGb` -> `storage_gb`)."""
    return {(field.alias or name): name for name, field in model.model_fields.items()}


def described_schema(root: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of `root` with every field's description, also those written as comments.

    Descriptions are written either as `Field(description=...)` or as the comment above a field;
    both reach the schema, so an editor shows the same text on hover that the reference shows.
    """
    schema = root.model_json_schema(by_alias=True, mode="validation")
    definitions: dict[str, Any] = schema.get("$defs", {})
    for name, model in models_by_name(root).items():
        body = schema if name == root.__name__ else definitions.get(name, {})
        comments, aliases = field_comments(model), _aliases(model)
        for key, prop in body.get("properties", {}).items():
            comment = comments.get(aliases.get(key, key), "")
            if comment and not prop.get("description"):
                prop["description"] = comment
    return schema


def field_description(prop: dict[str, Any]) -> str:
    """What the reference says about one field: its description, else the docstring of the model it holds."""
    return str(prop.get("description") or "") or _model_summary(prop)


def model_table(model: type[BaseModel], schema: dict[str, Any], path: str) -> list[str]:
    """One section: the model's docstring, where it appears, and a row per field."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    aliases = _aliases(model)
    lines = [f"### {model.__name__}", "", f"At `{path}`." if path else "The top level of the file."]
    doc = inspect.cleandoc(model.__doc__ or "")
    if doc:
        lines += ["", doc]
    lines += ["", "| key | type | default | description |", "|---|---|---|---|"]
    for key, prop in properties.items():
        name = aliases.get(key, key)
        row = [_code(key), type_text(prop), default_text(model, name, key in required), field_description(prop)]
        lines.append("| " + " | ".join(_cell(cell) for cell in row) + " |")
    return lines


def _model_summary(schema: dict[str, Any]) -> str:
    """The first sentence of the docstring of the model a field holds, for fields with no comment."""
    refs = [_ref_name(option) for option in [schema, *schema.get("anyOf", [])]]
    name = next((ref for ref in refs if ref), None)
    return first_sentence(inspect.cleandoc(_MODEL_DOCS.get(name, ""))) if name else ""


_MODEL_DOCS: dict[str, str] = {}


def _children(schema: dict[str, Any], path: str) -> Iterator[tuple[str, str]]:
    """(model name, YAML path) of every model a schema refers to, with the path it is reached at."""
    name = _ref_name(schema)
    if name:
        yield name, path
        return
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, []):
            yield from _children(option, path)
    if "items" in schema:
        yield from _children(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _children(schema["additionalProperties"], f"{path}.<key>")
    for value in schema.get("patternProperties", {}).values():
        yield from _children(value, f"{path}.<name>")


def sections(root: type[BaseModel], prefix: str) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The described schema of `root` and (model name, YAML path) of every model it uses, breadth first."""
    schema = described_schema(root)
    definitions: dict[str, Any] = schema.get("$defs", {})
    _MODEL_DOCS.update({name: model.__doc__ or "" for name, model in models_by_name(root).items()})
    order: list[tuple[str, str]] = [(root.__name__, prefix)]
    seen = {root.__name__}
    index = 0
    while index < len(order):
        name, path = order[index]
        index += 1
        body = schema if name == root.__name__ else definitions[name]
        for key, prop in body.get("properties", {}).items():
            key_path = f"{path}{key}" if not path or path.endswith(":") else f"{path}.{key}"
            for child, child_path in _children(prop, key_path):
                if child not in seen:
                    seen.add(child)
                    order.append((child, child_path))
    return schema, order


def _body(schema: dict[str, Any], root: type[BaseModel], name: str) -> dict[str, Any]:
    return schema if name == root.__name__ else dict(schema.get("$defs", {})[name])


def reference(root: type[BaseModel], prefix: str) -> str:
    """Tables for `root` and every model it uses, in the order a reader meets them (breadth first)."""
    schema, order = sections(root, prefix)
    models = models_by_name(root)
    lines: list[str] = []
    for name, path in order:
        lines += [*model_table(models[name], _body(schema, root, name), path), ""]
    return "\n".join(lines).rstrip() + "\n"


def _values(schema: dict[str, Any]) -> list[Any]:
    """The fixed values a field takes (`enum`, `const`), also inside options, lists and maps."""
    found: list[Any] = [*schema.get("enum", []), *([schema["const"]] if "const" in schema else [])]
    for option in [*schema.get("anyOf", []), *schema.get("oneOf", [])]:
        found += _values(option)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += _values(schema[key])
    return found


def unexplained_values(root: type[BaseModel], prefix: str) -> list[str]:
    """Fixed values (`lifecycle: suspended`) that neither the field's description nor its model's
    docstring names, as `path.key (Model): value`: a reader must learn what each choice does."""
    schema, order = sections(root, prefix)
    models = models_by_name(root)
    missing: list[str] = []
    for name, path in order:
        doc = models[name].__doc__ or ""
        for key, prop in _body(schema, root, name).get("properties", {}).items():
            text = field_description(prop) + doc
            key_path = f"{path}{key}" if not path or path.endswith(":") else f"{path}.{key}"
            missing += [f"{key_path} ({name}): {value}" for value in _values(prop) if str(value) not in text]
    return missing


def undescribed(root: type[BaseModel], prefix: str) -> list[str]:
    """Every field (as `path.key (Model)`) and model the reference would show without a description."""
    schema, order = sections(root, prefix)
    models = models_by_name(root)
    missing: list[str] = []
    for name, path in order:
        if not inspect.cleandoc(models[name].__doc__ or ""):
            missing.append(f"{path or '(top level)'} ({name}): the model has no docstring")
        for key, prop in _body(schema, root, name).get("properties", {}).items():
            if not field_description(prop).strip():
                key_path = f"{path}{key}" if not path or path.endswith(":") else f"{path}.{key}"
                missing.append(f"{key_path} ({name})")
    return missing


def overview(root: type[BaseModel]) -> str:
    """One row per top-level key of `root`: its default and the first sentence of its description.

    Generated, so the overview cannot leave a key out the way a hand-written table did.
    """
    schema = described_schema(root)
    _MODEL_DOCS.update({name: model.__doc__ or "" for name, model in models_by_name(root).items()})
    required = set(schema.get("required", []))
    aliases = _aliases(root)
    lines = ["| key | default | meaning |", "|---|---|---|"]
    for key, prop in schema.get("properties", {}).items():
        meaning = first_sentence(field_description(prop))
        model = next((_ref_name(option) for option in [prop, *prop.get("anyOf", [])] if _ref_name(option)), None)
        default = default_text(root, aliases.get(key, key), key in required)
        if model is not None and default.startswith("keys "):
            default = f"see [{model}](#{model.lower()})"
        row = [_code(key), default, meaning]
        lines.append("| " + " | ".join(_cell(cell) for cell in row) + " |")
    return "\n".join(lines) + "\n"


def tenant_file_overview() -> str:
    """The overview table of the tenant file: every top-level key."""
    from components.model.tenant_file.spec import TenantFile

    return overview(TenantFile)


def stack_config_overview() -> str:
    """The overview table of the stack config: every key under `tenancy:`."""
    return overview(StackSettings)


def tenant_file_reference() -> str:
    """The tenant file reference: `TenantFile` (a `TenantSpec` plus `overrides`) and its models."""
    from components.model.tenant_file.spec import TenantFile

    return reference(TenantFile, "")


def stack_config_reference() -> str:
    """The stack config reference: `StackSettings` (keys under `tenancy:`) and its models."""
    return reference(StackSettings, "tenancy:")


# --- layout from the tree ------------------------------------------------------------------------


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line, without its full stop."""
    paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?)\.(\s|$)", paragraph)
    return (match.group(1) if match else paragraph).rstrip(".")


def summary(path: Path) -> str:
    """The first sentence of a module's docstring; empty when it has none worth showing."""
    text = first_sentence(ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "")
    # Package docstrings that only repeat the package's name say nothing.
    return "" if text.lower() == (path.parent.name if path.name == "__init__.py" else path.stem).lower() else text


def _layout_lines(directory: Path, depth: int) -> list[str]:
    indent = "  " * depth
    lines: list[str] = []
    relative = directory.relative_to(PROJECT_ROOT).as_posix()
    init = directory / "__init__.py"
    about = summary(init) if init.exists() else ""
    lines.append(f"{indent}- [{directory.name}/]({'../' + relative + '/'})" + (f": {_cell(about)}" if about else ""))
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or path.name in ("__init__.py", "__pycache__"):
            continue
        if path.is_dir() and any(path.rglob("*.py")):
            lines += _layout_lines(path, depth + 1)
        elif path.suffix == ".py":
            about = summary(path)
            target = "../" + path.relative_to(PROJECT_ROOT).as_posix()
            lines.append(f"{indent}  - [{path.name}]({target})" + (f": {_cell(about)}" if about else ""))
    return lines


def layout() -> str:
    """Every package and module of the layout roots, with the first sentence of its docstring."""
    lines: list[str] = []
    for root in LAYOUT_ROOTS:
        lines += _layout_lines(PROJECT_ROOT / root, 0)
    return "\n".join(lines) + "\n"


_RENDERERS = {
    "tenant-overview": tenant_file_overview,
    "tenant-file": tenant_file_reference,
    "stack-overview": stack_config_overview,
    "stack-config": stack_config_reference,
    "layout": layout,
    "gcp-deploy": gcp_deploy,
    "aws-deploy": aws_deploy,
}
REGIONS = (
    Region(DOCS_DIR / "reference" / "tenant-file.md", "tenant-overview"),
    Region(DOCS_DIR / "reference" / "stack-config.md", "stack-overview"),
    Region(DOCS_DIR / "reference" / "tenant-file.md", "tenant-file"),
    Region(DOCS_DIR / "reference" / "stack-config.md", "stack-config"),
    Region(DOCS_DIR / "architecture.md", "layout"),
    Region(DOCS_DIR / "runbooks" / "gke.md", "gcp-deploy"),
    Region(DOCS_DIR / "runbooks" / "eks.md", "aws-deploy"),
)


# --- regions -------------------------------------------------------------------------------------


def replace_region(text: str, name: str, content: str) -> str:
    """`text` with the region `name` holding `content`; ValueError when its markers are missing."""
    begin, end = BEGIN.format(name=name), END.format(name=name)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"region {name!r} needs exactly one `{begin}` followed by one `{end}`")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n\n{content.rstrip()}\n\n{end}{tail}"


def _shown(path: Path) -> str:
    """A path relative to the project when it is inside it."""
    return path.relative_to(PROJECT_ROOT).as_posix() if path.is_relative_to(PROJECT_ROOT) else str(path)


def stale_regions() -> list[str]:
    """The regions whose file does not hold what the code renders now, as `path (name)`."""
    stale: list[str] = []
    for region in REGIONS:
        relative = _shown(region.path)
        if not region.path.exists():
            stale.append(f"{relative} ({region.name}): missing")
            continue
        text = region.path.read_text(encoding="utf-8")
        try:
            if replace_region(text, region.name, region.render()) != text:
                stale.append(f"{relative} ({region.name})")
        except ValueError as error:
            stale.append(f"{relative}: {error}")
    return stale


def write() -> list[str]:
    """Rewrite every region in place; the files changed, relative to the project root."""
    changed: list[str] = []
    for region in REGIONS:
        text = region.path.read_text(encoding="utf-8")
        new = replace_region(text, region.name, region.render())
        if new != text:
            region.path.write_text(new, encoding="utf-8")
            changed.append(_shown(region.path))
    return changed


def main(argv: list[str] | None = None) -> int:
    """`--write` regenerates the regions; `--check` exits 1 naming every stale one."""
    parser = argparse.ArgumentParser(prog="tenancy docs", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate the generated regions of docs/")
    group.add_argument("--check", action="store_true", help="exit 1 naming every stale region")
    args = parser.parse_args(argv)
    if args.write:
        written = write()
        for path in written:
            print(f"wrote {path}")
        if not written:
            print("docs/ is current: nothing to write")
        return 0
    stale = stale_regions()
    for entry in stale:
        print(f"{entry} is stale: run `make docs`", file=sys.stderr)
    if not stale:
        print("docs/ is current: every generated region matches the code")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
