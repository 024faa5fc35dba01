"""The JSON Schema editors use for tenant files is generated from the model and kept fresh."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.support import EXAMPLE_TENANTS
from tools.schema import SCHEMA_PATH, rendered


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
