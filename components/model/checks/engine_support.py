"""New dedicated databases on an engine version past its cloud's end of standard support: refused.

Each cloud says why (`CloudCapabilities.past_support_reason`): RDS below, Cloud SQL because it
enrols such an instance in paid extended support from the day it is created
(components/clouds/gcp/cloud_sql.py `EXTENDED_SUPPORT`).

A cloud that creates instances without paid extended support (RDS with `EngineLifecycleSupport`
= `open-source-rds-extended-support-disabled`, components/clouds/aws/engine_rules.py) cannot
create one on a major version past its end of standard support: the API refuses the create
("creating the DB instance will fail if the DB major version is past its end of standard support
date", CreateDBInstance, EngineLifecycleSupport). Found at `up` time, that is a half-applied run;
found here, it is a message naming the tenant file and `databases.<n>.version`.

An instance that already exists is not affected (its enrolment is never changed, and RDS upgrades
it at the date), so only databases the stack did not deploy last time are refused. What the stack
deployed is read from its last outputs (`tenants.<name>.data.databases.<environment>.<database>`,
components/data/databases.py). With no previous outputs (a first deployment, or the engine could
not say) every dedicated database counts as new: on a first deployment that is exactly right, and
an unreadable state is already warned about (components/released.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from components.model.checks.capabilities import CloudCapabilities
from components.model.core.errors import Problem
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec


def today() -> date:
    """The date the check compares with (a function, so tests can pin it)."""
    return date.today()


def _deployed(previous: Any, tenant: str, environment: str, database: str) -> bool:
    tenants = previous.get("tenants") if isinstance(previous, dict) else None
    summary = tenants.get(tenant) if isinstance(tenants, dict) else None
    data = summary.get("data") if isinstance(summary, dict) else None
    databases = data.get("databases") if isinstance(data, dict) else None
    in_environment = databases.get(environment) if isinstance(databases, dict) else None
    return isinstance(in_environment, dict) and database in in_environment


def past_support_problems(
    entries: Sequence[tuple[TenantSpec, str]],
    settings: StackSettings,
    capabilities: CloudCapabilities,
    previous: Any,
    on: date,
) -> list[Problem]:
    """A dedicated database this stack would create on a version whose end of standard support
    (`capabilities.end_of_standard_support[(engine, version)]`) is before `on`, refused for the
    cloud's reason (`capabilities.past_support_reason`)."""
    end_of_standard_support: Mapping[tuple[str, str], date] = capabilities.end_of_standard_support
    reason = capabilities.past_support_reason
    problems: list[Problem] = []
    for spec, source in entries:
        if spec.lifecycle == "decommissioned":
            continue  # its databases are retained, never created
        for index, database in enumerate(spec.databases):
            ended = end_of_standard_support.get((database.engine, database.version))
            if ended is None or ended >= on:
                continue
            if (database.placement or settings.data.placement) != "dedicated":
                continue  # on the stack's shared instance: no instance is created for it
            environments = [e for e in database.environments or spec.environments if e in settings.environments]
            new = [e for e in environments if not _deployed(previous, spec.name, e, database.name)]
            if new:
                problems.append(
                    Problem(
                        source,
                        f"databases.{index}.version",
                        f"{database.engine} {database.version} reached its end of standard support on "
                        f"{ended.isoformat()}: {reason} ({', '.join(new)}, not in the stack's "
                        "last outputs); ask for a newer version (for this stack only through "
                        "overrides.<stack>.databases)",
                    )
                )
    return problems
