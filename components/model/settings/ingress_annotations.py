"""Stack config model for the Ingress annotation policy (`tenancy:policy.ingressAnnotations`).

Annotations are how ingress controllers are configured per Ingress, and several of them reach
past the tenant's own host: ingress-nginx `server-alias` claims other hostnames on the shared
controller, the `*-snippet` family writes raw nginx configuration (CVE-2021-25742, CVE-2023-5043),
`auth-url`/`auth-signin`/`mirror-*` send the tenant's traffic (and its users' credentials) to any
host (CVE-2025-1097/1098/24514, "IngressNightmare" was carried by such values), and external-dns'
`hostname` annotation publishes DNS records for any name. So each governed annotation prefix (one
per controller) carries an allow-list of annotation names; an annotation under a governed prefix
that is not listed is refused. Prefixes nobody governs (`meta.helm.sh`, an app's own keys) pass.

The defaults allow what only changes how the tenant's own host is served: path rewriting,
redirects to HTTPS, timeouts and body sizes, CORS, rate limits, session affinity, source ranges,
the cert-manager issuer choice (the Certificate it creates is checked by the hostname rule), and
cert-manager's ACME solver editing the Ingress in place.
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

from components.model.core.fields import StrictModel

AnnotationPrefix = Annotated[str, Field(pattern=r"^[a-z0-9]+([.-]+[a-z0-9]+)*$", max_length=253)]
AnnotationName = Annotated[str, Field(pattern=r"^[A-Za-z0-9]+([._-]+[A-Za-z0-9]+)*$", max_length=63)]

NGINX_HARMLESS: list[str] = [
    # Path handling on the tenant's own host. rewrite-target values are checked for a safe
    # character set by the rule as well (no quotes, braces, semicolons or newlines).
    "rewrite-target",
    "use-regex",
    "app-root",
    "ssl-redirect",
    "force-ssl-redirect",
    "backend-protocol",
    "proxy-body-size",
    "proxy-connect-timeout",
    "proxy-send-timeout",
    "proxy-read-timeout",
    "proxy-buffering",
    "proxy-buffer-size",
    "client-body-buffer-size",
    "enable-cors",
    "cors-allow-origin",
    "cors-allow-methods",
    "cors-allow-headers",
    "cors-allow-credentials",
    "cors-expose-headers",
    "cors-max-age",
    "limit-rps",
    "limit-rpm",
    "limit-connections",
    "limit-burst-multiplier",
    "affinity",
    "affinity-mode",
    "session-cookie-name",
    "session-cookie-path",
    "session-cookie-max-age",
    "session-cookie-expires",
    "session-cookie-samesite",
    "whitelist-source-range",
    "allowlist-source-range",
    "denylist-source-range",
]

# Every prefix external-dns reads annotations under, by release: the alpha prefix up to v0.21, and
# `external-dns.kubernetes.io` as the default from v0.22.0 (kubernetes-sigs/external-dns PR #6424,
# source/annotations/annotations.go DefaultAnnotationPrefix). One controller, one allow-list: a
# stack that governs either prefix governs all of them with the same names, so an external-dns
# upgrade never turns an ungoverned prefix into a published `hostname` or `target`.
EXTERNAL_DNS_PREFIXES = ("external-dns.alpha.kubernetes.io", "external-dns.kubernetes.io")

DEFAULT_CONTROLLERS: dict[str, list[str]] = {
    "nginx.ingress.kubernetes.io": NGINX_HARMLESS,
    # external-dns would publish records for any name in `hostname`/`target`; only TTL is harmless.
    "external-dns.alpha.kubernetes.io": ["ttl"],
    # ingress-shim creates a Certificate for the Ingress TLS hosts; that Certificate is itself
    # checked by the hostname rule, so choosing the issuer and lifetimes is harmless.
    "cert-manager.io": ["cluster-issuer", "issuer", "issuer-kind", "issuer-group", "duration", "renew-before"],
    # ingress-shim's ACME solver choices (cert-manager.io/docs/usage/ingress, "Supported Annotations",
    # v1.16): `http01-edit-in-place` has the solver edit this Ingress (the tenant's own host and
    # class) instead of creating one. `http01-ingress-class` and `http01-ingress-ingressclassname`
    # would have cert-manager create the solver Ingress for another controller's class (an internal
    # one, say), the choice `classes` keeps from tenants; refused like every unlisted name.
    "acme.cert-manager.io": ["http01-edit-in-place"],
}


class IngressAnnotationPolicy(StrictModel):
    """Per governed annotation prefix (one per controller), the annotation names tenants may set.

    Replacing the map replaces the defaults entirely (a stack that runs Traefik lists its prefix);
    an empty list governs a prefix and allows none of its annotations.
    """

    # Per annotation prefix (`nginx.ingress.kubernetes.io`), the names tenants may set; any other annotation
    # with a listed prefix is refused, annotations under unlisted prefixes are not governed. The defaults
    # cover ingress-nginx, external-dns, cert-manager and its ACME solver; replacing the map replaces them.
    # Listing either external-dns prefix governs both (`external-dns.kubernetes.io` is v0.22's default).
    controllers: dict[AnnotationPrefix, list[AnnotationName]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_CONTROLLERS.items()}
    )
    # The IngressClasses tenant Ingresses may name. A cluster often runs more controllers than the
    # shared public one (an internal one for platform tools, say); an Ingress naming that class is
    # served there. Empty (the default): any class, because class names are the cluster's own.
    classes: list[AnnotationPrefix] = []

    @model_validator(mode="after")
    def _one_list_for_external_dns(self) -> Self:
        listed = {
            prefix: sorted(self.controllers[prefix]) for prefix in EXTERNAL_DNS_PREFIXES if prefix in self.controllers
        }
        if len({tuple(names) for names in listed.values()}) > 1:
            raise ValueError(
                f"controllers: {' and '.join(listed)} are both external-dns prefixes and must list the same names"
            )
        return self

    def governed(self) -> dict[str, list[str]]:
        """The allow-list per governed prefix, every external-dns prefix included once one is governed."""
        governed = {prefix: list(names) for prefix, names in self.controllers.items()}
        external_dns = next((governed[p] for p in EXTERNAL_DNS_PREFIXES if p in governed), None)
        if external_dns is not None:
            for prefix in EXTERNAL_DNS_PREFIXES:
                governed[prefix] = list(external_dns)
        return governed
