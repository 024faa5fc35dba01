"""What an AWS stack uses but never creates is read before use (issue 44, 4): every RDS instance
waits for a read of its DB subnet group, every role whose trust policy names the External Secrets
controller's role waits for a read of that role (components/clouds/aws/prerequisites.py).

Before: neither was read; a missing subnet group or controller role failed the first `up` halfway,
after the keys and secrets had been created.
"""

from __future__ import annotations

import json

from tools.plan.harness import ProgramRun


def test_every_rds_instance_waits_for_a_read_of_its_subnet_group(prod_aws_plan: ProgramRun) -> None:
    by_urn = prod_aws_plan.by_urn()
    instances = prod_aws_plan.of_type("aws:rds/instance:Instance")
    assert instances
    for instance in instances:
        reads = [
            by_urn[u]
            for u in instance.dependencies
            if by_urn[u].read and by_urn[u].type == "aws:rds/subnetGroup:SubnetGroup"
        ]
        assert [r.name.rsplit("db-subnet-group-", 1)[-1] for r in reads] == [instance.inputs["dbSubnetGroupName"]], (
            instance.name
        )


def test_every_role_trusting_the_controller_waits_for_a_read_of_it(prod_aws_plan: ProgramRun) -> None:
    by_urn = prod_aws_plan.by_urn()
    checked = 0
    for role in prod_aws_plan.of_type("aws:iam/role:Role"):
        if role.read:
            continue
        trust = json.loads(role.inputs["assumeRolePolicy"])
        principals = [s["Principal"]["AWS"] for s in trust["Statement"] if "AWS" in s["Principal"]]
        for principal in principals:
            reads = [by_urn[u] for u in role.dependencies if by_urn[u].read and by_urn[u].type == "aws:iam/role:Role"]
            assert [r.name.rsplit("trusted-role-", 1)[-1] for r in reads] == [principal.rsplit("/", 1)[-1]], role.name
            checked += 1
    assert checked  # prod-aws runs Pod Identity: tenant roles and the shared-secrets role trust the controller
