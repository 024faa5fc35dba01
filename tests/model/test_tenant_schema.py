"""The JSON Schema editors use for tenant files is generated from the model and kept fresh."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from components.model.core.fields import QUANTITY_PATTERN, ComputeAmounts
from tests.support import EXAMPLE_TENANTS
from tools.generators.schema import SCHEMA_PATH, rendered


def test_committed_schema_matches_the_model() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == rendered(), "run `make schema`"


@pytest.mark.parametrize("path", sorted(EXAMPLE_TENANTS.glob("*.yaml")), ids=lambda p: p.name)
def test_example_tenants_validate_against_the_schema(path: Path) -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)
    assert path.read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../schemas/tenant.schema.json")


def test_schema_rejects_typos_and_bad_names() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    base = {"name": "acme", "displayName": "A", "contact": "a@b.org", "costCenter": "x"}
    jsonschema.validate(base, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**base, "nodepool": "x"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**base, "name": "Acme"}, schema)


def _model_accepts(text: str) -> bool:
    try:
        ComputeAmounts(cpu=text)
    except ValidationError:
        return False
    return True


def test_quantities_carry_the_kubernetes_pattern() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    base = {"name": "acme", "displayName": "A", "contact": "a@b.org", "costCenter": "x"}
    for good in ("500m", "2", 2, 0.5, "512Mi", "1e3", "+1", ".5", "5."):
        jsonschema.validate({**base, "quota": {"custom": {"requests": {"cpu": good}}}}, schema)
    for bad in ("four", "4 GB", "1Gb", "-1", -1, "1K", "Gi", ""):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**base, "quota": {"custom": {"requests": {"cpu": bad}}}}, schema)


def test_the_quantity_pattern_never_refuses_what_the_model_accepts() -> None:
    # The model is the judge; the pattern may only be looser (`1e1.5`), never stricter, but for a
    # negative zero (`-0`, `-0.0m`): a sign no one writes on purpose, which the pattern leaves out.
    numbers = ["0", "1", "12", "007", "1.5", ".5", "5.", "0.001"]
    suffixes = ["", "m", "k", "Ki", "Mi", "Gi", "Ei", "e3", "E-3", "e+2", "K", "Kb", "g", "e1.5", " "]
    pattern = re.compile(QUANTITY_PATTERN)
    looser = []
    for sign, number, suffix in itertools.product(["", "+", "-"], numbers, suffixes):
        text = f"{sign}{number}{suffix}"
        matches, accepted = bool(pattern.match(text)), _model_accepts(text)
        negative_zero = sign == "-" and accepted
        assert matches or not accepted or negative_zero, text
        if matches and not accepted:
            looser.append(text)
    assert looser and all("e1.5" in text for text in looser), looser
