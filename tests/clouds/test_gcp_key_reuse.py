"""A re-used tenant name gets new CryptoKey names on GCP (issue 44, 5): the old tenant's keys can
never be deleted (components/clouds/gcp/key_reuse.py), so `reusedTenantNames` alone still failed the
first `up` with 409 on `tenancy_<tenant>_<env>`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.clouds.gcp.data import key_name
from components.clouds.gcp.name_rules import RULES
from components.model.core.errors import ConfigurationError
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import PROJECT_ROOT

_KEY = "gcp:kms/cryptoKey:CryptoKey"


def _prod(key: str) -> dict[str, Any]:
    config = yaml.safe_load((PROJECT_ROOT / "Pulumi.prod.yaml").read_text(encoding="utf-8"))["config"]
    return dict(config[key])


def _tenants(tmp_path: Path) -> Path:
    return write_tenants(
        tmp_path / "tenants", tenant_document("acme", secrets=[{"name": "api-token", "source": "generated"}])
    )


def test_a_reused_name_without_a_key_generation_is_refused_before_anything_is_registered(tmp_path: Path) -> None:
    data = {**_prod("tenancy:data"), "reusedTenantNames": ["acme"]}
    with pytest.raises(ConfigurationError) as raised:
        plan("prod", _tenants(tmp_path), data=json.dumps(data))
    assert [p.field for p in raised.value.problems] == ["tenancy:gcp.keyGenerations.acme"]
    assert "409" in raised.value.problems[0].message


def test_a_reused_names_keys_carry_their_generation(tmp_path: Path) -> None:
    data = {**_prod("tenancy:data"), "reusedTenantNames": ["acme"]}
    gcp = {**_prod("tenancy:gcp"), "keyGenerations": {"acme": 2}}
    run = plan("prod", _tenants(tmp_path), data=json.dumps(data), gcp=json.dumps(gcp))
    names = sorted(r.inputs["name"] for r in run.of_type(_KEY))
    assert names == ["tenancy_acme_dev_g2", "tenancy_acme_prod_g2"]


def test_generation_names_are_valid_and_distinct_at_the_models_limits() -> None:
    longest = ("t" * 35, "e" * 20)  # tenant + environment at the namespace limit (55 characters)
    for tenant, environment in [("acme", "prod"), longest]:
        names = {key_name(tenant, environment, generation) for generation in (1, 2, 3, 12)}
        assert len(names) == 4
        for name in names:
            assert RULES["kms-crypto-key"].problems(name) == [], name
