"""Tenant names whose retained data may still be in the cloud, and the refusal to re-onboard one.

Offboarding (docs/operations.md) retains a decommissioned tenant's data when its file is deleted:
keys with their aliases (`alias/tenancy/<name>/<env>`), secrets (`tenancy/<name>/<env>/...`;
Secrets Manager also reserves a deleted secret's name for its recovery window), databases, and on
GCP key-ring keys, which can never be deleted. A new tenant file with the same name would create
resources under exactly those names: the cloud refuses the aliases and secrets halfway through an
`up`, or worse, the new tenant inherits names people associate with the old data.

So the stack remembers: its `releasedTenants` output carries, from run to run, every tenant that
was decommissioned, with its `decommissionedOn`. A tenant file whose name is in that record but
was not deployed in the last run (its file had been deleted) is refused, naming the file and
field, until `tenancy:data.reusedTenantNames` lists the name: the operator's statement that every
retained item of the old tenant is gone (`python -m tools.operations.offboard` prints the commands). A
decommissioned tenant brought back (`lifecycle` changed, file never deleted) is not refused: its
data never left the state.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from components.model.core.errors import Problem
from components.model.tenant_file.spec import TenantSpec

OUTPUT = "releasedTenants"
_DECOMMISSIONED = "decommissioned"


def _tenants(outputs: Any) -> dict[str, Any]:
    tenants = outputs.get("tenants") if isinstance(outputs, dict) else None
    return tenants if isinstance(tenants, dict) else {}


def _record(outputs: Any) -> dict[str, str]:
    record = outputs.get(OUTPUT) if isinstance(outputs, dict) else None
    if not isinstance(record, dict):
        return {}
    return {str(name): str(since) for name, since in record.items()}


def released(previous: Any) -> dict[str, str]:
    """Name -> decommissionedOn of every tenant the last run knew as decommissioned (any shape
    tolerated: an older deployment exported no record)."""
    found = _record(previous)
    for name, summary in _tenants(previous).items():
        if isinstance(summary, dict) and summary.get("lifecycle") == _DECOMMISSIONED:
            found[name] = str(summary.get("decommissionedOn", "unknown"))
    return found


def next_record(previous: Any, specs: Sequence[TenantSpec], reused: Collection[str]) -> dict[str, str]:
    """What this run exports: the released names, plus this run's decommissioned tenants, minus
    names brought back to life (deployed before and active now) and names the operator reused."""
    record = released(previous)
    deployed = _tenants(previous)
    for spec in specs:
        if spec.lifecycle == _DECOMMISSIONED and spec.decommissioned_on is not None:
            record[spec.name] = spec.decommissioned_on.isoformat()
        elif spec.name in deployed or spec.name in reused:
            record.pop(spec.name, None)
    return dict(sorted(record.items()))


def reonboarding_problems(
    entries: Sequence[tuple[TenantSpec, str]], previous: Any, reused: Collection[str], settings_source: str
) -> list[Problem]:
    """A tenant file re-adding a released name whose file had been deleted."""
    record = released(previous)
    deployed = _tenants(previous)
    problems: list[Problem] = []
    for spec, source in entries:
        if spec.name in record and spec.name not in deployed and spec.name not in reused:
            problems.append(
                Problem(
                    source,
                    "name",
                    f"tenant {spec.name!r} was decommissioned on {record[spec.name]} and its retained data may "
                    f"still exist under the same names (key aliases alias/tenancy/{spec.name}/<env>, secrets "
                    f"tenancy/{spec.name}/<env>/..., reserved during their recovery window); choose another "
                    "name, or delete every retained item (tenancy offboard) and then list the name in "
                    f"{settings_source}: tenancy:data.reusedTenantNames",
                )
            )
    return problems
