"""Re-onboarding a released tenant name (components/model/checks/released_names.py): the stack carries
the names of decommissioned tenants forward, and a file re-adding one after its file was deleted
is refused, naming file and field, until the operator says the retained data is gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.model.checks.released_names import OUTPUT, next_record, released
from components.model.core.errors import ConfigurationError
from tests.support import DECOMMISSIONED_ON, plan, tenant_document, write_tenants
from tests.vcluster.helpers import previous_outputs

GONE = {"tenants": {}, OUTPUT: {"shop": DECOMMISSIONED_ON}}


def _shop(**fields: object) -> dict[str, object]:
    return tenant_document("shop", secrets=[{"name": "api-key", "source": "generated"}], **fields)


def test_re_adding_a_released_name_is_refused(tmp_path: Path) -> None:
    with previous_outputs("prod-aws", GONE), pytest.raises(ConfigurationError) as raised:
        plan("prod-aws", write_tenants(tmp_path, _shop()))
    message = str(raised.value)
    assert f"shop.yaml: name: tenant 'shop' was decommissioned on {DECOMMISSIONED_ON}" in message
    assert "alias/tenancy/shop/<env>" in message and "tenancy:data.reusedTenantNames" in message


def test_the_operator_frees_the_name_once_the_retained_data_is_deleted(tmp_path: Path) -> None:
    data = json.dumps({"reusedTenantNames": ["shop"]})
    with previous_outputs("dev", GONE):
        run = plan("dev", write_tenants(tmp_path, _shop()), data=data)
    assert "shop" not in run.outputs[OUTPUT]


def test_a_decommissioned_tenant_brought_back_is_not_refused(tmp_path: Path) -> None:
    deployed = {"tenants": {"shop": {"lifecycle": "decommissioned", "decommissionedOn": DECOMMISSIONED_ON}}}
    with previous_outputs("dev", deployed):
        run = plan("dev", write_tenants(tmp_path, _shop()))
    assert "shop" not in run.outputs[OUTPUT]


def test_a_decommissioned_tenant_is_recorded_and_stays_recorded_once_its_file_is_gone(tmp_path: Path) -> None:
    run = plan("dev", write_tenants(tmp_path / "a", _shop(lifecycle="decommissioned")))
    assert run.outputs[OUTPUT] == {"shop": DECOMMISSIONED_ON}
    # Next run: the file is deleted; the record carries the name forward.
    with previous_outputs("dev", run.outputs):
        later = plan("dev", write_tenants(tmp_path / "b", tenant_document("other")))
    assert later.outputs[OUTPUT] == {"shop": DECOMMISSIONED_ON}


def test_record_shapes() -> None:
    assert released({}) == {} and released(None) == {}
    assert released({OUTPUT: {"a": "2026-01-01"}, "tenants": {"b": {"lifecycle": "decommissioned"}}}) == {
        "a": "2026-01-01",
        "b": "unknown",
    }
    assert next_record({OUTPUT: {"a": "2026-01-01"}}, [], ["a"]) == {"a": "2026-01-01"}  # not re-added yet
