"""Database security groups per tenant environment on AWS: the second lock (docs/adr/0017).

The first lock is by address: each environment's dedicated instances live in its own DB subnets
and its egress policy opens only those (subnets.py). The second: per tenant environment one
security group, attached to that environment's dedicated RDS instances and, through a
`SecurityGroupPolicy` (Security Groups for Pods, vpcresources.k8s.aws/v1beta1), to the pods of
that environment's namespace labelled `tenancy.io/database-client: "true"`. Its only rule admits
members of the group itself on the database ports, so only that environment's database clients
reach its databases. Each shared instance has one such group too (registered by the platform),
listed in the SecurityGroupPolicy of every environment with a database on it.

Only labelled pods: a pod a SecurityGroupPolicy selects gets a branch ENI, and in the VPC CNI's
default `strict` enforcing mode its traffic to the node's link-local EKS Pod Identity agent
(169.254.170.23) is dropped, so it loses its AWS credentials (aws/amazon-vpc-cni-k8s#2797,
aws/amazon-vpc-resource-controller-k8s#618). The cluster runs the CNI with
`POD_SECURITY_GROUP_ENFORCING_MODE=standard` (docs/runbooks/eks.md), where traffic to the same
host bypasses the groups and traffic to other hosts in the VPC (RDS) is still enforced; selecting
only database clients keeps every other pod off branch ENIs (a per-node limit) and out of any
remaining interaction.

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
from components.model.core.labels import DATABASE_CLIENT_KEY, PLATFORM_OWNED_KEY
from components.model.settings.clouds import AwsSettings

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
    """The namespace's database clients join `groups` (its environment's database groups) plus the
    cluster groups they keep. Tenants have no RBAC on vpcresources.k8s.aws: only the platform
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
            # Database clients only: other pods keep the node's networking (and Pod Identity).
            "podSelector": {"matchLabels": {DATABASE_CLIENT_KEY: "true"}},
            "securityGroups": {"groupIds": [*groups, *settings_aws.pod_security_group_ids]},
        },
        opts=target.opts,
    )
