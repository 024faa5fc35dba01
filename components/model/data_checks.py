"""Cross-checks of tenants' data sections against the stack (called from catalog.py).

They run before anything is registered, so a tenant asking for an engine its cloud cannot run, a
shared secret the stack does not define or a stack missing a setting its tenants' data needs fails
the preview with a message naming the file and field, never half-applies.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.clouds.base import ENGINE_VERSIONS, PLACEMENTS, SHARED_ENGINES
from components.model.errors import Problem
from components.model.stack import StackSettings
from components.model.tenant_file import TenantSpec

# How many tenant names a stack-level problem lists before it only counts the rest.
_NAMED = 3


def data_problems(spec: TenantSpec, settings: StackSettings) -> list[tuple[str, str]]:
    """(field path, message) pairs for one tenant's databases and shared secrets in this stack."""
    problems: list[tuple[str, str]] = []
    cloud = settings.cloud
    defined = settings.data.shared_secrets
    for index, name in enumerate(spec.shared_secrets):
        if name not in defined:
            known = ", ".join(sorted(defined)) or "none"
            problems.append(
                (f"sharedSecrets.{index}", f"{name!r} is not a shared secret of this stack (defined: {known})")
            )
    for index, database in enumerate(spec.databases):
        where = f"databases.{index}"
        versions = ENGINE_VERSIONS[cloud][database.engine]
        if database.version not in versions:
            problems.append(
                (
                    f"{where}.version",
                    f"{database.engine} {database.version} is not available on {cloud} "
                    f"(available: {', '.join(sorted(versions, key=_version_key))})",
                )
            )
        problems += _placement_problems(spec, index, settings)
        if cloud == "gcp" and settings.gcp is not None and settings.gcp.network is None:
            problems.append((where, "Cloud SQL needs tenancy:gcp.network (private IP only, no public address)"))
        if cloud == "aws" and settings.aws is not None and settings.aws.db_subnet_group is None:
            problems.append((where, "RDS needs tenancy:aws.dbSubnetGroup (and dbSecurityGroupIds)"))
    return problems


def _placement_problems(spec: TenantSpec, index: int, settings: StackSettings) -> list[tuple[str, str]]:
    database = spec.databases[index]
    where = f"databases.{index}.placement"
    cloud = settings.cloud
    placement = database.placement or settings.data.placement
    # A placement the tenant did not write comes from the stack: say so, or the message misleads.
    origin = "" if database.placement else " (the stack default tenancy:data.placement)"
    if placement not in PLACEMENTS[cloud]:
        return [(where, f"placement {placement!r}{origin} is not available on {cloud}")]
    if placement != "shared":
        return []
    if database.engine not in SHARED_ENGINES[cloud]:
        return [
            (
                where,
                f"placement 'shared'{origin} is not available for {database.engine} on {cloud} "
                f"(shared: {', '.join(sorted(SHARED_ENGINES[cloud]))}); use placement dedicated, "
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


def stack_data_problems(specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
    """Problems of the stack's own settings that its data (or its tenants' data) runs into; each
    names the key in the settings file, once, however many tenants it affects."""
    problems = _shared_instance_problems(settings)
    aws = settings.aws
    if settings.cloud != "aws" or aws is None:
        return problems
    source = settings.source
    if settings.data.shared_instances and aws.db_subnet_group is None:
        problems.append(
            Problem(source, "tenancy:aws.dbSubnetGroup", "required by tenancy:data.sharedInstances (RDS placement)")
        )
    # Every tenant with data or shared secrets gets an IAM role its ServiceAccounts assume.
    users = sorted(spec.name for spec in specs if spec.databases or spec.secrets or spec.shared_secrets)
    if not users and not settings.data.shared_secrets:
        return problems
    why = _who(users, bool(settings.data.shared_secrets))
    if aws.identity_mode == "podIdentity" and aws.secrets_controller_role_arn is None:
        problems.append(
            Problem(
                source,
                "tenancy:aws.secretsControllerRoleArn",
                f"required with identityMode podIdentity: the External Secrets controller assumes the "
                f"roles of {why} with it",
            )
        )
    if aws.identity_mode == "irsa":
        for key, value in (("oidcProviderArn", aws.oidc_provider_arn), ("oidcIssuer", aws.oidc_issuer)):
            if value is None:
                problems.append(
                    Problem(source, f"tenancy:aws.{key}", f"required with identityMode irsa (roles of {why} trust it)")
                )
        if aws.oidc_provider_arn and aws.oidc_issuer and not aws.oidc_provider_arn.endswith(f"/{aws.oidc_issuer}"):
            problems.append(
                Problem(
                    source,
                    "tenancy:aws.oidcIssuer",
                    f"{aws.oidc_issuer!r} is not the issuer of oidcProviderArn {aws.oidc_provider_arn!r} "
                    "(the part after oidc-provider/)",
                )
            )
    return problems


def _shared_instance_problems(settings: StackSettings) -> list[Problem]:
    problems: list[Problem] = []
    cloud = settings.cloud
    for name, instance in sorted(settings.data.shared_instances.items()):
        where = f"tenancy:data.sharedInstances.{name}"
        if instance.engine not in SHARED_ENGINES[cloud]:
            problems.append(
                Problem(
                    settings.source,
                    f"{where}.engine",
                    f"shared {instance.engine} instances are not available on {cloud} "
                    f"(shared: {', '.join(sorted(SHARED_ENGINES[cloud]))})",
                )
            )
        elif instance.version not in ENGINE_VERSIONS[cloud][instance.engine]:
            available = ", ".join(sorted(ENGINE_VERSIONS[cloud][instance.engine], key=_version_key))
            problems.append(
                Problem(
                    settings.source,
                    f"{where}.version",
                    f"{instance.engine} {instance.version} is not available on {cloud} (available: {available})",
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


def _who(tenants: list[str], shared_secrets: bool) -> str:
    parts = []
    if tenants:
        named = ", ".join(tenants[:_NAMED])
        more = f" and {len(tenants) - _NAMED} more" if len(tenants) > _NAMED else ""
        parts.append(f"tenant{'s' if len(tenants) > 1 else ''} {named}{more}")
    if shared_secrets:
        parts.append("the shared-secrets store (tenancy:data.sharedSecrets)")
    return " and ".join(parts)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))
