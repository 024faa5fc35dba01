"""How a listener gets its certificate, and where tenant-owned domains listen, per Gateway implementation.

- Certificates: from a Secret cert-manager writes (Envoy Gateway, GKE), or from ACM (the AWS Load
  Balancer Controller reads no Secret): there the listener names no Secret and the Gateway's
  LoadBalancerConfiguration lists the stack's ACM certificates (docs/adr/0034-alb-certificates-from-acm.md).
- Tenant-owned domains: a ListenerSet in the tenant's namespace where the class serves ListenerSets
  and the installed Gateway API has them; on GKE (Gateway API v1.4.0 with GKE 1.34, and no documented
  ListenerSet support by the gke-l7 classes) one listener per domain on the platform Gateway, open to
  routes from the namespace of the environment serving the name only, with the tenant's certificate in the Gateway's
  namespace (docs/adr/0033-tenant-domains-without-listener-sets.md).
Facts and sources: components/model/settings/edge_contracts.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.model.core.labels import namespace_name
from components.model.settings import edge_contracts as contracts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.hostnames import own_domain_listeners
from components.model.tenant_file.spec import TenantSpec

# A listener's `tls.options` key saying where its certificate comes from: the Gateway API requires
# certificateRefs or options on a terminating listener (CRD rule), and the ALB controller reads neither.
CERTIFICATE_SOURCE_OPTION = "tenancy.io/certificate-source"
NAME_LABEL = "kubernetes.io/metadata.name"


def certificate_source(settings: StackSettings) -> str:
    """`secret` or `acm`: where this stack's Gateway listeners take certificates from."""
    return settings.edge_facts().gateway.certificate_source


def listener_tls(settings: StackSettings, secret: str) -> dict[str, Any]:
    """A terminating listener's `tls`: the Secret, or (ACM) an option naming where it comes from."""
    if certificate_source(settings) == contracts.ACM:
        return {"mode": "Terminate", "options": {CERTIFICATE_SOURCE_OPTION: contracts.ACM}}
    return {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": secret}]}


def tenant_domains_as_listener_sets(settings: StackSettings) -> bool:
    """Whether tenant domains are ListenerSets here (else listeners on the platform Gateway)."""
    return settings.edge.gateway.tenant_listener_sets and contracts.listener_sets_served(
        settings.edge_facts().gateway, settings.kubernetes_version
    )


def tenant_domains_on_gateway(settings: StackSettings) -> bool:
    """Whether tenant domains are listeners of the platform Gateway (GKE)."""
    return settings.edge.gateway.tenant_listener_sets and not tenant_domains_as_listener_sets(settings)


def gateway_listener_name(tenant: str, index: int) -> str:
    """The platform Gateway's listener for a tenant's `index`-th own domain name (a Gateway API SectionName),
    counted over its environments in order (hostnames.py `own_domain_listeners`)."""
    return f"t-{tenant}-{index}"


def gateway_listener_sections(spec: TenantSpec, environment: str, suffix: str) -> list[str]:
    """The Gateway listeners (GKE) of one environment's own domain names: its routes' sectionNames."""
    return [
        gateway_listener_name(spec.name, index)
        for index, (env, _) in enumerate(own_domain_listeners(spec, suffix))
        if env == environment
    ]


def tenant_certificate_secret(tenant: str) -> str:
    """The Secret, in the Gateway's namespace, of a tenant's domains certificate (GKE)."""
    return f"tenant-{tenant}-domains-tls"


def tenant_certificate_names(spec: TenantSpec, suffix: str) -> list[str]:
    """The names of a tenant's domains certificate on the Gateway (GKE): every environment's own domain names."""
    return list(dict.fromkeys(name for _, name in own_domain_listeners(spec, suffix)))


def gateway_tenant_listeners(settings: StackSettings, tenants: Sequence[TenantSpec]) -> list[dict[str, Any]]:
    """One HTTPS listener per own domain name of a tenant environment, open to routes of that
    environment's namespace only: a name is served by one environment (hostnames.py)."""
    listeners: list[dict[str, Any]] = []
    for spec in sorted(tenants, key=lambda s: s.name):
        for index, (environment, domain) in enumerate(own_domain_listeners(spec, settings.domain_suffix)):
            namespace = namespace_name(spec.name, environment)
            listeners.append(
                {
                    "name": gateway_listener_name(spec.name, index),
                    "hostname": domain,
                    "port": 443,
                    "protocol": "HTTPS",
                    "tls": listener_tls(settings, tenant_certificate_secret(spec.name)),
                    "allowedRoutes": {
                        "namespaces": {"from": "Selector", "selector": {"matchLabels": {NAME_LABEL: namespace}}},
                        "kinds": [{"kind": "HTTPRoute"}],
                    },
                }
            )
    return listeners


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
