"""Start the platform's controllers that can be built here, check what they reconciled, keep evidence.

run.py calls `start` after the cluster is seeded (before the first `up`, as the charts are installed
before tenants on a cluster), `check` after the converged `up`, and `keep_evidence` at its end. The
kinds of the controllers started go to the condition stand-in as `served`: it never writes on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

from components.model.settings.stack import StackSettings
from tools.realrun.cluster import ControlPlane
from tools.realrun.controllers import cert_manager, envoy_gateway, evidence, external_dns, flux_checks
from tools.realrun.controllers import flux as flux_controllers
from tools.realrun.controllers.binaries import CERT_MANAGER_VERSION
from tools.realrun.controllers.chart import ChartIdentity
from tools.realrun.report import Report


@dataclass
class Controllers:
    """The controllers running on one control plane: their identities and the kinds they serve."""

    plane: ControlPlane
    identities: dict[str, ChartIdentity] = field(default_factory=dict)
    served: frozenset[tuple[str, str]] = frozenset()
    flux: flux_controllers.Started | None = None
    tenants: Path | None = None
    external_dns: external_dns.Started | None = None

    def log_files(self) -> dict[str, Path]:
        names = [*self.identities, *(["flux-gitserver"] if self.flux and self.flux.git else [])]
        return {name: self.plane.folder / "logs" / f"{name}.log" for name in names}


def start(
    report: Report,
    plane: ControlPlane,
    api: client.ApiClient,
    binaries: Mapping[str, Path],
    settings: StackSettings,
    tenants: Path | None = None,
    *,
    stack: str,
) -> Controllers:
    """Start every controller the stack installs that the run builds; one line saying who runs as whom.
    With `tenants` (the run's copy of tenants/), their GitOps repositories are served on loopback."""
    controllers = Controllers(plane, tenants=tenants)
    if settings.edge.tls.enabled:
        started = cert_manager.start(plane, api, binaries, settings)
        controllers.identities["cert-manager"] = started.identity
        controllers.served |= cert_manager.SERVED
        added = f"; its chart's CRDs added: {', '.join(started.crds_added)}" if started.crds_added else ""
        report.check(
            "controllers started",
            True,
            f"cert-manager {CERT_MANAGER_VERSION} as {started.identity.username} "
            f"({len(started.identity.objects)} objects of its chart: account, roles, bindings), "
            f"args {' '.join(started.identity.args)}{added}",
        )
    # Envoy Gateway (envoy_gateway.py): its controller and its certgen hook's account.
    if envoy_gateway.runs(settings):
        eg = envoy_gateway.start(plane, api, binaries, settings)
        controllers.identities.update({"envoy-gateway": eg.controller, "envoy-gateway-certgen": eg.certgen})
        controllers.served |= envoy_gateway.SERVED
        report.check("controllers started", True, f"{eg.summary()}; config: {envoy_gateway.config_summary(eg.config)}")
    # external-dns (external_dns.py): the program's values, the in-memory provider; it writes no status.
    if external_dns.runs(settings) and tenants is not None:
        controllers.external_dns = external_dns.start(plane, api, binaries, settings, stack, tenants)
        controllers.identities["external-dns"] = controllers.external_dns.identity
        report.check("controllers started", True, controllers.external_dns.summary())
    if settings.delivery.install_flux:  # Flux (flux.py): source- and kustomize-controller, the Git server
        plan = flux_checks.plan_attacks(tenants) if tenants else None
        extra = {a.path: a.files for a in plan.attacks} if plan else None
        controllers.flux = flux_controllers.start(plane, api, binaries, settings, tenants, extra)
        controllers.identities.update(controllers.flux.identities)
        controllers.served |= flux_controllers.SERVED
        report.check("flux started", True, flux_controllers.summary(controllers.flux))
    return controllers


def check(report: Report, controllers: Controllers, api: client.ApiClient, settings: StackSettings, stack: str) -> None:
    """The controllers' lines, after the converged `up`."""
    controllers.plane.check_alive()
    if "cert-manager" in controllers.identities:
        ok, detail = cert_manager.issued(api, settings, stack)
        report.check("cert-manager issued every Certificate", ok, detail)
    # Envoy Gateway: the Gateway, the tenants' routes and ListenerSets, the proxies' objects, an attack route.
    if "envoy-gateway" in controllers.identities:
        report.check("Envoy Gateway programmed the Gateway", *envoy_gateway.gateway_line(api, settings))
        report.check("Envoy Gateway attached every tenant route and ListenerSet", *envoy_gateway.attached(api))
        log = controllers.plane.folder / "logs" / "envoy-gateway.log"
        namespace = envoy_gateway.proxies_namespace()
        report.check("Envoy Gateway's proxy objects admitted", *envoy_gateway.proxy_objects(api, namespace, log))
        hostname = f"acme-dev.{settings.domain_suffix}"
        attack = envoy_gateway.refused_attachment(
            api, settings, ("realrun-acme-admin", "acme-admins"), "tenant-acme-dev", hostname
        )
        report.check("Envoy Gateway does not attach a route its listener refuses", *attack)
    if controllers.external_dns is not None and controllers.tenants is not None:
        specs = external_dns.tenant_specs(settings, stack, controllers.tenants)
        report.check(
            "external-dns publishes the tenants' own names",
            *external_dns.published_line(api, settings, controllers.external_dns, specs),
        )
        report.check(
            "external-dns publishes no attack route's name",
            *external_dns.attack_line(api, settings, controllers.external_dns, specs),
        )
    if controllers.flux is not None and controllers.flux.git is not None and controllers.tenants is not None:
        flux_checks.report_lines(report, api, controllers.flux, controllers.tenants)


def keep_evidence(
    report: Report, controllers: Controllers, api: client.ApiClient, deployment: Mapping[str, Any], folder: Path
) -> None:
    """`.realrun/run/evidence/`: live objects, status writers and the controllers' logs (evidence.py)."""
    owned = evidence.stack_cluster_objects(deployment)
    for identity in controllers.identities.values():
        for item in identity.objects:
            if not item["metadata"].get("namespace"):
                owned.add((item["apiVersion"], item["kind"], item["metadata"]["name"]))
    written = evidence.write(folder, evidence.live_objects(api, owned), controllers.log_files())
    report.check(
        "evidence kept",
        not written.left_out,
        f"{written.objects} objects and {len(controllers.log_files())} controller logs, {written.size / 1e6:.1f} MB "
        f"in {folder}" + (f"; left out by the cap: {written.left_out[:20]}" if written.left_out else ""),
    )
