"""The AWS settings a stack's data needs, checked before anything is registered.

Each problem names the `tenancy:aws` key to set, once, however many tenants it affects.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.clouds.aws import subnets
from components.model.core.errors import Problem
from components.model.settings.clouds import AwsSettings
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

# How many tenant names a stack-level problem lists before it only counts the rest.
_NAMED = 3


def database_problems(aws: AwsSettings) -> list[str]:
    """Why no database can be hosted: each environment's own DB subnets (docs/adr/0017), and the
    security groups that lock each environment's databases to its own database clients."""
    problems = []
    if not aws.database_subnets:
        problems.append(
            "RDS needs tenancy:aws.databaseSubnets (per environment its DB subnet group and CIDRs, so each "
            "environment's pods reach only its own databases) and dbSecurityGroupIds"
        )
    if aws.vpc_id is None:
        problems.append("RDS needs tenancy:aws.vpcId (where each environment's database security group is created)")
    if not aws.pod_security_group_ids:
        problems.append(
            "RDS needs tenancy:aws.podSecurityGroupIds (the cluster security group database clients keep once a "
            "SecurityGroupPolicy gives them their environment's database group)"
        )
    return problems


def _subnet_problems(aws: AwsSettings, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
    """Every environment with a database has its own DB subnets; no subnets for an unknown one."""
    problems: list[Problem] = []
    if not aws.database_subnets:
        return problems  # database_problems names it on every database
    for environment in sorted(set(aws.database_subnets) - set(settings.environments)):
        problems.append(
            Problem(
                settings.source,
                f"tenancy:aws.databaseSubnets.{environment}",
                f"{environment!r} is not in tenancy:environments ({', '.join(settings.environments)})",
            )
        )
    for environment in settings.environments:
        if environment in aws.database_subnets:
            continue
        users = sorted(spec.name for spec in specs if spec.in_environment(spec.databases, environment))
        if users:
            problems.append(
                Problem(
                    settings.source,
                    f"tenancy:aws.databaseSubnets.{environment}",
                    f"required: {_who(users, False)} {'have' if len(users) > 1 else 'has'} databases in "
                    f"{environment!r}, which need that environment's own DB subnets",
                )
            )
    return problems


def _placement_problems(aws: AwsSettings, settings: StackSettings) -> list[Problem]:
    """A shared instance's `subnets` is chosen once (subnets.py): an environment's subnets only for an
    instance serving exactly that environment, and the choice is never left implicit."""
    problems: list[Problem] = []
    for name, instance in sorted(settings.data.shared_instances.items()):
        key = f"tenancy:data.sharedInstances.{name}"
        environments = instance.environments or []
        chosen = instance.subnets
        if chosen is None and len(environments) == 1 and environments[0] in aws.database_subnets:
            problems.append(
                Problem(
                    settings.source,
                    f"{key}.subnets",
                    f"required: it serves only {environments[0]!r}, which has DB subnets of its own; say where it "
                    f"lives, `{environments[0]}` (its subnets) or `shared`. RDS cannot move it to another subnet "
                    "group of the same VPC later",
                )
            )
        if chosen is None or chosen == subnets.SHARED_SUBNETS:
            continue
        if chosen not in aws.database_subnets:
            problems.append(
                Problem(settings.source, f"{key}.subnets", f"{chosen!r} has no tenancy:aws.databaseSubnets entry")
            )
        elif environments != [chosen]:
            problems.append(
                Problem(
                    settings.source,
                    f"{key}.environments",
                    f"it lives in {chosen!r}'s DB subnets, so it serves {chosen!r} only: RDS cannot move an instance "
                    "to another subnet group of the same VPC. Put the other environments' databases on another "
                    "shared instance (in the shared subnets), or keep environments: "
                    f"[{chosen}]",
                )
            )
    return problems


def stack_problems(aws: AwsSettings, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
    """Subnets and VPC for shared instances, and the identity settings every tenant role needs."""
    problems: list[Problem] = _subnet_problems(aws, specs, settings)
    source = settings.source
    if settings.data.shared_instances and aws.vpc_id is None:
        problems.append(
            Problem(source, "tenancy:aws.vpcId", "required by tenancy:data.sharedInstances (RDS placement)")
        )
    problems += _placement_problems(aws, settings)
    # Shared instances without `subnets: <environment>` live in the stack's shared DB subnets (subnets.py).
    in_shared = sorted(
        name
        for name, instance in settings.data.shared_instances.items()
        if subnets.shared(aws, instance).subnet_group == aws.db_subnet_group
    )
    if in_shared:
        for key, missing in (("dbSubnetGroup", aws.db_subnet_group is None), ("databaseCidrs", not aws.database_cidrs)):
            if missing:
                problems.append(
                    Problem(
                        source,
                        f"tenancy:aws.{key}",
                        f"required by tenancy:data.sharedInstances {', '.join(in_shared)} (shared DB subnets: "
                        "they serve several environments)",
                    )
                )
    # Every tenant with data or shared secrets gets an IAM role its ServiceAccounts assume.
    users = sorted(spec.name for spec in specs if spec.databases or spec.secrets or spec.shared_secrets)
    if not users and not settings.data.shared_secrets:
        return problems
    return problems + _identity_problems(aws, source, _who(users, bool(settings.data.shared_secrets)))


def _identity_problems(aws: AwsSettings, source: str, why: str) -> list[Problem]:
    problems: list[Problem] = []
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


def _who(tenants: list[str], shared_secrets: bool) -> str:
    parts = []
    if tenants:
        named = ", ".join(tenants[:_NAMED])
        more = f" and {len(tenants) - _NAMED} more" if len(tenants) > _NAMED else ""
        parts.append(f"tenant{'s' if len(tenants) > 1 else ''} {named}{more}")
    if shared_secrets:
        parts.append("the shared-secrets store (tenancy:data.sharedSecrets)")
    return " and ".join(parts)
