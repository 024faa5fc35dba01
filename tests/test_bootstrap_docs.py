"""The docs' commands match the committed stack files: every KMS secrets-provider URL a doc names
is the `secretsprovider` a `Pulumi.<stack>.yaml` commits, and every `pulumi stack init` a doc shows
passes a secrets provider (without one the stack is made under the backend's default provider,
not the committed key, and the committed `encryptedkey` no longer matches)."""

from __future__ import annotations

import re

import yaml

from tools.plan.harness import PROJECT_ROOT

DOCS = sorted([PROJECT_ROOT / "README.md", *(PROJECT_ROOT / "docs").rglob("*.md")])
_KMS_URL = re.compile(r"(?:gcpkms|awskms)://[^\s`'\")|]+")
# One command: up to the end of the line, the code span, or the next `&&`, `;` or `|`.
_STACK_INIT = re.compile(r"pulumi stack init\b[^\n`&;|]*")


def committed_providers() -> dict[str, str]:
    providers = {}
    for path in sorted(PROJECT_ROOT.glob("Pulumi.*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if isinstance(document.get("secretsprovider"), str):
            providers[path.name] = document["secretsprovider"]
    return providers


def foreign_urls(text: str, committed: set[str]) -> list[str]:
    return sorted({url.rstrip(".,;:") for url in _KMS_URL.findall(text)} - committed)


def inits_without_provider(text: str) -> list[str]:
    return [match.strip() for match in _STACK_INIT.findall(text) if "--secrets-provider" not in match]


def test_every_kms_url_in_the_docs_is_a_committed_secrets_provider() -> None:
    committed = set(committed_providers().values())
    wrong = {
        doc.relative_to(PROJECT_ROOT).as_posix(): foreign_urls(doc.read_text(encoding="utf-8"), committed)
        for doc in DOCS
    }
    assert {doc: urls for doc, urls in wrong.items() if urls} == {}


def test_every_stack_init_in_the_docs_names_the_secrets_provider() -> None:
    wrong = {
        doc.relative_to(PROJECT_ROOT).as_posix(): inits_without_provider(doc.read_text(encoding="utf-8"))
        for doc in DOCS
    }
    assert {doc: lines for doc, lines in wrong.items() if lines} == {}


def test_the_bootstrap_doc_lists_each_committed_kms_provider() -> None:
    text = (PROJECT_ROOT / "docs" / "bootstrap.md").read_text(encoding="utf-8")
    for name, url in committed_providers().items():
        stack = name.removeprefix("Pulumi.").removesuffix(".yaml")
        assert f"| `{stack}` | `{url}` |" in text, name


def test_the_checks_find_what_is_wrong() -> None:
    committed = {"gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k"}
    text = (
        "`gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k`, and\n"
        "pulumi stack init prod --secrets-provider awskms://alias/pulumi-state\n"
        "pulumi stack init prod-platform && pulumi stack init prod-shard-0 --secrets-provider x\n"
    )
    assert foreign_urls(text, committed) == ["awskms://alias/pulumi-state"]
    assert inits_without_provider(text) == ["pulumi stack init prod-platform"]
