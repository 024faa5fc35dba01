"""Cloud SQL editions as data: which database versions and machine types each edition takes, what
the API picks when a request names no edition, and which edition the program asks for.

Sources (Cloud SQL documentation, read for issue 24):
- https://cloud.google.com/sql/docs/editions-intro: two editions, Enterprise and Enterprise Plus;
  Enterprise Plus runs MySQL 8.0 and 8.4 and PostgreSQL 12 and later, never MySQL 5.6/5.7.
- https://cloud.google.com/sql/docs/postgres/machine-series-overview: Enterprise Plus machine
  series N2 (`db-perf-optimized-N-<vCPUs>`) and C4A; Enterprise: shared core (`db-f1-micro`,
  `db-g1-small`), dedicated core (`db-custom-<vCPUs>-<MiB>`) and N4.
- https://cloud.google.com/sql/docs/postgres/create-instance#machine-types: "If the database
  version for your instance is PostgreSQL 16 or later, the default edition is Cloud SQL Enterprise
  Plus" (the API's default when `settings.edition` is unset; the provider sends none since
  terraform-provider-google dropped its client-side default, hashicorp/terraform-provider-google
  #20498: `Invalid Tier (db-custom-...) for (ENTERPRISE_PLUS) Edition`).
- https://cloud.google.com/sql/docs/postgres/managed-connection-pooling#requirements: managed
  connection pooling needs an Enterprise Plus instance (PostgreSQL).
- https://cloud.google.com/sql/docs/mysql/db-versions (read for issue 44): extended support of
  MySQL 8.0 starts 2026-07-01 and ends 2029-07-01, of MySQL 5.7 (and 5.6) 2025-02-01 and 2028-02-01;
  an instance on such a version is charged for extended support, with no way to decline it
  (https://cloud.google.com/sql/docs/extended-support). PostgreSQL dates are not listed here: the
  page for them was not read, so no PostgreSQL version is refused for its support date on GCP.

The program never leaves the edition to the API: every instance names it (`settings.edition`),
and the catalog checks the edition, tier and version the program would ask for against this data
before anything is registered (`database_rules` in cloud.py, `shared_instance_problems`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

Edition = Literal["ENTERPRISE", "ENTERPRISE_PLUS"]


@dataclass(frozen=True)
class EditionRules:
    """What one Cloud SQL edition accepts."""

    # engine -> major versions (as tenant files write them: "16", "8.0").
    versions: dict[str, frozenset[str]]
    # Machine types (`settings.tier`) of the edition's machine series.
    tiers: re.Pattern[str]
    # Managed connection pooling (`settings.connectionPoolConfigs`).
    connection_pooling: bool


_POSTGRES = ("9.6", "10", "11", "12", "13", "14", "15", "16", "17")
EDITIONS: dict[Edition, EditionRules] = {
    "ENTERPRISE": EditionRules(
        versions={"postgres": frozenset(_POSTGRES), "mysql": frozenset({"5.6", "5.7", "8.0", "8.4"})},
        tiers=re.compile(r"^(db-custom-\d+-\d+|db-f1-micro|db-g1-small|db-n4-[a-z]+-\d+)$"),
        connection_pooling=False,
    ),
    "ENTERPRISE_PLUS": EditionRules(
        versions={"postgres": frozenset(_POSTGRES[3:]), "mysql": frozenset({"8.0", "8.4"})},
        tiers=re.compile(r"^(db-perf-optimized-N-\d+|db-c4a-highmem-\d+)$"),
        connection_pooling=True,
    ),
}

# The machine type the program asks for, per edition and database size.
TIERS: dict[Edition, dict[str, str]] = {
    "ENTERPRISE": {"small": "db-custom-1-3840", "medium": "db-custom-2-7680", "large": "db-custom-4-15360"},
    # Managed connection pooling runs only on Enterprise Plus, whose machine types are these.
    "ENTERPRISE_PLUS": {
        "small": "db-perf-optimized-N-2",
        "medium": "db-perf-optimized-N-4",
        "large": "db-perf-optimized-N-8",
    },
}


def api_default_edition(engine: str, version: str) -> Edition:
    """The edition the API gives an instance whose request names none (never relied upon here)."""
    if engine == "postgres" and int(version.split(".")[0]) >= 16:
        return "ENTERPRISE_PLUS"
    return "ENTERPRISE"


def edition_for(pooled: bool) -> Edition:
    """Enterprise unless the database asks for managed connection pooling (Enterprise Plus only)."""
    return "ENTERPRISE_PLUS" if pooled else "ENTERPRISE"


def machine(size: str, pooled: bool) -> tuple[Edition, str]:
    """(edition, tier) the program asks for a database of `size`."""
    edition = edition_for(pooled)
    return edition, TIERS[edition][size]


def edition_problems(engine: str, version: str, edition: Edition, tier: str, pooled: bool) -> list[tuple[str, str]]:
    """Why Cloud SQL would refuse this combination, as (`version` | `tier` | `pooling`, message)."""
    rules = EDITIONS[edition]
    problems = []
    if version not in rules.versions[engine]:
        available = ", ".join(sorted(rules.versions[engine], key=lambda v: tuple(int(p) for p in v.split("."))))
        problems.append(("version", f"Cloud SQL {edition} does not run {engine} {version} (it runs {available})"))
    if not rules.tiers.match(tier):
        problems.append(("tier", f"Cloud SQL {edition} does not take machine type {tier} ({rules.tiers.pattern})"))
    if pooled and not rules.connection_pooling:
        problems.append(("pooling", f"Cloud SQL managed connection pooling needs ENTERPRISE_PLUS, not {edition}"))
    return problems


# (engine, major version) -> (start, end) of Cloud SQL extended support (sources above): a new
# instance on a version past the start is charged extended support from its first day, so the
# catalog refuses it (components/model/checks/engine_support.py); an existing one is never touched.
EXTENDED_SUPPORT: dict[tuple[str, str], tuple[date, date]] = {
    ("mysql", "5.7"): (date(2025, 2, 1), date(2028, 2, 1)),
    ("mysql", "8.0"): (date(2026, 7, 1), date(2029, 7, 1)),
}
END_OF_STANDARD_SUPPORT = {version: dates[0] for version, dates in EXTENDED_SUPPORT.items()}
PAST_SUPPORT_REASON = (
    "Cloud SQL enrols every instance on that version in paid extended support, charged from the day it is "
    "created (docs/data-and-secrets.md)"
)
