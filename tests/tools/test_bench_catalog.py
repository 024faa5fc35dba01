"""The catalog benchmark reads what it wrote and prints one row per size."""

from __future__ import annotations

import pytest

from tools.scale.bench_catalog import catalog_seconds, main, tenant_with_domains


def test_each_tenant_claims_domains_no_other_claims() -> None:
    domains = [d for i in range(3) for d in tenant_with_domains(i)["domains"]]
    assert len(domains) == len(set(domains)) == 6


def test_a_small_run_reads_every_tenant_and_prints_a_row(capsys: pytest.CaptureFixture[str]) -> None:
    assert catalog_seconds(4, "dev") > 0
    assert main(["--sizes", "2,3"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "| tenants | catalog s | ms per tenant |"
    assert [row.split("|")[1].strip() for row in rows[2:]] == ["2", "3"]
