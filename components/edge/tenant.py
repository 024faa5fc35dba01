"""A tenant's part of the edge: its own domains as a ListenerSet, its apps' HTTPRoutes.

- Tenant-owned domains (the file's `domains`) are served through one ListenerSet attached to the
  platform Gateway, with a certificate for them from the stack's ClusterIssuer (the tenant proves
  each domain by delegating `_acme-challenge`, docs/edge.md). It lives in the namespace of the
  tenant's last environment (`prod` for `[dev, prod]`): two environments claiming the same name on
  one Gateway would conflict. Another environment that needs a domain writes its own ListenerSet,
  which admission keeps to the tenant's names.
- Image apps with `hostnames` get an HTTPRoute in their namespace to their Service, attached to the
  platform Gateway's HTTPS listener (names under the domain suffix) and, where the namespace holds
  the ListenerSet, to it (the tenant's own domains). The isolation policy opens the app's port to
  the Gateway's data plane (components/guardrails/network.py `route_ports`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from components.edge import listeners
from components.edge.issuers import CERT_MANAGER_API, issuer_name
from components.edge.platform import GATEWAY_API
from components.guardrails.namespace import EnvironmentResources
from components.model.core.await_rules import SKIP_AWAIT
from components.model.core.labels import kubernetes_labels
from components.model.settings import edge_contracts as contracts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

DOMAINS_LISTENER_SET = "tenant-domains"
DOMAINS_SECRET = "tenant-domains-tls"
_GROUP = "gateway.networking.k8s.io"


def domains_environment(spec: TenantSpec) -> str:
    """The environment whose namespace serves the tenant's own domains."""
    return listeners.domains_environment(spec)


def _listener_name(index: int) -> str:
    return f"domain-{index}"


def _domains(
    prefix: str,
    spec: TenantSpec,
    namespace: str,
    labels: dict[str, str],
    issuer: str,
    gateway_ref: dict[str, str],
    settings: StackSettings,
    opts: pulumi.ResourceOptions,
) -> None:
    """The tenant's own domains: one certificate for all, one HTTPS listener each, on the platform Gateway."""
    if listeners.certificate_source(settings) == contracts.SECRET:
        k8s.apiextensions.CustomResource(
            f"{prefix}-domains-certificate",
            api_version=CERT_MANAGER_API,
            kind="Certificate",
            # Ready once the tenant delegates `_acme-challenge`: the tenant's doing, not awaited (ADR 0012).
            metadata={
                "name": DOMAINS_SECRET,
                "namespace": namespace,
                "labels": labels,
                "annotations": {SKIP_AWAIT: "true"},
            },
            spec={
                "secretName": DOMAINS_SECRET,
                "dnsNames": list(spec.domains),
                "issuerRef": {"name": issuer, "kind": "ClusterIssuer", "group": "cert-manager.io"},
            },
            opts=opts,
        )
    tls = listeners.listener_tls(settings, DOMAINS_SECRET)
    k8s.apiextensions.CustomResource(
        f"{prefix}-domains",
        api_version=GATEWAY_API,
        kind="ListenerSet",
        metadata={"name": DOMAINS_LISTENER_SET, "namespace": namespace, "labels": labels},
        spec={
            "parentRef": gateway_ref,
            "listeners": [
                {
                    "name": _listener_name(index),
                    "hostname": domain,
                    "port": 443,
                    "protocol": "HTTPS",
                    "tls": tls,
                    "allowedRoutes": {"namespaces": {"from": "Same"}, "kinds": [{"kind": "HTTPRoute"}]},
                }
                for index, domain in enumerate(spec.domains)
            ],
        },
        opts=opts,
    )


def _app_routes(
    prefix: str,
    spec: TenantSpec,
    environment: str,
    namespace: str,
    labels: dict[str, str],
    parents: list[dict[str, str]],
    opts: pulumi.ResourceOptions,
) -> None:
    """An HTTPRoute per image app with `hostnames` in this environment, to its Service."""
    for app in spec.in_environment(spec.apps, environment):
        if not app.hostnames or app.image is None or app.image.port is None:
            continue
        k8s.apiextensions.CustomResource(
            f"{prefix}-app-{app.name}-route",
            api_version=GATEWAY_API,
            kind="HTTPRoute",
            metadata={"name": app.name, "namespace": namespace, "labels": labels},
            spec={
                "parentRefs": parents,
                "hostnames": list(app.hostnames),
                "rules": [{"backendRefs": [{"name": app.name, "port": app.image.port}]}],
            },
            opts=opts,
        )


def build_tenant_edge(
    parent: pulumi.Resource,
    name: str,
    spec: TenantSpec,
    environments: Mapping[str, EnvironmentResources],
    settings: StackSettings,
    stack: str,
) -> None:
    """Register the tenant's ListenerSet, its certificate, and its apps' HTTPRoutes."""
    gateway = settings.edge.gateway
    if not gateway.enabled:
        return
    gateway_ref = {"group": _GROUP, "kind": "Gateway", "name": gateway.name, "namespace": gateway.namespace}
    issuer = issuer_name(settings.base_stack or stack)
    for environment, resources in environments.items():
        namespace = resources.namespace_name
        labels = kubernetes_labels(spec.name, environment)
        inside = pulumi.ResourceOptions(parent=parent, deleted_with=resources.namespace, depends_on=resources.ready)
        prefix = f"{name}-{environment}"
        with_domains = bool(spec.domains) and settings.edge.tls.enabled and environment == domains_environment(spec)
        parents: list[dict[str, str]] = [{**gateway_ref, "sectionName": "https"}]
        if with_domains and listeners.tenant_domains_as_listener_sets(settings):
            _domains(prefix, spec, namespace, labels, issuer, gateway_ref, settings, inside)
            parents.append({"group": _GROUP, "kind": "ListenerSet", "name": DOMAINS_LISTENER_SET})
        elif with_domains and listeners.tenant_domains_on_gateway(settings):
            # GKE: the platform Gateway's listeners for this tenant's domains (listeners.py, ADR 0033).
            parents += [
                {**gateway_ref, "sectionName": listeners.gateway_listener_name(spec.name, index)}
                for index in range(len(spec.domains))
            ]
        _app_routes(prefix, spec, environment, namespace, labels, parents, inside)
