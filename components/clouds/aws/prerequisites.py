"""Reads of what an AWS stack uses but never creates: the DB subnet groups RDS instances are placed
in and the External Secrets controller's role that tenant roles trust (issue 44, 4).

Nothing in the program creates them (docs/runbooks/eks.md, section 1). Used unread, a missing one
fails the first `up` halfway, after keys and secrets exist: RDS answers `DBSubnetGroupNotFoundFault`
on the instance, IAM `MalformedPolicyDocument: Invalid principal in policy` on a trust policy naming
a role that does not exist
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_principal.html#principal-roles:
"If your Principal element in a role trust policy contains an ARN that points to a specific IAM role,
then that ARN transforms to the role unique principal ID when you save the policy"). Read first
(`aws.rds.SubnetGroup.get`, `aws.iam.Role.get`), as shared secrets are on GCP (ADR 0037), a missing
one fails the preview by name, and what uses it waits for the read.

One reader per part of the program (its `prefix` keeps the reads' names apart), each read once.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws


def role_name(arn: str) -> str:
    """The name of an IAM role from its ARN (`arn:aws:iam::<account>:role/<path/>name`)."""
    return arn.rsplit("/", 1)[-1]


class Prerequisites:
    """The stack's reads of DB subnet groups and trusted roles, registered on first use."""

    def __init__(self, prefix: str, opts: pulumi.ResourceOptions) -> None:
        self._prefix = prefix
        # Stack-level options (the AWS provider, no parent): one read per stack part, not per tenant.
        self._opts = opts
        self._subnet_groups: dict[str, aws.rds.SubnetGroup] = {}
        self._roles: dict[str, aws.iam.Role] = {}

    def subnet_group(self, name: str | None) -> list[pulumi.Resource]:
        """The read of DB subnet group `name`, for `depends_on` (none without a name)."""
        if name is None:
            return []
        if name not in self._subnet_groups:
            self._subnet_groups[name] = aws.rds.SubnetGroup.get(
                f"{self._prefix}db-subnet-group-{name}", name, opts=self._opts
            )
        return [self._subnet_groups[name]]

    def role(self, arn: str | None) -> list[pulumi.Resource]:
        """The read of the role `arn` names, for `depends_on` (none without one)."""
        if arn is None:
            return []
        if arn not in self._roles:
            name = role_name(arn)
            self._roles[arn] = aws.iam.Role.get(f"{self._prefix}trusted-role-{name}", name, opts=self._opts)
        return [self._roles[arn]]
