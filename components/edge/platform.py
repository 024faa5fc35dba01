"""The platform edge, once per cluster: controllers, the stack's ClusterIssuer, the platform Gateway.

- The Gateway controller where the platform installs one (kind: Envoy Gateway; EKS: the AWS Load
  Balancer Controller) as a pinned, awaited Helm release, and its GatewayClass. GKE ships its
  `gke-l7-*` classes once the cluster's Gateway API is enabled, so nothing is installed there.
- cert-manager (pinned) and the stack's ClusterIssuer: ACME DNS-01 in the stack's first zone with the
  cloud's workload identity on GKE/EKS; on kind a local CA (a selfSigned issuer signs a CA
  certificate, a CA issuer signs with it), https://cert-manager.io/docs/configuration/ca/.
- external-dns (pinned) on GKE/EKS: HTTPRoute hostnames (`gateway-httproute` source) into the stack's
  zones only (`--domain-filter` per suffix and tenant domain), owning only the records of its
  `txtOwnerId` (one per stack).
- The platform Gateway: one HTTPS listener for `*.<domainSuffix>` with the stack's wildcard
  certificate; routes and ListenerSets attach only from namespaces with the tenant label, which
  tenants cannot set (the namespace is the platform's, admission rule `platform-owned`). Where the
  class serves no ListenerSet (GKE), tenant domains take one listener of this Gateway instead; on EKS
  its certificates are ACM's, in a LoadBalancerConfiguration; on GKE a Certificate Manager map's,
  one entry and certificate per name, named by the Gateway's `networking.gke.io/certmap` annotation
  (components/edge/listeners.py, components/clouds/gcp/certificate_map.py, ADR 0041).
- What each controller accepts is data with its source (components/model/settings/edge_contracts.py):
  external-dns syncs (deletes the records it owns once no route names them), and every custom
  resource here waits for its controller's condition (components/model/core/await_rules.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.edge import edge_certificate_map, edge_identity
from components.edge import listeners
from components.edge.identity import EdgeIdentity
from components.edge.issuers import CERT_MANAGER_API, cluster_issuer, issuer_name
from components.model.core.await_rules import wait_for
from components.model.core.labels import platform_labels
from components.model.settings import edge_contracts as contracts
from components.model.settings.edge import controller_chart, gateway_class, txt_owner_id, wildcard_domain
from components.model.settings.installs import ChartInstall
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec
from components.platform.installs import helm_release

GATEWAY_API = "gateway.networking.k8s.io/v1"
WILDCARD_SECRET = "platform-wildcard-tls"


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def domain_filters(suffix: str, tenants: Sequence[TenantSpec]) -> list[str]:
    """external-dns `--domain-filter`s: the stack's suffix and every tenant's own domain (wildcards as their base)."""
    domains = {suffix}
    for spec in tenants:
        domains.update(domain.removeprefix("*.") for domain in spec.domains)
    return sorted(domains)


def _gateway_spec(
    settings: StackSettings, class_name: str, hostname: str, tenant_listeners: list[dict[str, Any]]
) -> dict[str, Any]:
    """The Gateway's listeners: HTTPS for the stack's wildcard, from tenant namespaces only, then
    the tenants' own domains where they are listeners of the Gateway."""
    tenants_only = {"from": "Selector", "selector": listeners.tenant_namespaces()}
    spec: dict[str, Any] = {
        "gatewayClassName": class_name,
        "listeners": [
            {
                "name": "https",
                "hostname": hostname,
                "port": 443,
                "protocol": "HTTPS",
                **listeners.listener_tls(settings, WILDCARD_SECRET),
                "allowedRoutes": {"namespaces": tenants_only, "kinds": [{"kind": "HTTPRoute"}]},
            },
            *tenant_listeners,
        ],
    }
    if listeners.tenant_domains_as_listener_sets(settings):
        # Tenant-owned domains attach as ListenerSets, from tenant namespaces only (the field
        # exists from Gateway API v1.5.0; edge_contracts.py).
        spec["allowedListeners"] = {"namespaces": tenants_only}
    return spec


@dataclass
class PlatformEdgeArgs:
    """The stack's settings (`tenancy:edge` with cloud and suffix), its name, and all its tenants."""

    settings: StackSettings
    stack: str
    tenants: Sequence[TenantSpec]


