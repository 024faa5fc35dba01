"""The controllers' binaries, one pinned Go module each under realrun/, appended to toolchain.binaries()."""

from __future__ import annotations

import re

from tools.realrun.binary import Binary
from tools.realrun.controllers import external_dns_source

CERT_MANAGER_VERSION = "v1.21.1"
HELM_VERSION = "v3.22.0"
ENVOY_GATEWAY_VERSION = "v1.9.1"
# Flux (flux.py, flux_chart.py): the flux2 chart 2.17.2 ships source-controller v1.7.4, which the Go
# module proxy does not serve (v1.8.5 is the nearest it does), and kustomize-controller v1.7.3.
SOURCE_CONTROLLER_VERSION = "v1.8.5"
KUSTOMIZE_CONTROLLER_VERSION = "v1.7.3"
FLUX2_MANIFESTS_VERSION = "v2.9.5"
# external-dns (external_dns.py): the stack pins chart 1.21.1 (app v0.21.0); the proxy serves v0.23.0 only.
EXTERNAL_DNS_VERSION = external_dns_source.VERSION

BINARIES = [
    # Our own main over the pinned module's registered controllers: upstream's main is a nested module
    # the proxy does not serve (realrun/cert-manager/cmd/cert-manager-controller/main.go says more).
    Binary(
        "cert-manager-controller",
        "cert-manager",
        "./cmd/cert-manager-controller",
        (f"-X github.com/cert-manager/cert-manager/pkg/util.AppVersion={CERT_MANAGER_VERSION}",),
    ),
    # Envoy Gateway: upstream's own main (cmd/envoy-gateway of the pinned module), the version stamped
    # in as its release build does (`envoy-gateway version` prints it).
    Binary(
        "envoy-gateway",
        "envoy-gateway",
        "github.com/envoyproxy/gateway/cmd/envoy-gateway",
        (f"-X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion={ENVOY_GATEWAY_VERSION}",),
        ("version",),
        f"^ENVOY_GATEWAY_VERSION: {re.escape(ENVOY_GATEWAY_VERSION)}$",
    ),
    # Renders the controllers' charts from the pinned modules' own chart folders (chart.py).
    Binary(
        "helm",
        "helm",
        "helm.sh/helm/v3/cmd/helm",
        (f"-X helm.sh/helm/v3/internal/version.version={HELM_VERSION}",),
        ("version", "--short"),
        f"^{re.escape(HELM_VERSION)}",
    ),
    # Flux: upstream's own mains at the versions realrun/flux/*/go.mod pin, and the tenants' Git server.
    Binary("source-controller", "flux/source-controller", "github.com/fluxcd/source-controller"),
    Binary("kustomize-controller", "flux/kustomize-controller", "github.com/fluxcd/kustomize-controller"),
    Binary("flux-gitserver", "flux/gitserver", "./cmd/flux-gitserver"),
    # external-dns: upstream's main over a copy of the pinned module whose provider factory is the
    # run's (in-memory only; external_dns_source.py says why), built with the Go its go.mod asks for.
    Binary(
        "external-dns",
        "external-dns",
        external_dns_source.MODULE,
        (f"-X sigs.k8s.io/external-dns/pkg/apis/externaldns.Version={EXTERNAL_DNS_VERSION}",),
        ("--version",),
        re.escape(EXTERNAL_DNS_VERSION),
        external_dns_source.prepare,
        (("GOTOOLCHAIN", external_dns_source.GO_TOOLCHAIN),),
    ),
]
