"""Where an RDS instance lives and which addresses its clients' egress opens (docs/adr/0017).

A dedicated instance lives in its environment's DB subnets (`aws.databaseSubnets.<env>`) and only
that environment's pods may open connections to those CIDRs: dev cannot reach prod's database
port by address, whatever the security groups say. A shared instance lives where its `subnets`
says, once: an environment's subnets (it then serves that environment only) or, by default, the
stack's shared DB subnets (`aws.dbSubnetGroup`, `aws.databaseCidrs`), opened only to environments
with a database on such an instance. Its placement never follows its `environments`: RDS refuses
to move an instance to another DB subnet group in the same VPC ("The new DB subnet group must be in
a different VPC", https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_VPC.WorkingWithRDSInstanceinaVPC.html#USER_VPC.Subnets),
so adding an environment to a shared instance must not change its group (checks.py refuses the
combinations that would).
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


SHARED_SUBNETS = "shared"


def shared(settings_aws: AwsSettings, instance: SharedInstance) -> Placement:
    """The subnets the instance's `subnets` names: an environment's, else the stack's shared ones."""
    if instance.subnets is not None and instance.subnets != SHARED_SUBNETS:
        return dedicated(settings_aws, instance.subnets)
    return Placement(settings_aws.db_subnet_group, list(settings_aws.database_cidrs))