def external_dns_values(args: PlatformEdgeArgs, identity: EdgeIdentity) -> dict[str, Any]:
    """external-dns's chart values: the stack's zones and names, records it owns kept in sync
    (edge_contracts.py). The real run starts external-dns with these (tools/realrun/controllers/external_dns.py)."""
    settings = args.settings
    uses_listener_sets = listeners.tenant_domains_as_listener_sets(settings) and any(
        spec.domains for spec in args.tenants
    )
    return {
        **identity.external_dns,
        # Cloud DNS and Route 53 take no `*` in a TXT name's inner labels: `*.x`'s ownership
        # record is written as `wildcard.x` (--txt-wildcard-replacement).
        "extraArgs": [
            *identity.external_dns.get("extraArgs", []),
            f"{contracts.EXTERNAL_DNS_WILDCARD_FLAG}=wildcard",
        ],
        "sources": ["gateway-httproute"],
        "domainFilters": domain_filters(settings.domain_suffix, args.tenants),
        "txtOwnerId": txt_owner_id(settings.edge.external_dns, args.stack),
        # sync: a record it owns (its TXT registry entry under txtOwnerId) is deleted once no route
        # names it, so an offboarded tenant's names stop resolving; records of others are never touched.
        "policy": contracts.EXTERNAL_DNS_POLICY,
        "registry": "txt",
        **({"enableGatewayListenerSets": True} if uses_listener_sets else {}),
    }


