"""Refusals where a stack's tenants would exceed what its Gateway implementation serves
(components/model/settings/edge_contracts.py), before anything is registered.

- EKS: the ALB takes certificates from ACM only; a hostname without one fails the whole Gateway's
  build, so every hostname it serves (the stack's wildcard, each tenant domain) needs an ARN in
  `tenancy:edge.gateway.acmCertificates` (docs/adr/0034-alb-certificates-from-acm.md).
- GKE: the platform Gateway's certificates are a Certificate Manager map's, one certificate and one
  map entry per name (the stack's wildcard and every tenant domain name), one DNS authorization per
  domain (docs/adr/0041): the project's Certificate Manager quotas bound them, Google's defaults
  unless `tenancy:gcp.certificateManagerQuotas` names the granted values. The map itself takes
  millions of entries (components/model/settings/edge_contracts.py). The 15 certificates of a target
  HTTPS proxy no longer apply: no certificate is attached to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from components.model.core.errors import Problem
from components.model.settings import edge_contracts as contracts
from components.model.settings.edge import gateway_class
from components.model.tenant_file.hostnames import authorization_domains, certificate_map_hostnames

if TYPE_CHECKING:
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantSpec

_KEY = "tenancy:edge.gateway"
_QUOTAS_KEY = "tenancy:gcp.certificateManagerQuotas"
# How to get past a quota: the increase request, or a stack in another project (quotas are per project).
_QUOTA_WAY_FORWARD = (
    "request a higher quota for the project (https://cloud.google.com/docs/quotas/help/request_increase) and "
    "set the granted value here, or serve some tenants from a stack in another project "
    "(docs/edge.md#tenant-domains-on-gke)"
)


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
    if impl.certificate_source == contracts.CERTIFICATE_MAP:
        class_name = gateway_class(gateway, settings.edge_facts())
        if class_name not in contracts.CERTMAP_CLASSES:
            problems.append(
                Problem(
                    settings.source,
                    f"{_KEY}.className",
                    f"{class_name!r} takes no certificate map: the platform's certificates come from a Certificate "
                    f"Manager map, which only the global external classes {sorted(contracts.CERTMAP_CLASSES)} take "
                    "(https://cloud.google.com/certificate-manager/docs/deploy); name one of them or leave it unset",
                )
            )
        problems += _certificate_map_problems([spec for spec, _ in with_domains], settings)
    return problems


def _certificate_map_problems(with_domains: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
    """The certificate map's certificates, entries and DNS authorizations against the project's
    Certificate Manager quotas (components/clouds/gcp/certificate_map.py registers them)."""
    assert settings.gcp is not None  # the settings model requires tenancy:gcp on gcp
    quotas = settings.gcp.certificate_manager_quotas
    names = certificate_map_hostnames(settings.domain_suffix, with_domains)
    needs = {
        "certificates": (len(names), quotas.certificates, "certificates (one per name)"),
        "mapEntries": (len(names), quotas.map_entries, "certificate map entries (one per name)"),
        "dnsAuthorizations": (
            len(authorization_domains(names)),
            quotas.dns_authorizations,
            "DNS authorizations (one per domain)",
        ),
    }
    return [
        Problem(
            settings.source,
            f"{_QUOTAS_KEY}.{field}",
            f"the stack's wildcard and {len(names) - 1} tenant domain names need {needed} Certificate Manager "
            f"{what}, more than the project's quota of {quota} "
            f"({contracts.CERTIFICATE_MANAGER_QUOTAS.source}): {_QUOTA_WAY_FORWARD}",
        )
        for field, (needed, quota, what) in needs.items()
        if needed > quota
    ]
