"""The AWS settings a stack's data needs, checked before anything is registered.

Each problem names the `tenancy:aws` key to set, once, however many tenants it affects.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.model.clouds import AwsSettings
from components.model.errors import Problem
from components.model.stack import StackSettings
from components.model.tenant_file import TenantSpec

# How many tenant names a stack-level problem lists before it only counts the rest.
_NAMED = 3


def database_problems(aws: AwsSettings) -> list[str]:
    """Why no database can be hosted: RDS placement, and the security groups that keep each
    environment's pods to its own databases (docs/adr/0009)."""
    problems = []
    if aws.db_subnet_group is None:
        problems.append("RDS needs tenancy:aws.dbSubnetGroup (and dbSecurityGroupIds)")
    if aws.vpc_id is None:
        problems.append("RDS needs tenancy:aws.vpcId (where each environment's database security group is created)")
    if not aws.pod_security_group_ids:
        problems.append(
            "RDS needs tenancy:aws.podSecurityGroupIds (the cluster security group pods keep once a "
            "SecurityGroupPolicy gives them their environment's database group)"
        )
    return problems


def stack_problems(aws: AwsSettings, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
    """Subnets and VPC for shared instances, and the identity settings every tenant role needs."""
    problems: list[Problem] = []
    source = settings.source
    if settings.data.shared_instances:
        for key, value in (("dbSubnetGroup", aws.db_subnet_group), ("vpcId", aws.vpc_id)):
            if value is None:
                problems.append(
                    Problem(source, f"tenancy:aws.{key}", "required by tenancy:data.sharedInstances (RDS placement)")
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