class PlatformEdge(pulumi.ComponentResource):
    """The cluster's edge (`tenancy:index:PlatformEdge`)."""

    releases: dict[str, k8s.helm.v3.Release]

    def __init__(self, name: str, args: PlatformEdgeArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:PlatformEdge", name, None, opts)
        settings, edge, facts = args.settings, args.settings.edge, args.settings.edge_facts()
        self.releases = {}
        # GKE: per tenant domain, the DNS record its owner publishes to prove it (certificate map).
        self.dns_authorizations: dict[str, pulumi.Input[dict[str, str]]] = {}
        self._managed_elsewhere = settings.installs.managed_elsewhere
        # The charts are never uninstalled by Pulumi (components/platform/installs.py), so the cloud
        # identities they run as stay with them: a removed edge keeps working until it is uninstalled.
        identity = edge_identity(name, settings, self, pulumi.ResourceOptions(retain_on_delete=True))
        controller = controller_chart(edge.gateway, facts) if edge.gateway.enabled else None
        if controller is not None:
            self._release(name, "controller", controller, identity)
        if edge.tls.enabled:
            self._release(name, "cert-manager", edge.tls.chart, identity)
        if edge.external_dns.enabled and facts.cloud_dns:
            self._release(name, "external-dns", edge.external_dns.chart, identity, external_dns_values(args, identity))
        issuer = (
            cluster_issuer(name, settings, args.stack, identity, self._after("cert-manager"))
            if edge.tls.enabled
            else None
        )
        self.gateway: k8s.apiextensions.CustomResource | None = None
        if edge.gateway.enabled and issuer is not None:
            self.gateway = self._gateway(name, settings, args.stack, issuer, args.tenants)
        self.register_outputs(
            {"charts": {k: v.version for k, v in self.releases.items()}, "dnsAuthorizations": self.dns_authorizations}
        )

    def _release(
        self,
        name: str,
        role: str,
        chart: ChartInstall,
        identity: EdgeIdentity,
        values: dict[str, Any] | None = None,
    ) -> None:
        if self._managed_elsewhere:
            # Installed by someone else (`installs.managedElsewhere`): nothing to register or await.
            return
        merged = _deep_merge(_deep_merge(chart.values, values or {}), identity.values.get(role, {}))
        # EKS: after the role's Pod Identity association, else its pods start without credentials.
        opts = pulumi.ResourceOptions(parent=self, depends_on=identity.ready.get(role, []))
        self.releases[role] = helm_release(f"{name}-{role}", chart.chart, chart, merged, opts)

    def ready(self) -> list[pulumi.Resource]:
        """What tenants' edge objects wait for: the releases serving their CRDs, and the Gateway."""
        return [*self.releases.values(), *([self.gateway] if self.gateway is not None else [])]

    def _after(self, *roles: str) -> pulumi.ResourceOptions:
        """Child options that wait for the releases serving the CRDs and webhooks used."""
        return pulumi.ResourceOptions(parent=self, depends_on=[self.releases[r] for r in roles if r in self.releases])

    def _gateway_class(self, name: str, class_name: str, controller_name: str | None) -> list[pulumi.Resource]:
        """The GatewayClass where the platform brings the controller (none where the cloud ships it)."""
        if controller_name is None:
            return []
        return [
            k8s.apiextensions.CustomResource(
                f"{name}-class",
                api_version=GATEWAY_API,
                kind="GatewayClass",
                metadata={"name": class_name, "labels": platform_labels()},
                spec={"controllerName": controller_name},
                opts=self._after("controller"),
            )
        ]

    def _gateway(
        self, name: str, settings: StackSettings, stack: str, issuer: pulumi.Resource, tenants: Sequence[TenantSpec]
    ) -> k8s.apiextensions.CustomResource:
        gateway = settings.edge.gateway
        labels = platform_labels()
        facts = settings.edge_facts()
        class_name = gateway_class(gateway, facts)
        depends = self._gateway_class(name, class_name, facts.controller_name if gateway.class_name is None else None)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={"name": gateway.namespace, "labels": labels},
            opts=pulumi.ResourceOptions(parent=self),
        )
        inside = pulumi.ResourceOptions(parent=self, depends_on=[namespace], deleted_with=namespace)
        hostname = wildcard_domain(settings.domain_suffix)
        after_issuer = pulumi.ResourceOptions.merge(inside, pulumi.ResourceOptions(depends_on=[issuer]))
        if listeners.certificate_source(settings) == contracts.SECRET:
            depends.append(
                self._certificate(
                    f"{name}-wildcard-certificate", WILDCARD_SECRET, [hostname], stack, gateway.namespace, after_issuer
                )
            )
        spec = _gateway_spec(settings, class_name, hostname, listeners.gateway_tenant_listeners(settings, tenants))
        annotations: dict[str, pulumi.Input[str]] = {**wait_for(GATEWAY_API, "Gateway")}
        if listeners.certificate_source(settings) == contracts.CERTIFICATE_MAP:
            # GKE: the load balancer's certificates are a Certificate Manager map's (ADR 0041).
            certificate_map = edge_certificate_map(
                name, settings, stack, listeners.certificate_map_hostnames(settings, tenants), self
            )
            depends += certificate_map.ready
            self.dns_authorizations = certificate_map.dns_records
            annotations = {**annotations, contracts.CERTMAP_ANNOTATION: certificate_map.name}
        if listeners.certificate_source(settings) == contracts.ACM:
            depends += self._alb_configuration(name, settings, tenants, inside)
            spec["infrastructure"] = {
                "parametersRef": {
                    "group": contracts.LB_CONFIG_GROUP,
                    "kind": contracts.LB_CONFIG_KIND,
                    "name": listeners.ALB_CONFIG,
                }
            }
        return k8s.apiextensions.CustomResource(
            f"{name}-gateway",
            api_version=GATEWAY_API,
            kind="Gateway",
            metadata={
                "name": gateway.name,
                "namespace": gateway.namespace,
                "labels": labels,
                "annotations": annotations,
            },
            spec=spec,
            opts=pulumi.ResourceOptions.merge(
                inside, pulumi.ResourceOptions(depends_on=[*depends, issuer, *self.releases.values()])
            ),
        )

    def _certificate(
        self,
        resource_name: str,
        secret: str,
        dns_names: list[str],
        stack: str,
        namespace: str,
        opts: pulumi.ResourceOptions,
    ) -> k8s.apiextensions.CustomResource:
        """A certificate from the stack's ClusterIssuer into `secret`, in the Gateway's namespace."""
        annotations = wait_for(CERT_MANAGER_API, "Certificate")
        return k8s.apiextensions.CustomResource(
            resource_name,
            api_version=CERT_MANAGER_API,
            kind="Certificate",
            metadata={"name": secret, "namespace": namespace, "labels": platform_labels(), "annotations": annotations},
            spec={
                "secretName": secret,
                "dnsNames": dns_names,
                "issuerRef": {"name": issuer_name(stack), "kind": "ClusterIssuer", "group": "cert-manager.io"},
            },
            opts=opts,
        )

    def _alb_configuration(
        self, name: str, settings: StackSettings, tenants: Sequence[TenantSpec], opts: pulumi.ResourceOptions
    ) -> list[pulumi.Resource]:
        """EKS: the ALB's scheme, ACM certificates and target type (listeners.py, ADR 0034)."""
        lb_spec, tg_spec = listeners.alb_configuration(settings, listeners.alb_hostnames(settings, tenants))
        namespace = settings.edge.gateway.namespace
        after = pulumi.ResourceOptions.merge(opts, self._after("controller"))
        after.parent = self
        target = k8s.apiextensions.CustomResource(
            f"{name}-alb-targets",
            api_version=f"{contracts.LB_CONFIG_GROUP}/v1",
            kind=contracts.TG_CONFIG_KIND,
            metadata={"name": listeners.ALB_TARGETS, "namespace": namespace, "labels": platform_labels()},
            spec=tg_spec,
            opts=after,
        )
        config = k8s.apiextensions.CustomResource(
            f"{name}-alb-config",
            api_version=f"{contracts.LB_CONFIG_GROUP}/v1",
            kind=contracts.LB_CONFIG_KIND,
            metadata={"name": listeners.ALB_CONFIG, "namespace": namespace, "labels": platform_labels()},
            spec=lb_spec,
            opts=pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(depends_on=[target])),
        )
        return [target, config]


def build_edge(
    settings: StackSettings,
    stack: str,
    tenants: Sequence[TenantSpec],
    opts: pulumi.ResourceOptions,
) -> PlatformEdge | None:
    """The stack's edge, unless it serves nothing (no Gateway, no TLS)."""
    edge = settings.edge
    if not (edge.gateway.enabled or edge.tls.enabled):
        return None
    return PlatformEdge("platform-edge", PlatformEdgeArgs(settings, stack, tenants), opts=opts)
