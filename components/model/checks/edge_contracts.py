"""Refusals where a stack's tenants would exceed what its Gateway implementation serves
(components/model/settings/edge_contracts.py), before anything is registered.

- EKS: the ALB takes certificates from ACM only; a hostname without one fails the whole Gateway's
  build, so every hostname it serves (the stack's wildcard, each tenant domain) needs an ARN in
  `tenancy:edge.gateway.acmCertificates` (docs/adr/0034-alb-certificates-from-acm.md).
- GKE: tenant domains are listeners of the one platform Gateway (docs/adr/0033): a Gateway holds at
  most 64 listeners (Gateway API CRD, `listeners` maxItems), and its load balancer at most 15
  certificates (one for the stack's wildcard, one per tenant with domains).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from components.model.core.errors import Problem
from components.model.settings import edge_contracts as contracts
from components.model.tenant_file.hostnames import own_domain_listeners

if TYPE_CHECKING:
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantSpec

_KEY = "tenancy:edge.gateway"
# kubernetes-sigs/gateway-api v1.4.0 config/crd/standard/gateway.networking.k8s.io_gateways.yaml
# (`spec.listeners` maxItems: 64).
MAX_LISTENERS = 64


def edge_contract_problems(tenants: Sequence[tuple[TenantSpec, str]], settings: StackSettings) -> list[Problem]:
    """Problems of the stack's tenants' domains against its Gateway implementation."""
    gateway = settings.edge.gateway
    if not (gateway.enabled and settings.edge.tls.enabled):
        return []
    impl = settings.edge_facts().gateway
    with_domains = [(spec, source) for spec, source in tenants if spec.domains] if gateway.tenant_listener_sets else []
    problems: list[Problem] = []
    if impl.certificate_source == contracts.ACM:
        arns = gateway.acm_certificates
        wildcard = f"*.{settings.domain_suffix}"
        if wildcard not in arns:
            problems.append(
                Problem(
                    settings.source,
                    f"{_KEY}.acmCertificates",
                    f"name the ACM certificate for {wildcard!r}: the ALB takes certificates from ACM only",
                )
            )
        for spec, source in with_domains:
            for index, domain in enumerate(spec.domains):
                if domain not in arns:
                    problems.append(
                        Problem(
                            source,
                            f"domains.{index}",
                            f"{domain!r} has no ACM certificate in {settings.source} {_KEY}.acmCertificates: the "
                            "ALB takes certificates from ACM only, and one missing fails the whole Gateway",
                        )
                    )
    on_gateway = not contracts.listener_sets_served(settings.edge_facts().gateway, settings.kubernetes_version)
    if on_gateway and with_domains:
        listeners = 1 + sum(len(own_domain_listeners(spec, settings.domain_suffix)) for spec, _ in with_domains)
        certificates = 1 + len(with_domains)
        if listeners > MAX_LISTENERS:
            problems.append(
                Problem(
                    settings.source,
                    "tenancy:edge",
                    f"tenant domains need {listeners} listeners on the platform Gateway, more than {MAX_LISTENERS}",
                )
            )
        if impl.max_certificates is not None and certificates > impl.max_certificates:
            problems.append(
                Problem(
                    settings.source,
                    "tenancy:edge",
                    f"{len(with_domains)} tenants with domains need {certificates} certificates on the Gateway's load "
                    f"balancer, more than its {impl.max_certificates} ({impl.source})",
                )
            )
    return problems
