"""A tenant's part of the edge: its own domains as a ListenerSet, its apps' HTTPRoutes.

- Each environment serves its own names (components/model/tenant_file/hostnames.py): one label
  below the suffix through the platform Gateway's `*.<suffix>` listener and certificate, anything
  else (the tenant's domains) through one ListenerSet in that environment's namespace with a
  certificate for exactly those names from the stack's ClusterIssuer (the tenant proves each domain
  by delegating `_acme-challenge`, docs/edge.md). By default only the last environment serves the
  domains; a name is never served by two environments.
- Image apps with `hostnames` get an HTTPRoute in their namespace to their Service, attached to the
  parents whose listeners take its names (GEP-1713: a listener that matches none of a route's
  hostnames does not accept it): the Gateway's HTTPS listener for names one label below the
  suffix, the ListenerSet for the tenant's domains. The isolation policy opens the app's port to
  the Gateway's data plane (components/guardrails/network.py `route_ports`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.edge.platform import CERT_MANAGER_API, GATEWAY_API, issuer_name
from components.guardrails.namespace import EnvironmentResources
from components.model.core.labels import kubernetes_labels
from components.model.settings.stack import StackSettings
from components.model.tenant_file.hostnames import covers, resolve, served_hostnames, under_gateway
from components.model.tenant_file.spec import TenantSpec

DOMAINS_LISTENER_SET = "tenant-domains"
DOMAINS_SECRET = "tenant-domains-tls"
_GROUP = "gateway.networking.k8s.io"


def listener_set_names(spec: TenantSpec, environment: str, suffix: str) -> list[str]:
    """The names an environment serves through its ListenerSet: those the platform Gateway's
    `*.<suffix>` listener and certificate do not cover."""
    return [name for name in served_hostnames(spec, environment, suffix) if not under_gateway(name, suffix)]


def _listener_name(index: int) -> str:
    return f"domain-{index}"


def _domains(
    prefix: str,
    domains: list[str],
    namespace: str,
    labels: dict[str, str],
    issuer: str,
    gateway_ref: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> None:
    """The tenant's own domains: one certificate for all, one HTTPS listener each, on the platform Gateway."""
    k8s.apiextensions.CustomResource(
        f"{prefix}-domains-certificate",
        api_version=CERT_MANAGER_API,
        kind="Certificate",
        metadata={"name": DOMAINS_SECRET, "namespace": namespace, "labels": labels},
        spec={
            "secretName": DOMAINS_SECRET,
            "dnsNames": domains,
            "issuerRef": {"name": issuer, "kind": "ClusterIssuer", "group": "cert-manager.io"},
        },
        opts=opts,
    )
    tls = {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": DOMAINS_SECRET}]}
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
    listener_set: dict[str, str] | None
    listener_set_names: list[str]

    def accepting(self, hostnames: list[str]) -> list[dict[str, str]]:
        """The parents with a listener for at least one of the names (never one that accepts none)."""
        parents = []
        if any(under_gateway(name, self.suffix) for name in hostnames):
            parents.append({**self.gateway, "sectionName": "https"})
        if self.listener_set is not None and any(
            any(covers(pattern, name) for pattern in self.listener_set_names) for name in hostnames
        ):
            parents.append(self.listener_set)
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
        inside = pulumi.ResourceOptions(
            parent=parent, deleted_with=resources.namespace, depends_on=[resources.namespace]
        )
        prefix = f"{name}-{environment}"
        domains = listener_set_names(spec, environment, settings.domain_suffix)
        with_domains = bool(domains) and gateway.tenant_listener_sets and settings.edge.tls.enabled
        listener_set = None
        if with_domains:
            _domains(prefix, domains, namespace, labels, issuer, gateway_ref, inside)
            listener_set = {"group": _GROUP, "kind": "ListenerSet", "name": DOMAINS_LISTENER_SET}
        parents = _Parents(settings.domain_suffix, gateway_ref, listener_set, domains)
        _app_routes(prefix, spec, environment, namespace, labels, parents, inside)
