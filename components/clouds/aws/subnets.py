"""Where an RDS instance lives and which addresses its clients' egress opens (docs/adr/0017).

A dedicated instance lives in its environment's DB subnets (`aws.databaseSubnets.<env>`) and only
that environment's pods may open connections to those CIDRs: dev cannot reach prod's database
port by address, whatever the security groups say. A shared instance serving exactly one
environment with its own subnets lives there too; one serving several lives in the stack's shared
DB subnets (`aws.dbSubnetGroup`, `aws.databaseCidrs`), opened only to environments with a database
on such an instance.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.model.settings.clouds import AwsSettings
from components.model.settings.data import SharedInstance


@dataclass(frozen=True)
class Placement:
    """A DB subnet group and the CIDRs its subnets span."""

    subnet_group: str | None
    cidrs: list[str]


def dedicated(settings_aws: AwsSettings, environment: str) -> Placement:
    """The environment's own subnets (checks.py refuses a stack with databases and none)."""
    subnets = settings_aws.database_subnets.get(environment)
    if subnets is None:
        return Placement(None, [])
    return Placement(subnets.subnet_group, list(subnets.cidrs))


def shared(settings_aws: AwsSettings, instance: SharedInstance) -> Placement:
    """One environment's subnets for an instance that serves only it, else the stack's shared ones."""
    environments = instance.environments or []
    if len(environments) == 1 and environments[0] in settings_aws.database_subnets:
        return dedicated(settings_aws, environments[0])
    return Placement(settings_aws.db_subnet_group, list(settings_aws.database_cidrs))
