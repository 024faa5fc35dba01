"""Cross-checks of a tenant's data sections against the stack (called from catalog.py).

They run before anything is registered, so a tenant asking for an engine its cloud cannot run or a
shared secret the stack does not define fails the preview with a message, never half-applies.
"""

from __future__ import annotations

from components.clouds import ENGINE_VERSIONS, PLACEMENTS
from components.settings import StackSettings
from components.spec import TenantSpec


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
        placement = database.placement or settings.data.placement
        if placement not in PLACEMENTS[cloud]:
            problems.append((f"{where}.placement", f"placement {placement!r} is not available on {cloud}"))
        elif cloud == "gcp" and placement == "shared":
            for environment in database.environments or spec.environments:
                if settings.data.shared_instance(database.engine, database.version, environment) is None:
                    problems.append(
                        (
                            f"{where}.placement",
                            f"no shared {database.engine} {database.version} instance serves environment "
                            f"{environment!r} (tenancy:data.sharedInstances)",
                        )
                    )
        if cloud == "gcp" and settings.gcp is not None and settings.gcp.network is None:
            problems.append((where, "Cloud SQL needs tenancy:gcp.network (private IP only, no public address)"))
        if cloud == "aws" and settings.aws is not None and settings.aws.db_subnet_group is None:
            problems.append((where, "RDS needs tenancy:aws.dbSubnetGroup (and dbSecurityGroupIds)"))
    uses_eso = spec.databases or spec.secrets
    if cloud == "aws" and settings.aws is not None and uses_eso:
        aws = settings.aws
        if aws.identity_mode == "podIdentity" and aws.secrets_controller_role_arn is None:
            problems.append(
                ("secrets", "tenancy:aws.secretsControllerRoleArn is required with identityMode podIdentity")
            )
        if aws.identity_mode == "irsa" and (aws.oidc_provider_arn is None or aws.oidc_issuer is None):
            problems.append(
                ("secrets", "tenancy:aws.oidcProviderArn and oidcIssuer are required with identityMode irsa")
            )
    return problems


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))
