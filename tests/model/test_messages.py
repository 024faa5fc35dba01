"""Messages a person can act on: "did you mean" for unknown fields, pattern rules in words, and
what to do about tabs in YAML, both in tenant files and in stack settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.core.messages import PATTERN_WORDS, allowed_fields
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantFile, TenantSpec
from tests.support import plan, tenant_document, write_tenants


def problems_of(tmp_path: Path, *documents: dict[str, Any], raw: dict[str, str] | None = None) -> list[str]:
    tenants = write_tenants(tmp_path / "tenants", *documents, raw=raw)
    with pytest.raises(ConfigurationError) as caught:
        plan("dev", tenants)
    return [str(problem) for problem in caught.value.problems]


def patterns(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(patterns(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(patterns(value) for value in node))
    return set()


@pytest.mark.parametrize("model", [TenantFile, TenantSpec, StackSettings])
def test_every_pattern_of_the_models_is_described_in_words(model: type[BaseModel]) -> None:
    missing = patterns(model.model_json_schema(by_alias=True)) - PATTERN_WORDS.keys()
    assert missing == set(), "describe these in components/model/core/messages.py PATTERN_WORDS"


def test_unknown_tenant_field_suggests_the_close_one(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, tenant_document("acme", contcat="x"))
    assert "acme.yaml: contcat: unknown field 'contcat'; did you mean 'contact'? (allowed here: " in problem


def test_unknown_nested_field_suggests_from_its_own_mapping(tmp_path: Path) -> None:
    document = tenant_document("acme", databases=[{"name": "orders", "engine": "postgres", "sise": "small"}])
    problems = problems_of(tmp_path, document)
    assert any("databases.0.sise: unknown field 'sise'; did you mean 'size'? (allowed here: " in p for p in problems)


def test_unknown_field_without_a_close_one_lists_what_is_allowed(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, tenant_document("acme", zzz=1))
    assert "unknown field 'zzz'; allowed here: " in problem and "contact" in problem.split("allowed here: ")[1]


def test_unknown_field_in_another_stacks_override_is_caught_with_its_path(tmp_path: Path) -> None:
    document = tenant_document("acme", overrides={"prod": {"contcat": "x"}})
    (problem,) = problems_of(tmp_path, document)
    assert "acme.yaml: overrides.prod -> contcat: unknown field 'contcat'; did you mean 'contact'? (" in problem


def test_pattern_rule_is_named_in_words(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, tenant_document("acme", costCenter="cost centre 7"))
    assert problem.endswith("costCenter: must be 1 to 63 letters, digits, '-' or '_' (no spaces); got 'cost centre 7'")


def test_tabs_in_yaml_say_what_to_do(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, raw={"acme.yaml": "name: acme\n\tcontact: team@acme.example.org\n"})
    assert "line 2, column 1: malformed YAML" in problem
    assert problem.endswith("YAML indents with spaces, not tabs: replace the tab with spaces")


def test_stack_settings_get_the_same_help() -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_settings({"tenancy:cloud": "local", "tenancy:clustr": "{}"}, "Pulumi.dev.yaml")
    assert "Pulumi.dev.yaml: tenancy:clustr: unknown field 'clustr'; did you mean 'cluster'?" in str(caught.value)


def test_allowed_fields_follow_lists_and_maps() -> None:
    assert "size" in allowed_fields(TenantFile, ("databases", 0))
    assert "kind" in allowed_fields(StackSettings, ("nodePools", "shared"))


def test_a_suggestion_comes_with_every_field_allowed_there(tmp_path: Path) -> None:
    # The guess can be wrong ('sise' may have meant another field): the whole list follows it.
    document = tenant_document("acme", databases=[{"name": "orders", "engine": "postgres", "sise": "small"}])
    (problem,) = [p for p in problems_of(tmp_path, document) if "'sise'" in p]
    listed = problem.split("(allowed here: ", 1)[1].rstrip(")").split(", ")
    assert {"name", "engine", "size", "version", "placement"} <= set(listed), listed
    assert "contact" not in listed, "the fields of the database mapping, not the tenant's"


def test_a_wrong_type_says_what_to_write(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, tenant_document("acme", quota="medium"))
    assert problem.endswith(
        "acme.yaml: quota: must be a mapping of custom, tier, written as indented `field: value` lines below it; "
        "got 'medium'"
    )
    (problem,) = problems_of(tmp_path, tenant_document("acme", environments="prod"))
    assert "acme.yaml: environments: must be a list, such as [a, b] or lines starting with '- '; got 'prod'" in problem
    assert not [p for p in problems_of(tmp_path, tenant_document("acme", quota="medium")) if "Input should" in p]


def test_a_tab_at_the_start_of_a_nested_line_gets_the_hint(tmp_path: Path) -> None:
    text = "name: beta\ndisplayName: Beta\ncontact: a@b.example.org\ncostCenter: cc\naccess:\n\tadmin: [x]\n"
    (problem,) = problems_of(tmp_path, raw={"beta.yaml": text})
    assert "beta.yaml: line 6, column 1: malformed YAML: " in problem
    assert problem.endswith("YAML indents with spaces, not tabs: replace the tab with spaces")


def test_a_wrong_environment_is_one_problem_not_a_cascade(tmp_path: Path) -> None:
    custom = {"custom": {"limits": {"cpu": "2", "memory": "1Gi"}}}
    document = tenant_document(
        "shop",
        environments=["dev", "prd"],
        quota=custom,
        databases=[{"name": "orders", "engine": "postgres", "version": "16", "environments": ["prod"]}],
    )
    problems = problems_of(tmp_path, document)
    assert problems == [
        f"{tmp_path / 'tenants' / 'shop.yaml'}: environments: prd not hosted by this stack (environments: dev, prod)"
    ]


def test_problems_only_against_the_files_that_have_them(tmp_path: Path) -> None:
    receiving = tenant_document("lab", acceptsFrom=[{"tenant": "status", "ports": [8080]}])
    broken = tenant_document("status", connectsTo=["lab"], contact="nobody")
    problems = problems_of(tmp_path, receiving, broken)
    assert [p.split(": ")[0] for p in problems] == [str(tmp_path / "tenants" / "status.yaml")]
    # A peer that does not exist at all is still the receiving file's problem.
    (problem,) = problems_of(tmp_path / "other", tenant_document("lab", acceptsFrom=[{"tenant": "ghost"}]))
    assert "lab.yaml: acceptsFrom.0.tenant: 'ghost' is not another tenant of this stack" in problem


def test_an_unknown_stack_lists_the_stacks() -> None:
    with pytest.raises(FileNotFoundError) as caught:
        plan("prodd")
    assert "did you mean 'prod'? the stacks are: dev, prod, prod-aws" in str(caught.value)
