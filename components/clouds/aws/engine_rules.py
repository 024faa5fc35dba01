"""RDS engine rules as data with their sources: TLS enforcement, engine lifecycle (Extended Support)
and master user name limits, per engine and major version.

TLS. RDS for MySQL accepts plaintext unless the instance's parameter group sets
`require_secure_transport` to 1 (dynamic, no reboot); RDS for PostgreSQL enforces TLS with
`rds.force_ssl`, whose default is 1 from PostgreSQL 15 and 0 before. Every instance this program
registers gets a parameter group of its family with the engine's parameter at 1 (Cloud SQL here is
ENCRYPTED_ONLY, the same rule).
- https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/mysql-ssl-connections.require-ssl.html
- https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/PostgreSQL.Concepts.General.SSL.html

Lifecycle. RDS enrols a MySQL or PostgreSQL instance in paid Extended Support by default
(`EngineLifecycleSupport` = `open-source-rds-extended-support`). This program creates instances
with `open-source-rds-extended-support-disabled`: at the end of standard support of their major
version, RDS upgrades them to a newer major version instead of charging for Extended Support, and
creating a new instance on a version already past that date fails. The setting is sent on create
only (existing instances keep theirs: the program never replaces a database over it); upgrade
before the dates below, or enrol deliberately in the console.
- https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/extended-support.html
- https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBInstance.html (EngineLifecycleSupport)
- End of standard support: https://docs.aws.amazon.com/AmazonRDS/latest/MySQLReleaseNotes/mysql-versions.html
  and https://docs.aws.amazon.com/AmazonRDS/latest/PostgreSQLReleaseNotes/postgresql-release-calendar.html

Master user name: MySQL 1-16 characters, PostgreSQL 1-63, letters, digits and `_`, starting
with a letter (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Limits.html#RDS_Limits.Constraints).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

EXTENDED_SUPPORT_DISABLED = "open-source-rds-extended-support-disabled"


@dataclass(frozen=True)
class EngineRule:
    """What one engine needs for TLS-only connections, and how long its master user name may be."""

    tls_parameter: str
    max_username: int
    # Parameter group family of a major version ("8.0" -> "mysql8.0").
    family_prefix: str


ENGINES: dict[str, EngineRule] = {
    "mysql": EngineRule(tls_parameter="require_secure_transport", max_username=16, family_prefix="mysql"),
    "postgres": EngineRule(tls_parameter="rds.force_ssl", max_username=63, family_prefix="postgres"),
}

# End of RDS standard support per (engine, major version), as the release calendars above list it
# ("RDS end of standard support date" columns; checked 2026-11-26 against those tables as
# endoflife.date scrapes them: products/amazon-rds-mysql.md, products/amazon-rds-postgresql.md).
# A new instance on a version past its date is refused before anything is registered
# (components/model/checks/engine_support.py): with Extended Support disabled, RDS would refuse to create it.
END_OF_STANDARD_SUPPORT: dict[tuple[str, str], date] = {
    ("mysql", "8.0"): date(2026, 7, 31),
    ("mysql", "8.4"): date(2029, 7, 31),
    ("postgres", "13"): date(2026, 2, 28),
    ("postgres", "14"): date(2027, 2, 28),
    ("postgres", "15"): date(2028, 2, 29),
    ("postgres", "16"): date(2029, 2, 28),
    ("postgres", "17"): date(2030, 2, 28),
}

_USERNAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def family(engine: str, version: str) -> str:
    """The parameter group family of `engine` at major `version`."""
    return f"{ENGINES[engine].family_prefix}{version}"


def tls_parameters(engine: str) -> list[dict[str, str]]:
    """The parameter group entries that refuse unencrypted connections (both parameters are
    dynamic: applied without a reboot)."""
    return [{"name": ENGINES[engine].tls_parameter, "value": "1", "apply_method": "immediate"}]


def master_username(engine: str, name: str) -> str:
    """`name` cut to the engine's master user name limit."""
    username = name[: ENGINES[engine].max_username]
    if not _USERNAME.fullmatch(username):
        raise ValueError(f"{username!r} is not an RDS master user name")
    return username
