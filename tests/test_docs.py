"""The docs stay true to the tree: named paths exist, links resolve, generated parts are fresh.

Paths are read from inline code spans and link targets of README.md and docs/**/*.md (fenced code
blocks are examples, not claims about the tree). The generated regions of tools/generators/docs.py are left
out of the path check: they are rendered from the tree itself and checked for staleness instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.generators import docs
from tools.plan.harness import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
DOC_FILES = [README, *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]
MAX_README_LINES = 200

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_GENERATED = re.compile(r"<!-- BEGIN GENERATED: (\S+).*?<!-- END GENERATED: \1 -->", re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# Top-level folders and files of the project a doc may name. A path is one of these followed by
# `/segment` parts made of name characters only, so `tenants/<name>.yaml` is the folder `tenants/`.
_ROOTS = r"components|tools|tests|policy_pack|docs|schemas|tenants|scripts|kind|\.github|\.ci"
_ROOT_FILES = r"README\.md|Makefile|__main__\.py|requirements\.txt|pyproject\.toml|Pulumi(?:\.[\w-]+)?\.yaml"
_PATH = re.compile(
    rf"(?<![\w./<>{{}}-])((?:{_ROOTS})(?:/[\w.-]+)*/?|(?:{_ROOT_FILES}))(?:::(\w+))?(?![\w<>{{}}*-])",
)
# Dotted module names as `python -m` takes them: `tools.plan.run`, `policy_pack.offline`.
_MODULE = re.compile(r"(?<![\w./-])((?:components|tools|tests|policy_pack)(?:\.\w+)+)(?![\w/-])")
# Paths the docs name that a command generates (they do not exist in a clean checkout).
GENERATED_ELSEWHERE = re.compile(r"^(?:deploy/|build/|Pulumi\.[\w-]+-(?:platform|shard-[\w-]+)\.yaml$)")


def prose(text: str) -> str:
    """The text a reader takes as claims: without fenced code blocks and generated regions."""
    return _GENERATED.sub("", _FENCE.sub("", text))


def named_paths(text: str) -> set[tuple[str, str | None]]:
    """(path, test or function name after `::`) for every project path in code spans and links."""
    found: set[tuple[str, str | None]] = set()
    for line in prose(text).splitlines():
        last: str | None = None
        for span in (match.group(2) for match in _CODE_SPAN.finditer(line)):
            # `::test_other` after `tests/x.py::test_one` on the same line names a test of that file.
            bare = re.match(r"^::(\w+)", span)
            if bare and last is not None:
                found.add((last, bare.group(1)))
            for match in _PATH.finditer(span):
                found.add((match.group(1), match.group(2)))
                last = match.group(1)
            for match in _MODULE.finditer(span):
                found.add((match.group(1).replace(".", "/"), "module"))
    return found


def missing_paths(text: str) -> list[str]:
    """The paths (and `path::name` test names) that a doc names and the tree does not have."""
    missing: list[str] = []
    for path, name in sorted(named_paths(text), key=lambda item: (item[0], item[1] or "")):
        if GENERATED_ELSEWHERE.match(path):
            continue
        target = PROJECT_ROOT / path
        if name == "module":
            if not (target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()):
                missing.append(path.replace("/", "."))
            continue
        if not target.exists():
            missing.append(path)
        elif name is not None and not re.search(rf"^\s*(?:async\s+)?def {name}\b", target.read_text("utf-8"), re.M):
            missing.append(f"{path}::{name}")
    return missing


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a Markdown file offers (headings, numbered like GitHub for repeats)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in _FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(doc: Path) -> list[str]:
    """Relative links of `doc` whose file or heading does not exist."""
    broken: list[str] = []
    for match in _LINK.finditer(_FENCE.sub("", doc.read_text(encoding="utf-8"))):
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (doc.parent / file_part).resolve() if file_part else doc
        bad_anchor = bool(anchor) and resolved.suffix == ".md" and resolved.exists() and anchor not in anchors(resolved)
        if not resolved.exists() or bad_anchor:
            broken.append(target)
    return broken


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda path: path.relative_to(PROJECT_ROOT).as_posix())
def test_every_path_a_doc_names_exists(doc: Path) -> None:
    assert missing_paths(doc.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda path: path.relative_to(PROJECT_ROOT).as_posix())
def test_every_relative_link_resolves(doc: Path) -> None:
    assert broken_links(doc) == []


def test_the_path_check_finds_what_is_wrong() -> None:
    text = (
        "See `components/model/nowhere.py`, `python -m tools.nothing`, `tests/test_tenant.py::test_nope`,\n"
        "`tests/test_tenant.py::test_network_isolation`, `::test_gone`\n"
        "and [x](docs/gone.md), but not `tenants/<name>.yaml`, `deploy/shards/prod.json` or\n"
        "```\ncomponents/in_a_fence.py\n```\n"
        "`components/model/settings/stack.py`, `policy_pack/`, `tools.plan.run`, "
        "`tests/test_tenant.py::test_network_isolation`."
    )
    assert missing_paths(text) == [
        "components/model/nowhere.py",
        "tests/test_tenant.py::test_gone",
        "tests/test_tenant.py::test_nope",
        "tools.nothing",
    ]


def test_the_link_check_finds_what_is_wrong(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    (tmp_path / "other.md").write_text("# A heading, with `code`\n", encoding="utf-8")
    doc.write_text(
        "# Top\n[ok](other.md#a-heading-with-code) [self](#top) [web](https://example.org/x)\n"
        "[gone](missing.md) [bad anchor](other.md#nope) [bad self](#nowhere)\n",
        encoding="utf-8",
    )
    assert broken_links(doc) == ["missing.md", "other.md#nope", "#nowhere"]


def test_generated_docs_are_up_to_date() -> None:
    assert docs.stale_regions() == [], "run `make docs` (tenancy docs --write)"


def test_stale_regions_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "page.md"
    begin, end = docs.BEGIN.format(name="layout"), docs.END.format(name="layout")
    page.write_text(f"# Layout\n{begin}\nold\n{end}\n", encoding="utf-8")
    monkeypatch.setattr(docs, "REGIONS", (docs.Region(page, "layout"),))
    assert docs.stale_regions() == [f"{page} (layout)"]
    assert docs.main(["--check"]) == 1
    assert docs.main(["--write"]) == 0
    assert docs.stale_regions() == []
    written = page.read_text(encoding="utf-8")
    assert written.startswith("# Layout\n") and "[model/](../components/model/)" in written


def test_the_layout_lists_every_module_of_components() -> None:
    layout = docs.layout()
    for module in sorted((PROJECT_ROOT / "components").rglob("*.py")):
        if module.name != "__init__.py":
            assert f"(../{module.relative_to(PROJECT_ROOT).as_posix()})" in layout, module


def test_the_references_cover_every_field() -> None:
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantFile

    tenant = docs.tenant_file_reference()
    for name, field in TenantFile.model_fields.items():
        assert f"| `{field.alias or name}` |" in tenant
    stack = docs.stack_config_reference()
    for name, field in StackSettings.model_fields.items():
        assert f"| `{field.alias or name}` |" in stack
    assert "### KarpenterPool" in stack and "### AppSpec" in tenant


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES
    text = "\n".join(lines)
    assert "make plan" in text and "make test" in text and "docs/README.md" in text


def test_every_field_of_both_references_is_described() -> None:
    # Lists every empty one by YAML path and model, so a new field without a description is named.
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantFile

    missing = docs.undescribed(TenantFile, "") + docs.undescribed(StackSettings, "tenancy:")
    assert missing == [], "fields without a description (Field(description=...) or a comment above it):\n" + "\n".join(
        missing
    )


def test_an_undescribed_field_is_named_by_path() -> None:
    from pydantic import BaseModel

    class Inner(BaseModel):
        """Something nested."""

        # Described by its comment.
        said: int = 0
        unsaid: int = 0

    class Outer(BaseModel):
        """The top."""

        inner: list[Inner] = []
        bare: int = 0

    assert docs.undescribed(Outer, "x:") == ["x:inner (Outer)", "x:bare (Outer)", "x:inner[].unsaid (Inner)"]
    said = docs.described_schema(Outer)["$defs"]["Inner"]["properties"]["said"]
    assert said["description"] == "Described by its comment."


def test_the_overviews_list_every_top_level_key() -> None:
    # The overview tables were hand-written once and left out six tenant keys; now they are generated.
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantFile

    for model, page in ((TenantFile, "tenant-file.md"), (StackSettings, "stack-config.md")):
        text = (PROJECT_ROOT / "docs" / "reference" / page).read_text(encoding="utf-8")
        # The overview is everything above the full reference (`## All fields`, `## All keys`).
        overview = re.split(r"^## All ", text, maxsplit=1, flags=re.MULTILINE)[0]
        for name, field in model.model_fields.items():
            assert f"| `{field.alias or name}` |" in overview, (page, field.alias or name)


# A pointer written in plain text (stack files, comments, prose): `docs/x.md`, `docs/x.md#anchor`,
# `README.md#anchor`, `README#anchor`, and the older `README, "Section"` form, which no check can
# follow (a README section renamed or moved to docs/ left such pointers dangling).
_POINTER = re.compile(r"(?<![\w/.-])((?:docs/[\w./-]+\.md|README(?:\.md)?)(?:#[\w-]+)?)(?![\w/-])")
_SECTION_BY_NAME = re.compile(r"README, [\"A-Z]")
POINTER_FILES = [
    *sorted(PROJECT_ROOT.glob("Pulumi*.yaml")),
    *DOC_FILES,
    *sorted((PROJECT_ROOT / "components").rglob("*.py")),
    *sorted((PROJECT_ROOT / "tools").rglob("*.py")),
]


def broken_pointers(text: str) -> list[str]:
    """Plain-text pointers to the README or docs/ whose file or heading does not exist."""
    broken = [match.group(0) for match in _SECTION_BY_NAME.finditer(text)]
    for match in _POINTER.finditer(text):
        pointer = match.group(1)
        file_part, _, anchor = pointer.partition("#")
        path = PROJECT_ROOT / ("README.md" if file_part.startswith("README") else file_part)
        if not path.is_file() or (anchor and anchor not in anchors(path)):
            broken.append(pointer)
    return broken


@pytest.mark.parametrize("path", POINTER_FILES, ids=lambda path: path.relative_to(PROJECT_ROOT).as_posix())
def test_every_pointer_to_the_docs_resolves(path: Path) -> None:
    assert broken_pointers(path.read_text(encoding="utf-8")) == []


def test_the_pointer_check_finds_what_is_wrong() -> None:
    text = (
        '# (see README, "Run it for real") (README, Node pools) docs/gone.md docs/network.md#nowhere\n'
        "# docs/network.md README.md#two-commands docs/data-and-secrets.md#stack-keys\n"
    )
    assert broken_pointers(text) == ['README, "', "README, N", "docs/gone.md", "docs/network.md#nowhere"]


def test_every_fixed_value_is_named_where_its_field_is_described() -> None:
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantFile

    missing = docs.unexplained_values(TenantFile, "") + docs.unexplained_values(StackSettings, "tenancy:")
    assert missing == [], "values no description names (say what each choice does):\n" + "\n".join(missing)
