"""Cross-checks of tenants' data sections against the stack (called from catalog.py).

They run before anything is registered, so a tenant asking for an engine its cloud cannot run, a
shared secret the stack does not define or a stack missing a setting its tenants' data needs fails
the preview with a message naming the file and field, never half-applies.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.model.checks.capabilities import CloudRules
from components.model.checks.legacy_keys import legacy_key_problems
from components.model.core.errors import Problem
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec


def data_problems(spec: TenantSpec, settings: StackSettings, cloud: CloudRules) -> list[tuple[str, str]]:
    """(field path, message) pairs for one tenant's databases and shared secrets in this stack."""
    problems: list[tuple[str, str]] = []
    # Asked once per tenant: the same for every database of the stack.
    unhostable = cloud.database_problems()
    defined = settings.data.shared_secrets
    for index, name in enumerate(spec.shared_secrets):
        if name not in defined:
            known = ", ".join(sorted(defined)) or "none"
            problems.append(
                (f"sharedSecrets.{index}", f"{name!r} is not a shared secret of this stack (defined: {known})")
            )
    for index, database in enumerate(spec.databases):
        where = f"databases.{index}"
        versions = cloud.capabilities.engine_versions[database.engine]
        if database.version not in versions:
            problems.append(
                (
                    f"{where}.version",
                    f"{database.engine} {database.version} is not available on {cloud.name} "
                    f"(available: {', '.join(sorted(versions, key=_version_key))})",
                )
            )
        problems += _placement_problems(spec, index, settings, cloud)
        problems += _pool_problems(spec, index, settings, cloud)
        if cloud.capabilities.database_rules is not None:
            problems += cloud.capabilities.database_rules(spec, index, settings)
        problems += [(where, message) for message in unhostable]
    return problems


def _pool_problems(spec: TenantSpec, index: int, settings: StackSettings, cloud: CloudRules) -> list[tuple[str, str]]:
    """`poolSize` where this cloud and placement cannot honour it: refused, never silently ignored."""
    database = spec.databases[index]
    if database.pool_size is None:
        return []
    placement = database.placement or settings.data.placement
    if placement in cloud.capabilities.pooled_placements:
        return []
    offered = ", ".join(sorted(cloud.capabilities.pooled_placements)) or "none"
    return [
        (
            f"databases.{index}.poolSize",
            f"a connection pool is not available for placement {placement!r} on {cloud.name} "
            f"(pooled placements: {offered}); remove poolSize, for this stack only through "
            "overrides.<stack>.databases",
        )
    ]


def _placement_problems(
    spec: TenantSpec, index: int, settings: StackSettings, cloud: CloudRules
) -> list[tuple[str, str]]:
    database = spec.databases[index]
    where = f"databases.{index}.placement"
    capabilities = cloud.capabilities
    placement = database.placement or settings.data.placement
    # A placement the tenant did not write comes from the stack: say so, or the message misleads.
    origin = "" if database.placement else " (the stack default tenancy:data.placement)"
    if placement not in capabilities.placements:
        return [(where, f"placement {placement!r}{origin} is not available on {cloud.name}")]
    if placement != "shared":
        return []
    if database.engine not in capabilities.shared_engines:
        return [
            (
                where,
                f"placement 'shared'{origin} is not available for {database.engine} on {cloud.name} "
                f"(shared: {', '.join(sorted(capabilities.shared_engines))}); use placement dedicated, "
                f"for this stack only through overrides.<stack>.databases",
            )
        ]
    return [
        (
            where,
            f"no shared {database.engine} {database.version} instance serves environment {environment!r} "
            f"(tenancy:data.sharedInstances){origin}",
        )
        for environment in database.environments or spec.environments
        if settings.data.shared_instance(database.engine, database.version, environment) is None
    ]


def stack_data_problems(specs: Sequence[TenantSpec], settings: StackSettings, cloud: CloudRules) -> list[Problem]:
    """Problems of the stack's own settings that its data (or its tenants' data) runs into; each
    names the key in the settings file, once, however many tenants it affects."""
    return (
        _shared_instance_problems(settings, cloud)
        + legacy_key_problems(specs, settings)
        + cloud.stack_problems(specs, settings)
    )


def _shared_instance_problems(settings: StackSettings, cloud: CloudRules) -> list[Problem]:
    problems: list[Problem] = []
    capabilities = cloud.capabilities
    for name, instance in sorted(settings.data.shared_instances.items()):
        where = f"tenancy:data.sharedInstances.{name}"
        if instance.engine not in capabilities.shared_engines:
            problems.append(
                Problem(
                    settings.source,
                    f"{where}.engine",
                    f"shared {instance.engine} instances are not available on {cloud.name} "
                    f"(shared: {', '.join(sorted(capabilities.shared_engines))})",
                )
            )
        elif instance.version not in capabilities.engine_versions[instance.engine]:
            available = ", ".join(sorted(capabilities.engine_versions[instance.engine], key=_version_key))
            problems.append(
                Problem(
                    settings.source,
                    f"{where}.version",
                    f"{instance.engine} {instance.version} is not available on {cloud.name} (available: {available})",
                )
            )
        unknown = sorted(set(instance.environments or []) - set(settings.environments))
        if unknown:
            problems.append(
                Problem(
                    settings.source,
                    f"{where}.environments",
                    f"{', '.join(unknown)} not hosted by this stack (environments: {', '.join(settings.environments)})",
                )
            )
    return problems


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def pool_problems(settings: StackSettings, cloud: CloudRules) -> list[Problem]:
    """Node pools of a kind the stack's cloud cannot run, each naming its `kind` key."""
    kinds = cloud.capabilities.pool_kinds
    return [
        Problem(
            settings.source,
            f"tenancy:nodePools.{name}.kind",
            f"kind {pool.kind!r} cannot run on cloud {cloud.name!r} (kinds for {cloud.name}: {', '.join(kinds)})",
        )
        for name, pool in settings.node_pools.items()
        if pool.kind not in kinds
    ]
