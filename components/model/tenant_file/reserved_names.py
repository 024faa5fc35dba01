"""Database names the engines (and the clouds running them) reserve, as data with sources.

A database's `name` reaches the engine as is: RDS `DBName` ("can't be a word reserved by the
database engine", https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBInstance.html),
CloudNativePG's `initdb.database`, mariadb-operator's `database`. A reserved word fails the first
`up` after the tenant's other resources are made, so the model refuses it up front.

- PostgreSQL: the keywords marked RESERVED_KEYWORD in src/include/parser/kwlist.h (postgres/postgres
  REL_16_STABLE; Appendix C of the manual, "reserved" in the PostgreSQL column), and the databases
  every cluster has (`postgres`, `template0`, `template1`), RDS's `rdsadmin`
  (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Appendix.PostgreSQL.CommonDBATasks.Roles.html)
  and Cloud SQL's `cloudsqladmin` (https://cloud.google.com/sql/docs/postgres/users).
- MySQL / MariaDB: the system schemas (`mysql`, `information_schema`, `performance_schema`, `sys`;
  https://dev.mysql.com/doc/refman/8.4/en/system-schema.html) and the reserved words of
  https://dev.mysql.com/doc/refman/8.4/en/keywords.html ("(R)") that a tenant database name could
  plausibly take; the full list is longer (words with a digit or of no use as a name are left out).
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


POSTGRES_RESERVED = _words(
    """
    all analyse analyze and any array as asc asymmetric both case cast check collate column constraint
    create current_catalog current_date current_role current_time current_timestamp current_user default
    deferrable desc distinct do else end except false fetch for foreign from grant group having in
    initially intersect into lateral leading limit localtime localtimestamp not null offset on only or
    order placing primary references returning select session_user some symmetric system_user table then
    to trailing true union unique user using variadic when where window with postgres template0
    template1 rdsadmin cloudsqladmin
    """
)

MYSQL_RESERVED = _words(
    """
    mysql information_schema performance_schema sys rdsadmin accessible add all alter analyze and as asc
    before between both by call cascade case change check collate column condition constraint continue
    convert create cross cube cume_dist current_date current_time current_timestamp current_user cursor
    database databases default delayed delete desc describe distinct div drop dual each else elseif
    empty enclosed escaped except exists exit explain false fetch for force foreign from fulltext
    function generated get grant group grouping groups having if ignore in index infile inner inout
    insert interval into is iterate join key keys kill lag lateral lead leading leave left like limit
    linear lines load localtime localtimestamp lock loop match modifies natural not null of on optimize
    option optionally or order out outer outfile over partition precision primary procedure purge range
    rank read reads recursive references regexp release rename repeat replace require resignal restrict
    return revoke right rlike row rows schema schemas select separator set show signal spatial specific
    sql sqlexception sqlstate sqlwarning ssl starting stored straight_join system table terminated then
    to trailing trigger true undo union unique unlock unsigned update usage use using values varying
    virtual when where while window with write xor zerofill
    """
)

RESERVED: dict[str, frozenset[str]] = {"postgres": POSTGRES_RESERVED, "mysql": MYSQL_RESERVED}


def reserved(engine: str, name: str) -> bool:
    """Whether `name` is reserved by `engine` (names are compared in lower case, as both fold them)."""
    return name.lower() in RESERVED.get(engine, frozenset())
