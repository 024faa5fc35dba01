"""Network isolation of a tenant namespace: one isolation policy, and egress to its databases.

NetworkPolicies are additive: the isolation policy denies everything not listed, and every other
policy in the namespace can only open more. So the platform keeps to as few objects as possible
(one isolation policy, at most one database egress policy per namespace).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.model.stack import DnsSettings, PlatformNamespace

ISOLATION_POLICY = "tenancy-isolation"
DATABASES_POLICY = "tenancy-databases"
# Set by the API server on every namespace; the only namespace label a tenant cannot forge.
_METADATA_NAME = "kubernetes.io/metadata.name"


def isolation_policy_spec(
    *, platform_namespaces: Sequence[PlatformNamespace], dns: DnsSettings
) -> k8s.networking.v1.NetworkPolicySpecArgsDict:
    """Deny all ingress and egress, then allow: same namespace, DNS, and platform namespaces in.

    One policy instead of four: NetworkPolicies are additive, so a single object with both policy
    types and these rules is exactly equivalent and costs a quarter of the resources.
    """
    same_namespace: k8s.networking.v1.NetworkPolicyPeerArgsDict = {"pod_selector": {}}
    ingress: list[k8s.networking.v1.NetworkPolicyIngressRuleArgsDict] = [{"from_": [same_namespace]}]
    for platform in platform_namespaces:
        rule: k8s.networking.v1.NetworkPolicyIngressRuleArgsDict = {
            "from_": [{"namespace_selector": {"match_labels": {_METADATA_NAME: platform.name}}}]
        }
        if platform.ports:
            rule["ports"] = [{"protocol": "TCP", "port": port} for port in platform.ports]
        ingress.append(rule)
    dns_peer: k8s.networking.v1.NetworkPolicyPeerArgsDict = {
        "namespace_selector": {"match_labels": {_METADATA_NAME: dns.namespace}},
        "pod_selector": {"match_labels": dict(dns.pod_labels)},
    }
    egress: list[k8s.networking.v1.NetworkPolicyEgressRuleArgsDict] = [
        {"to": [same_namespace]},
        {"to": [dns_peer], "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
    ]
    return {"pod_selector": {}, "policy_types": ["Ingress", "Egress"], "ingress": ingress, "egress": egress}


def isolation_policy(
    resource_name: str,
    *,
    metadata: k8s.meta.v1.ObjectMetaArgsDict,
    platform_namespaces: Sequence[PlatformNamespace],
    dns: DnsSettings,
    opts: pulumi.ResourceOptions,
) -> k8s.networking.v1.NetworkPolicy:
    """The namespace's isolation policy (`tenancy-isolation`)."""
    return k8s.networking.v1.NetworkPolicy(
        resource_name,
        metadata=metadata,
        spec=isolation_policy_spec(platform_namespaces=platform_namespaces, dns=dns),
        opts=opts,
    )


def database_egress_policy(
    prefix: str,
    ns_name: str,
    labels: dict[str, str],
    cidrs: Sequence[pulumi.Input[str]],
    ports: list[int],
    opts: pulumi.ResourceOptions,
    namespaces: Sequence[str] = (),
) -> k8s.networking.v1.NetworkPolicy:
    """Egress from the tenant's pods to its own database endpoints, and nowhere else.

    Only for namespaces with databases outside them: cloud databases (by address) and in-cluster
    shared instances (by namespace); in-namespace databases need no rule. Policies are additive,
    so this opens exactly these destinations and ports on top of the isolation policy.
    """
    peers: list[k8s.networking.v1.NetworkPolicyPeerArgsDict] = [{"ip_block": {"cidr": cidr}} for cidr in cidrs]
    peers += [{"namespace_selector": {"match_labels": {_METADATA_NAME: namespace}}} for namespace in namespaces]
    return k8s.networking.v1.NetworkPolicy(
        f"{prefix}-databases",
        metadata={"name": DATABASES_POLICY, "namespace": ns_name, "labels": labels},
        spec={
            "pod_selector": {},
            "policy_types": ["Egress"],
            "egress": [
                {
                    "to": peers,
                    "ports": [{"protocol": "TCP", "port": port} for port in ports],
                }
            ],
        },
        opts=opts,
    )
