"""Database names the engines reserve are refused by the model (components/model/tenant_file/reserved_names.py).

Before: `user`, `postgres` or `rdsadmin` passed the model and failed the first `up` at the engine
(RDS CreateDBInstance: DBName "can't be a word reserved by the database engine").
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from components.model.tenant_file.data import DatabaseSpec


@pytest.mark.parametrize(
    ("engine", "name"),
    [("postgres", "user"), ("postgres", "postgres"), ("postgres", "rdsadmin"), ("postgres", "template1"),
     ("postgres", "order"), ("mysql", "mysql"), ("mysql", "sys"), ("mysql", "database"), ("mysql", "order")],
)  # fmt: skip
def test_a_reserved_name_is_refused(engine: str, name: str) -> None:
    with pytest.raises(ValidationError, match=f"name '{name}' is reserved by {engine}"):
        DatabaseSpec.model_validate(
            {"name": name, "engine": engine, "version": "16" if engine == "postgres" else "8.4"}
        )


@pytest.mark.parametrize(("engine", "name"), [("postgres", "orders"), ("postgres", "users"), ("mysql", "shop")])
def test_ordinary_names_pass(engine: str, name: str) -> None:
    assert DatabaseSpec.model_validate({"name": name, "engine": engine, "version": "16"}).name == name
