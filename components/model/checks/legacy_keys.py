"""Checks of `tenancy:data.legacyKeys` against the stack's tenant files (called from data_checks).

A stack deployed before keys were per environment names, per tenant, the environment that takes
the old key over and the dedicated instances still encrypted with it. A typo there would either
replace a protected key (refused by the engine, after the preview has started) or leave an
instance pinned to a key nobody means to keep; both are refused here, before anything registers,
with the settings key named.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.model.core.errors import Problem
from components.model.settings.data import LegacyKey
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

RUNBOOK = "docs/runbooks/per-environment-keys.md"


def legacy_key_problems(specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
    """One problem per wrong entry of `tenancy:data.legacyKeys`, each naming its key."""
    by_name = {spec.name: spec for spec in specs}
    problems: list[Problem] = []
    for tenant, legacy in sorted(settings.data.legacy_keys.items()):
        where = f"tenancy:data.legacyKeys.{tenant}"
        spec = by_name.get(tenant)
        if spec is None:
            problems.append(Problem(settings.source, where, f"no tenant file of this stack is named {tenant!r}"))
            continue
        if legacy.environment not in spec.environments:
            problems.append(
                Problem(
                    settings.source,
                    f"{where}.environment",
                    f"{legacy.environment!r} is not an environment of tenant {tenant} (its file's environments: "
                    f"{', '.join(spec.environments)}); name the one that takes its old key over ({RUNBOOK})",
                )
            )
        problems += _database_problems(spec, legacy, settings, where)
    return problems


def _database_problems(spec: TenantSpec, legacy: LegacyKey, settings: StackSettings, where: str) -> list[Problem]:
    problems: list[Problem] = []
    databases = {database.name: database for database in spec.databases}
    for index, entry in enumerate(legacy.databases):
        environment, name = entry.split("/", 1)
        database = databases.get(name)
        message = None
        if environment == legacy.environment:
            message = f"{environment} takes the old key over: its instances keep it without an entry"
        elif environment not in spec.environments:
            message = f"{environment!r} is not an environment of tenant {spec.name}"
        elif database is None or (database.environments is not None and environment not in database.environments):
            message = f"tenant {spec.name} has no database {name!r} in {environment}"
        elif (database.placement or settings.data.placement) != "dedicated":
            message = f"database {name!r} is on a shared instance: it has no key of its own to keep"
        if message is not None:
            problems.append(Problem(settings.source, f"{where}.databases.{index}", message))
    return problems
