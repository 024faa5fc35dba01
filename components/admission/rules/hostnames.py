"""Rule 1, hostnames: a tenant may only claim hostnames inside its authorized domains.

The domains come from the tenant Namespace's `tenancy.io/authorized-domains` annotation: the names
its environment serves (components/model/tenant_file/hostnames.py), never another environment's,
so a dev route cannot take a prod name with a more specific path or name. A pattern `*.x` covers
the names one label below `x` (and `*.x` itself); anything else must be equal.
Matching on a whole label boundary (`.x`) is what denies `evilacme.<suffix>` against
`acme.<suffix>`. An object without a hostname would claim every hostname of the ingress
controller or gateway listener, so it is denied too (an Ingress `defaultBackend` as well).

One policy per API shape (Ingress, Gateway routes, Certificate) so every expression type-checks
against the kinds its policy matches.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Validation,
    Variable,
    namespace_annotation_list,
    resource_rule,
)
from components.model.core.labels import AUTHORIZED_DOMAINS_KEY

_WRITE = ["CREATE", "UPDATE"]


def authorized(host: str) -> str:
    """CEL: whether the hostname expression `host` falls inside one of `variables.authorized`: equal,
    or exactly one label below a `*.x` pattern, as a certificate for the pattern covers it (RFC 6125
    6.4.3; components/model/tenant_file/hostnames.py `covers` decides the same at plan time).

    Gateway API reads a listener's `*.x` as any depth below x, but the certificate covers one label:
    a deeper name would be routed and fail TLS. Names are compared as written; the CRDs and the API
    server admit lowercase names without a trailing dot only, and any other spelling matches nothing
    here, so it is refused, never widened."""
    below = (
        f"(p.startsWith('*.') && {host}.endsWith(p.substring(1)) && size({host}) >= size(p)"
        f" && !{host}.substring(0, size({host}) - size(p) + 1).contains('.'))"
    )
    return f"variables.authorized.exists(p, p == {host} || {below})"


AUTHORIZED: Variable = {"name": "authorized", "expression": namespace_annotation_list(AUTHORIZED_DOMAINS_KEY)}


def outside(kind_label: str, variable: str) -> Validation:
    return {
        "expression": f"size(variables.{variable}) == 0",
        "message_expression": (
            f"'{kind_label} ' + variables.{variable}[0] + ' is outside the domains of tenant ' + variables.tenant"
            " + ' (' + variables.authorized.join(', ') + ')'"
        ),
        "reason": "Forbidden",
    }


def ingress_policy() -> PolicyDefinition:
    """Ingress rule hosts and TLS hosts."""
    return PolicyDefinition(
        name="tenancy-hostnames-ingress",
        rule="hostnames",
        resource_rules=[resource_rule("networking.k8s.io", ["ingresses"], _WRITE)],
        variables=[
            TENANT_VARIABLE,
            AUTHORIZED,
            {"name": "rules", "expression": "has(object.spec.rules) ? object.spec.rules : []"},
            {
                "name": "deniedHosts",
                "expression": f"variables.rules.filter(r, has(r.host) && !{authorized('r.host')}).map(r, r.host)",
            },
            {
                # One list per TLS entry, holding its unauthorized hosts; entries without any dropped.
                "name": "deniedTlsHosts",
                "expression": (
                    "has(object.spec.tls) ? object.spec.tls.filter(t, has(t.hosts))"
                    f".map(t, t.hosts.filter(h, !{authorized('h')})).filter(l, size(l) > 0) : []"
                ),
            },
        ],
        validations=[
            {
                # ingress-nginx (and most controllers) make an Ingress defaultBackend the backend of
                # every request no other rule matches: every unclaimed hostname of the controller.
                "expression": "!has(object.spec.defaultBackend)",
                "message": "Ingress spec.defaultBackend is not allowed in tenant namespaces: it becomes the shared "
                "controller's catch-all for every hostname; use rules with a host",
                "reason": "Forbidden",
            },
            {
                "expression": "variables.rules.all(r, has(r.host) && r.host != '')",
                "message": "every Ingress rule needs a host: a rule without one claims every hostname",
                "reason": "Forbidden",
            },
            outside("Ingress host", "deniedHosts"),
            {
                "expression": "size(variables.deniedTlsHosts) == 0",
                "message_expression": (
                    "'Ingress TLS host ' + variables.deniedTlsHosts[0][0] + ' is outside the domains of tenant '"
                    " + variables.tenant + ' (' + variables.authorized.join(', ') + ')'"
                ),
                "reason": "Forbidden",
            },
        ],
    )


def routes_policy() -> PolicyDefinition:
    """Gateway API HTTPRoute, GRPCRoute and TLSRoute `spec.hostnames`."""
    return PolicyDefinition(
        name="tenancy-hostnames-routes",
        rule="hostnames",
        resource_rules=[resource_rule("gateway.networking.k8s.io", ["httproutes", "grpcroutes", "tlsroutes"], _WRITE)],
        variables=[
            TENANT_VARIABLE,
            AUTHORIZED,
            {
                "name": "deniedHosts",
                "expression": (
                    f"has(object.spec.hostnames) ? object.spec.hostnames.filter(h, !{authorized('h')}) : []"
                ),
            },
        ],
        validations=[
            {
                "expression": "has(object.spec.hostnames) && size(object.spec.hostnames) > 0",
                "message_expression": (
                    "object.kind + ' needs spec.hostnames: a route without them claims every hostname of its listener'"
                ),
                "reason": "Forbidden",
            },
            outside("route hostname", "deniedHosts"),
        ],
    )


def listenersets_policy() -> PolicyDefinition:
    """Gateway API ListenerSet `spec.listeners[].hostname`: a listener without one takes every name."""
    return PolicyDefinition(
        name="tenancy-hostnames-listenersets",
        rule="hostnames",
        resource_rules=[resource_rule("gateway.networking.k8s.io", ["listenersets"], _WRITE)],
        variables=[
            TENANT_VARIABLE,
            AUTHORIZED,
            {"name": "listeners", "expression": "has(object.spec.listeners) ? object.spec.listeners : []"},
            {
                "name": "deniedHosts",
                "expression": f"variables.listeners.filter(l, has(l.hostname) && !{authorized('l.hostname')})"
                ".map(l, l.hostname)",
            },
        ],
        validations=[
            {
                "expression": "variables.listeners.all(l, has(l.hostname) && l.hostname != '')",
                "message": "every ListenerSet listener needs a hostname: a listener without one claims every "
                "hostname on its port",
                "reason": "Forbidden",
            },
            outside("listener hostname", "deniedHosts"),
        ],
    )


def policies() -> list[PolicyDefinition]:
    """Hostnames of Ingress, Gateway routes and ListenerSets (Certificates: rules/certificates.py)."""
    return [ingress_policy(), routes_policy(), listenersets_policy()]
