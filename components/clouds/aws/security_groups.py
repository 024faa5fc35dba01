"""Database egress per tenant environment on AWS: security groups, not addresses (docs/adr/0009).

RDS endpoints are DNS names in shared DB subnets, so a NetworkPolicy can only open the subnets.
What tells a dev pod from a prod pod at the database is a security group: per tenant environment
one group, attached to that environment's dedicated RDS instances and, through a
`SecurityGroupPolicy` (Security Groups for Pods, vpcresources.k8s.aws/v1beta1), to every pod of
that environment's namespace. Its only rule admits members of the group itself on the database
ports, so only that environment's pods reach its databases. Each shared instance has one such
group too (registered by the platform), listed in the SecurityGroupPolicy of every environment
with a database on it.

A pod selected by a SecurityGroupPolicy carries only the groups it lists, no longer the node's: so
the policy also lists `aws.podSecurityGroupIds` (the EKS cluster security group), which keeps
DNS, kubelet probes and egress working. The groups here have no egress rule: pods leave through
the cluster group, and NetworkPolicies still decide which egress is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.clouds.base import ENGINE_PORTS, DeliveryTarget
from components.model.clouds import AwsSettings
from components.model.labels import PLATFORM_OWNED_KEY

POLICY_NAME = "tenancy-databases"
SGP_VERSION = "vpcresources.k8s.aws/v1beta1"


def members_group(
    resource_name: str, description: str, settings_aws: AwsSettings, tags: dict[str, str], opts: pulumi.ResourceOptions
) -> aws.ec2.SecurityGroup:
    """A group whose members (pods and databases) reach each other on the database ports only.

    Inline rules: one resource per group instead of one per rule, at thousands of environments.
    """
    return aws.ec2.SecurityGroup(
        resource_name,
        description=description,
        vpc_id=settings_aws.vpc_id,
        ingress=[
            {
                "protocol": "tcp",
                "from_port": port,
                "to_port": port,
                "self": True,
                "description": f"{engine} from members of this group",
            }
            for engine, port in sorted(ENGINE_PORTS.items())
        ],
        # No egress rule (the provider removes AWS's default allow-all): databases start no
        # connections, and pods leave through the cluster security group.
        egress=[],
        tags=tags,
        opts=opts,
    )


class EnvironmentGroups:
    """One members group per tenant environment, registered with its first dedicated database."""

    def __init__(self, settings_aws: AwsSettings) -> None:
        self._aws = settings_aws
        self._groups: dict[tuple[str, str], aws.ec2.SecurityGroup] = {}

    def group(
        self, tenant: str, environment: str, tags: dict[str, str], opts: pulumi.ResourceOptions
    ) -> pulumi.Output[str]:
        key = (tenant, environment)
        if key not in self._groups:
            self._groups[key] = members_group(
                f"{tenant}-{environment}-databases",
                f"tenancy {tenant} {environment}: its pods and its databases",
                self._aws,
                tags,
                opts,
            )
        return self._groups[key].id


def security_group_policy(
    target: DeliveryTarget, groups: Sequence[pulumi.Input[str]], settings_aws: AwsSettings
) -> k8s.apiextensions.CustomResource:
    """Every pod of the namespace joins `groups` (its environment's database groups) plus the
    cluster groups it keeps. Tenants have no RBAC on vpcresources.k8s.aws: only the platform
    writes it, and the label says so to the platform-owned admission rule as well."""
    return k8s.apiextensions.CustomResource(
        f"{target.prefix}-security-groups",
        api_version=SGP_VERSION,
        kind="SecurityGroupPolicy",
        metadata={
            "name": POLICY_NAME,
            "namespace": target.namespace,
            "labels": {**target.labels, PLATFORM_OWNED_KEY: "true"},
        },
        spec={
            # Empty: every pod of the namespace (the environment is the trust zone).
            "podSelector": {},
            "securityGroups": {"groupIds": [*groups, *settings_aws.pod_security_group_ids]},
        },
        opts=target.opts,
    )
