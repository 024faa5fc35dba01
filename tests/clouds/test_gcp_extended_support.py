"""Cloud SQL versions in paid extended support are refused for new databases (issue 44, 9), as RDS
versions past their end of standard support are (components/clouds/gcp/cloud_sql.py
`EXTENDED_SUPPORT`, components/model/checks/engine_support.py).

Before: a new MySQL 8.0 instance on GCP was created without a word, and charged extended support
from its first day (since 2026-07-01, until 2029-07-01).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from components.clouds.gcp.cloud import CAPABILITIES
from components.clouds.gcp.cloud_sql import EXTENDED_SUPPORT
from components.model.checks import engine_support
from components.model.core.errors import ConfigurationError
from tests.support import plan, tenant_document, write_tenants
from tests.vcluster.helpers import previous_outputs

# https://cloud.google.com/sql/docs/mysql/db-versions: extended support start and end.
PAGE = {("mysql", "8.0"): ("2026-07-01", "2029-07-01"), ("mysql", "5.7"): ("2025-02-01", "2028-02-01")}
_BILLING = {"name": "billing", "engine": "mysql", "version": "8.0", "environments": ["prod"]}


def test_the_dates_are_the_pages() -> None:
    assert {k: (a.isoformat(), b.isoformat()) for k, (a, b) in EXTENDED_SUPPORT.items()} == PAGE
    assert CAPABILITIES.end_of_standard_support == {k: a for k, (a, _) in EXTENDED_SUPPORT.items()}
    # Every version the GCP stack accepts that has a date here is one it runs.
    assert {v for (e, v) in EXTENDED_SUPPORT if e == "mysql"} <= CAPABILITIES.engine_versions["mysql"]


def test_a_new_mysql_80_database_on_gcp_is_refused_naming_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_support, "today", lambda: date(2026, 11, 29))
    with pytest.raises(ConfigurationError) as raised:
        plan("prod", write_tenants(tmp_path, tenant_document("ledger", databases=[_BILLING])))
    (problem,) = raised.value.problems
    assert problem.field == "databases.0.version"
    assert "2026-07-01" in problem.message and "extended support" in problem.message
    assert "Cloud SQL" in problem.message


def test_before_the_date_and_for_a_deployed_database_nothing_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenants = write_tenants(tmp_path, tenant_document("ledger", databases=[_BILLING]))
    monkeypatch.setattr(engine_support, "today", lambda: date(2026, 6, 30))
    assert plan("prod", tenants).of_type("gcp:sql/databaseInstance:DatabaseInstance")
    monkeypatch.setattr(engine_support, "today", lambda: date(2026, 11, 29))
    deployed = {"tenants": {"ledger": {"data": {"databases": {"prod": {"billing": {"storageGb": 20}}}}}}}
    with previous_outputs("prod", deployed):
        assert plan("prod", tenants).of_type("gcp:sql/databaseInstance:DatabaseInstance")
