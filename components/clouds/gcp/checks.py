"""What Cloud SQL would refuse of a stack's databases, found before anything is registered: the
edition, machine type and version the program would ask for (cloud_sql.py), and `poolSize` outside
the environments the stack accepts Enterprise Plus for (`tenancy:gcp.enterprisePlusEnvironments`).

Tenant databases are checked through `CloudCapabilities.database_rules` (each problem names the
tenant file's field), shared instances through the cloud's stack problems (the stack file's key).
"""

from __future__ import annotations

from components.clouds.gcp.cloud_sql import edition_problems, machine
from components.model.core.errors import Problem
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

# Where a cloud_sql.py problem points in a database entry.
_FIELD = {"version": "version", "tier": "size", "pooling": "poolSize"}


def database_rules(spec: TenantSpec, index: int, settings: StackSettings) -> list[tuple[str, str]]:
    """(field path, message) pairs for one dedicated database of a tenant on a GCP stack."""
    database = spec.databases[index]
    where = f"databases.{index}"
    if (database.placement or settings.data.placement) != "dedicated" or settings.gcp is None:
        return []  # shared: the instance is the stack's (shared_instance_problems); poolSize refused
    pooled = database.pool_size is not None
    problems: list[tuple[str, str]] = []
    allowed = settings.gcp.enterprise_plus_environments
    environments = [e for e in database.environments or spec.environments if e in settings.environments]
    outside = [e for e in environments if e not in allowed]
    if pooled and outside:
        problems.append(
            (
                f"{where}.poolSize",
                f"managed connection pooling makes the Cloud SQL instance Enterprise Plus, which this stack "
                f"accepts only in {', '.join(allowed) or 'no environment'} (tenancy:gcp.enterprisePlusEnvironments), "
                f"not in {', '.join(outside)}; remove poolSize (for this stack only through "
                "overrides.<stack>.databases) or ask the platform team to list the environment",
            )
        )
    edition, tier = machine(database.size, pooled)
    for kind, message in edition_problems(database.engine, database.version, edition, tier, pooled):
        problems.append((f"{where}.{_FIELD[kind]}", message))
    return problems


def shared_instance_problems(settings: StackSettings) -> list[Problem]:
    """Shared instances (never pooled) whose edition, machine type and version Cloud SQL would refuse,
    and Enterprise Plus environments the stack does not host (a typo would refuse every pool there)."""
    problems = []
    unknown = [
        e for e in (settings.gcp.enterprise_plus_environments if settings.gcp else []) if e not in settings.environments
    ]
    if unknown:
        problems.append(
            Problem(
                settings.source,
                "tenancy:gcp.enterprisePlusEnvironments",
                f"{', '.join(unknown)} not hosted by this stack (environments: {', '.join(settings.environments)})",
            )
        )
    for name, instance in sorted(settings.data.shared_instances.items()):
        edition, tier = machine(instance.size, pooled=False)
        for kind, message in edition_problems(instance.engine, instance.version, edition, tier, pooled=False):
            problems.append(Problem(settings.source, f"tenancy:data.sharedInstances.{name}.{_FIELD[kind]}", message))
    return problems
