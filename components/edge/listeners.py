"""How a listener gets its certificate, and where tenant-owned domains listen, per Gateway implementation.

- Certificates: from a Secret cert-manager writes (Envoy Gateway), from ACM (the AWS Load Balancer
  Controller reads no Secret: the listener names no Secret and the Gateway's LoadBalancerConfiguration
  lists the stack's ACM certificates, docs/adr/0034-alb-certificates-from-acm.md), or on GKE from a
  Certificate Manager map the Gateway names by annotation: its listeners carry no `tls` at all
  (docs/adr/0041-gke-certificates-from-a-certificate-map.md).
- Tenant-owned domains: a ListenerSet in the tenant's namespace where the class serves ListenerSets
  and the installed Gateway API has them; on GKE (Gateway API v1.4.0 with GKE 1.34, and no documented
  ListenerSet support by the gke-l7 classes) one listener without a hostname, `tenant-domains`, on the
  platform Gateway for every tenant's domains, open to tenant namespaces only; which names a namespace's
  routes may claim is admission's (`tenancy-hostnames-routes`), as on the `*.<suffix>` listener
  (docs/adr/0033-tenant-domains-without-listener-sets.md, ADR 0041).
Facts and sources: components/model/settings/edge_contracts.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.model.core.labels import TENANT_KEY
from components.model.settings import edge_contracts as contracts
from components.model.settings.stack import StackSettings
from components.model.tenant_file import hostnames
from components.model.tenant_file.hostnames import own_domain_listeners
from components.model.tenant_file.spec import TenantSpec

# A listener's `tls.options` key saying where its certificate comes from: the Gateway API requires
# certificateRefs or options on a terminating listener (CRD rule), and the ALB controller reads neither.
CERTIFICATE_SOURCE_OPTION = "tenancy.io/certificate-source"


def certificate_source(settings: StackSettings) -> str:
    """`secret` or `acm`: where this stack's Gateway listeners take certificates from."""
    return settings.edge_facts().gateway.certificate_source


def listener_tls(settings: StackSettings, secret: str) -> dict[str, Any]:
    """A terminating listener's `tls` (empty where the Gateway's certificate map serves, GKE: the
    listener then carries none): the Secret, or (ACM) an option naming where it comes from."""
    source = certificate_source(settings)
    if source == contracts.CERTIFICATE_MAP:
        return {}
    if source == contracts.ACM:
        return {"tls": {"mode": "Terminate", "options": {CERTIFICATE_SOURCE_OPTION: contracts.ACM}}}
    return {"tls": {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": secret}]}}


def tenant_domains_as_listener_sets(settings: StackSettings) -> bool:
    """Whether tenant domains are ListenerSets here (else listeners on the platform Gateway)."""
    return settings.edge.gateway.tenant_listener_sets and contracts.listener_sets_served(
        settings.edge_facts().gateway, settings.kubernetes_version
    )


def tenant_domains_on_gateway(settings: StackSettings) -> bool:
    """Whether tenant domains are listeners of the platform Gateway (GKE)."""
    return settings.edge.gateway.tenant_listener_sets and not tenant_domains_as_listener_sets(settings)


# The platform Gateway's one listener for every tenant's own domains (GKE): no hostname, so it takes
# any name a tenant namespace's route is admitted for.
TENANT_DOMAINS_LISTENER = "tenant-domains"


def gateway_tenant_listeners(settings: StackSettings, tenants: Sequence[TenantSpec]) -> list[dict[str, Any]]:
    """GKE: one HTTPS listener without a hostname for the tenants' own domains (none if no tenant has
    any), open to tenant namespaces only. One listener however many domains: a Gateway holds at most
    64 (Gateway API CRD `listeners` maxItems), and the certificate map, not the listener, picks each
    name's certificate. None where tenant domains are ListenerSets."""
    if not tenant_domains_on_gateway(settings):
        return []
    if not any(own_domain_listeners(spec, settings.domain_suffix) for spec in tenants):
        return []
    return [
        {
            "name": TENANT_DOMAINS_LISTENER,
            "port": 443,
            "protocol": "HTTPS",
            **listener_tls(settings, ""),
            "allowedRoutes": {
                "namespaces": {"from": "Selector", "selector": tenant_namespaces()},
                "kinds": [{"kind": "HTTPRoute"}],
            },
        }
    ]


def tenant_namespaces() -> dict[str, Any]:
    """Namespaces the Gateway admits routes and ListenerSets from: tenant namespaces only (the label
    only the platform sets)."""
    return {"matchExpressions": [{"key": TENANT_KEY, "operator": "Exists"}]}


def certificate_map_hostnames(settings: StackSettings, tenants: Sequence[TenantSpec]) -> list[str]:
    """The names the GKE Gateway's certificate map holds: the stack's wildcard, and the tenants' own
    domains where they are served by this Gateway."""
    served = tenants if tenant_domains_on_gateway(settings) else []
    return hostnames.certificate_map_hostnames(settings.domain_suffix, served)


def alb_configuration(settings: StackSettings, hostnames: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The LoadBalancerConfiguration and TargetGroupConfiguration specs of the ALB Gateway:
    internet-facing, the ACM certificates of its hostnames, pods as `ip` targets."""
    arns = settings.edge.gateway.acm_certificates
    ordered = [arns[h] for h in hostnames if h in arns]
    default, rest = (ordered[0], sorted(set(ordered[1:]) - {ordered[0]})) if ordered else ("", [])
    listener: dict[str, Any] = {"protocolPort": "HTTPS:443", "defaultCertificate": default}
    if rest:
        listener["certificates"] = rest
    lb = {
        "scheme": contracts.PUBLIC_SCHEME,
        "listenerConfigurations": [listener],
        "defaultTargetGroupConfiguration": {"name": ALB_TARGETS},
    }
    return lb, {"defaultConfiguration": {"targetType": contracts.IP_TARGETS}}


ALB_CONFIG = "platform-alb"
ALB_TARGETS = "platform-ip-targets"


def alb_hostnames(settings: StackSettings, tenants: Sequence[TenantSpec]) -> list[str]:
    """Every hostname the ALB Gateway serves: the stack's wildcard, then every tenant domain."""
    names = [f"*.{settings.domain_suffix}"]
    if settings.edge.gateway.tenant_listener_sets:
        names += [d for spec in sorted(tenants, key=lambda s: s.name) for d in spec.domains]
    return names
