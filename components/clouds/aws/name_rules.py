"""AWS name rules per resource kind, as data with their sources, and the one way this program
shortens a name that would break them.

Tenant, environment and database names are DNS labels and `[a-z][a-z0-9_]{0,30}` (the model),
so `a--b` is a valid tenant and `x__y` or `x_` a valid database (`_` becomes `-` in resource
names): without care they produce `--` or a trailing `-`, and a 63-character tenant with a long
environment passes any AWS length limit. Each kind below says what AWS accepts; `fit` keeps a name
that already fits unchanged (so nothing already created is ever renamed, which for an RDS
instance or a KMS alias would mean replacing protected data) and otherwise makes a deterministic
one: `--` runs collapsed, the end trimmed of `-`, cut to the limit with an 8-character hash of the
whole original, so two names that differ only past the cut never meet.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_HASH = 8


@dataclass(frozen=True)
class NameRule:
    """What AWS accepts for one kind of name."""

    kind: str
    max_length: int
    # The whole name's characters, first character included.
    pattern: re.Pattern[str]
    no_double_hyphen: bool
    no_trailing_hyphen: bool
    source: str

    def problems(self, name: str) -> list[str]:
        """Why AWS would refuse `name` (empty: it accepts it)."""
        found = []
        if not 1 <= len(name) <= self.max_length:
            found.append(f"{len(name)} characters, more than {self.max_length}")
        if not self.pattern.fullmatch(name):
            found.append(f"characters or first character outside {self.pattern.pattern}")
        if self.no_double_hyphen and "--" in name:
            found.append("two consecutive hyphens")
        if self.no_trailing_hyphen and name.endswith("-"):
            found.append("ends with a hyphen")
        return found


_RDS_ID = re.compile(r"[a-z][a-z0-9-]*")
_RDS_API = "https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/"
RULES: dict[str, NameRule] = {
    rule.kind: rule
    for rule in (
        NameRule(
            "rds-instance",
            63,
            _RDS_ID,
            True,
            True,
            f"{_RDS_API}API_CreateDBInstance.html (DBInstanceIdentifier)",
        ),
        NameRule(
            "rds-final-snapshot",
            255,
            _RDS_ID,
            True,
            True,
            f"{_RDS_API}API_DeleteDBInstance.html (FinalDBSnapshotIdentifier)",
        ),
        NameRule(
            "rds-parameter-group",
            255,
            _RDS_ID,
            True,
            True,
            f"{_RDS_API}API_CreateDBParameterGroup.html (DBParameterGroupName)",
        ),
        NameRule(
            "rds-subnet-group",
            255,
            re.compile(r"(?!default$)[a-z0-9 ._-]+"),
            False,
            False,
            f"{_RDS_API}API_CreateDBSubnetGroup.html (DBSubnetGroupName)",
        ),
        NameRule(
            "security-group",
            255,
            re.compile(r"(?!sg-)[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]+"),
            False,
            False,
            "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html (GroupName)",
        ),
        NameRule(
            "iam-role",
            64,
            re.compile(r"[\w+=,.@-]+"),
            False,
            False,
            "https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html (RoleName)",
        ),
        NameRule(
            "secretsmanager-secret",
            512,
            re.compile(r"[A-Za-z0-9/_+=.@-]+"),
            False,
            False,
            "https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_CreateSecret.html (Name)",
        ),
        NameRule(
            "kms-alias",
            256,
            re.compile(r"alias/(?!aws/)[a-zA-Z0-9/_-]+"),
            False,
            False,
            "https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateAlias.html (AliasName)",
        ),
    )
}
# A Pulumi-autonamed RDS identifier is the resource name followed by 7 random hex characters, no
# separator, capped at 255 (pulumi-aws provider/resources.go, aws_db_instance `identifier`:
# `resource.NewUniqueHex(name, 7, 255)`, read at commit 00ba5ea5 of the v6 line; the pinned v7 was
# not available offline). So Pulumi itself never refuses a long one: RDS does, at create.
AUTONAME_SUFFIX = 7


def problems(kind: str, name: str) -> list[str]:
    """Why AWS would refuse `name` as a `kind` name."""
    return RULES[kind].problems(name)


def fit(kind: str, name: str) -> str:
    """`name` when AWS accepts it as a `kind` name, else a deterministic name that it accepts: the
    readable part (characters outside `[a-z0-9-]` and `--` runs become one `-`), cut, plus a hash
    of `name`. For the RDS kinds, whose rules are the strictest here."""
    rule = RULES[kind]
    if not rule.problems(name):
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_HASH]
    readable = re.sub(r"[^a-z0-9]+", "-", name.lower())[: rule.max_length - _HASH - 1].strip("-")
    if not readable[:1].isalpha():
        readable = f"t-{readable}"[: rule.max_length - _HASH - 1].rstrip("-")
    fitted = f"{readable}-{digest}"
    assert not rule.problems(fitted), (kind, fitted)
    return fitted


def rds_identifier(resource_name: str) -> str | None:
    """None (keep Pulumi's autoname, as every instance created so far has) when
    `<resource_name><7 random>` is a valid identifier; else an explicit one that is. An instance
    whose autoname was invalid was never created (RDS refused it), so nothing existing changes name."""
    autoname = f"{resource_name}{'x' * AUTONAME_SUFFIX}"
    if not problems("rds-instance", autoname):
        return None
    return fit("rds-instance", resource_name)
