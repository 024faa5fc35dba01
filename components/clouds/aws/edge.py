"""EKS part of the edge: the stack's IAM roles bound to the edge controllers by Pod Identity.

The roles come from the stack (`tenancy:edge.gateway.controllerRoleArn`, `tls.roleArn`,
`externalDns.roleArn`), like ESO's controller role: their policies are the upstream ones
(LBC: https://kubernetes-sigs.github.io/aws-load-balancer-controller/v3.5/deploy/installation/;
cert-manager Route 53: https://cert-manager.io/docs/configuration/acme/dns01/route53/; external-dns:
https://kubernetes-sigs.github.io/external-dns/latest/docs/tutorials/aws/), scoped to the stack's
hosted zones by the platform team. One PodIdentityAssociation per controller's service account
(https://docs.aws.amazon.com/eks/latest/userguide/pod-identities.html).
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.edge.identity import (
    CERT_MANAGER_ACCOUNT,
    EXTERNAL_DNS_ACCOUNT,
    LOAD_BALANCER_CONTROLLER_ACCOUNT,
    EdgeIdentity,
    service_account_values,
)
from components.model.settings.edge import controller_chart
from components.model.settings.stack import StackSettings


def _associate(
    prefix: str,
    role: str,
    namespace: str,
    account: str,
    role_arn: str,
    settings: StackSettings,
    opts: pulumi.ResourceOptions,
) -> aws.eks.PodIdentityAssociation:
    return aws.eks.PodIdentityAssociation(
        f"{prefix}-{role}-pod-identity",
        cluster_name=settings.cluster.name,
        namespace=namespace,
        service_account=account,
        role_arn=role_arn,
        opts=opts,
    )


def aws_edge_identity(
    prefix: str, settings: StackSettings, parent: pulumi.Resource, opts: pulumi.ResourceOptions
) -> EdgeIdentity:
    """Pod Identity for the LBC, cert-manager and external-dns; the Route 53 solver in the first zone."""
    assert settings.aws is not None  # the settings model requires tenancy:aws on aws
    edge, region = settings.edge, settings.aws.region
    child = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(parent=parent))
    identity = EdgeIdentity()
    controller = controller_chart(edge.gateway, settings.edge_facts())
    if edge.gateway.enabled and controller is not None and edge.gateway.controller_role_arn is not None:
        role = edge.gateway.controller_role_arn
        account = LOAD_BALANCER_CONTROLLER_ACCOUNT
        identity.ready["controller"] = [
            _associate(prefix, "controller", controller.namespace, account, role, settings, child)
        ]
        identity.values["controller"] = {
            **service_account_values(LOAD_BALANCER_CONTROLLER_ACCOUNT),
            "clusterName": settings.cluster.name,
            "region": region,
            **({"vpcId": settings.aws.vpc_id} if settings.aws.vpc_id else {}),
            # Gateway API (L7, ALB) is behind a feature gate of the controller (LBC docs, gateway.md).
            "controllerConfig": {"featureGates": {"ALBGatewayAPI": True}},
        }
    if edge.tls.enabled and edge.tls.role_arn is not None:
        namespace, role = edge.tls.chart.namespace, edge.tls.role_arn
        identity.ready["cert-manager"] = [
            _associate(prefix, "cert-manager", namespace, CERT_MANAGER_ACCOUNT, role, settings, child)
        ]
        identity.values["cert-manager"] = service_account_values(CERT_MANAGER_ACCOUNT)
        identity.dns01 = {"route53": {"region": region, "hostedZoneID": edge.zones[0]}}
    if edge.external_dns.enabled and edge.external_dns.role_arn is not None:
        identity.ready["external-dns"] = [
            _associate(
                prefix,
                "external-dns",
                edge.external_dns.chart.namespace,
                EXTERNAL_DNS_ACCOUNT,
                edge.external_dns.role_arn,
                settings,
                child,
            )
        ]
        identity.values["external-dns"] = service_account_values(EXTERNAL_DNS_ACCOUNT)
        identity.external_dns = {
            "provider": {"name": "aws"},
            "env": [{"name": "AWS_DEFAULT_REGION", "value": region}],
            "extraArgs": [f"--zone-id-filter={zone}" for zone in edge.zones],
        }
    return identity
