"""A tenant's part of the edge: its own domains as a ListenerSet, its apps' HTTPRoutes.

- Each environment serves its own names (components/model/tenant_file/hostnames.py): one label
  below the suffix through the platform Gateway's `*.<suffix>` listener and certificate, anything
  else (the tenant's domains) through one ListenerSet in that environment's namespace with a
  certificate for exactly those names from the stack's ClusterIssuer (the tenant proves each domain
  by delegating `_acme-challenge`, docs/edge.md), or from ACM on the ALB (ADR 0034); on GKE
  through the platform Gateway's `tenant-domains` listener, with a certificate from the stack's
  Certificate Manager map (listeners.py, ADR 0041).
  By default only the last environment serves the domains; a name is never served by two
  environments.
- Image apps with `hostnames` get an HTTPRoute in their namespace to their Service, attached to the
  parents whose listeners take its names (GEP-1713: a listener that matches none of a route's
  hostnames does not accept it): the Gateway's HTTPS listener for names one label below the
  suffix, the ListenerSet (or the Gateway's own listener, GKE) for the tenant's domains. The
  isolation policy opens the app's port to the Gateway's data plane (components/guardrails/network.py
  `route_ports`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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
from components.model.tenant_file.hostnames import covers, own_domain_names, resolve, under_gateway
from components.model.tenant_file.spec import TenantSpec

DOMAINS_LISTENER_SET = "tenant-domains"
DOMAINS_SECRET = "tenant-domains-tls"
_GROUP = "gateway.networking.k8s.io"


def _listener_name(index: int) -> str:
    return f"domain-{index}"


def _domains(
    prefix: str,
    domains: list[str],
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
                "dnsNames": domains,
                "issuerRef": {"name": issuer, "kind": "ClusterIssuer", "group": "cert-manager.io"},
            },
            opts=opts,
        )
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
                    **listeners.listener_tls(settings, DOMAINS_SECRET),
                    "allowedRoutes": {"namespaces": {"from": "Same"}, "kinds": [{"kind": "HTTPRoute"}]},
                }
                for index, domain in enumerate(domains)
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
    parents: _Parents,
    opts: pulumi.ResourceOptions,
) -> None:
    """An HTTPRoute per image app with `hostnames` in this environment, to its Service."""
    for app in spec.in_environment(spec.apps, environment):
        if not app.hostnames or app.image is None or app.image.port is None:
            continue
        hostnames = [resolve(t, suffix=parents.suffix, environment=environment) for t in app.hostnames]
        accepting = parents.accepting(hostnames)
        if not accepting:
            # No listener of this stack takes the names (ListenerSets or TLS off): a route nothing
            # accepts would only show as unaccepted in its status.
            continue
        k8s.apiextensions.CustomResource(
            f"{prefix}-app-{app.name}-route",
            api_version=GATEWAY_API,
            kind="HTTPRoute",
            metadata={"name": app.name, "namespace": namespace, "labels": labels},
            spec={
                "parentRefs": accepting,
                "hostnames": hostnames,
                "rules": [{"backendRefs": [{"name": app.name, "port": app.image.port}]}],
            },
            opts=opts,
        )


@dataclass(frozen=True)
class _Parents:
    """The parents an environment's routes may attach to, and which names each one's listeners take."""

    suffix: str
    gateway: dict[str, str]
    # (name, parentRef) for each of the environment's own domain names: its ListenerSet, or on GKE
    # the platform Gateway's `tenant-domains` listener.
    domain_parents: list[tuple[str, dict[str, str]]]

    def accepting(self, hostnames: list[str]) -> list[dict[str, str]]:
        """The parents with a listener for at least one of the names (never one that accepts none)."""
        parents = []
        if any(under_gateway(name, self.suffix) for name in hostnames):
            parents.append({**self.gateway, "sectionName": "https"})
        for pattern, ref in self.domain_parents:
            if ref not in parents and any(covers(pattern, name) for name in hostnames):
                parents.append(ref)
        return parents


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
        inside = resources.options(parent)
        prefix = f"{name}-{environment}"
        names = own_domain_names(spec, environment, settings.domain_suffix)
        with_domains = bool(names) and settings.edge.tls.enabled
        domain_parents: list[tuple[str, dict[str, str]]] = []
        if with_domains and listeners.tenant_domains_as_listener_sets(settings):
            _domains(prefix, names, namespace, labels, issuer, gateway_ref, settings, inside)
            listener_set = {"group": _GROUP, "kind": "ListenerSet", "name": DOMAINS_LISTENER_SET}
            domain_parents = [(domain, listener_set) for domain in names]
        elif with_domains and listeners.tenant_domains_on_gateway(settings):
            # GKE: the platform Gateway's one listener for tenants' domains (listeners.py, ADR 0041).
            section = {**gateway_ref, "sectionName": listeners.TENANT_DOMAINS_LISTENER}
            domain_parents = [(domain, section) for domain in names]
        parents = _Parents(settings.domain_suffix, gateway_ref, domain_parents)
        _app_routes(prefix, spec, environment, namespace, labels, parents, inside)
