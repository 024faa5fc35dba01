"""`decommissionedOn`: a decommissioned tenant says since when; no other state carries the date.

The offboarding command counts the stack's `data.retentionDays` from it (tests/tools/test_offboard.py).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.support import tenant_document, write_tenants

SETTINGS = parse_settings({"tenancy:domainSuffix": "tenants.example.com"}, "Pulumi.test.yaml")


def problems(tmp_path: Path, document: dict[str, Any]) -> list[str]:
    directory = write_tenants(tmp_path / "tenants", document)
    with pytest.raises(ConfigurationError) as raised:
        load_catalog(directory, SETTINGS, "dev", cloud=cloud_for(SETTINGS), root=tmp_path)
    return [str(p) for p in raised.value.problems]


def test_a_decommissioned_tenant_needs_the_date(tmp_path: Path) -> None:
    document = tenant_document("gone", lifecycle="decommissioned")
    del document["decommissionedOn"]
    (found,) = problems(tmp_path, document)
    assert found.startswith("tenants/gone.yaml: decommissionedOn: required with lifecycle: decommissioned")


@pytest.mark.parametrize("lifecycle", ["active", "suspended"])
def test_no_other_state_carries_one(tmp_path: Path, lifecycle: str) -> None:
    (found,) = problems(tmp_path, tenant_document("back", lifecycle=lifecycle, decommissionedOn="2026-01-15"))
    assert (
        found == f"tenants/back.yaml: decommissionedOn: only a decommissioned tenant has one (lifecycle is {lifecycle})"
    )


def test_the_date_must_be_a_calendar_date(tmp_path: Path) -> None:
    (found,) = problems(tmp_path, tenant_document("gone", lifecycle="decommissioned", decommissionedOn="2026-02-30"))
    assert found.startswith("tenants/gone.yaml: decommissionedOn: ")


def test_a_valid_date_loads(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("gone", lifecycle="decommissioned"))
    (entry,) = load_catalog(directory, SETTINGS, "dev", cloud=cloud_for(SETTINGS), root=tmp_path).tenants
    assert entry.spec.decommissioned_on == datetime.date(2026, 1, 15)
