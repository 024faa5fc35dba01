"""Flux's source-controller and kustomize-controller in the real run, as the pinned flux2 chart runs them.

Both run on the host as their chart's service accounts, with the chart's RBAC and lockdown flags
(flux_chart.py says where each comes from), against the run's API server; the tenants' repositories
are served on loopback by the run's own Git server (gitserver.py). What a host process needs that a
pod has from its cluster:
- the chart's CRDs that the seed (the shared CRDs the offline tests read) does not bring, from the
  controllers' own modules (config/crd/bases);
- `SSL_CERT_FILE`: the Git server's certificate is the only CA the controllers trust for sources,
  as a cluster with a private Git host puts its CA into the controllers' trust store;
- `HTTPS_PROXY`/`HTTP_PROXY` at a loopback port nothing listens on (9, discard) with `NO_PROXY` for
  127.0.0.1: every source the stack names beyond loopback (the HelmRepositories of tenant apps, the
  virtual clusters' chart repository) is refused on the host instead of fetched; the run sends no
  traffic beyond loopback;
- no `--events-addr`: the chart points it at notification-controller, which does not run here.
helm-controller is not served by the Go module proxy (a refusal is final): HelmReleases stay
unreconciled, and the condition stand-in does not await them either (docs/real-run.md#flux).
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from components.delivery.flux import flux_values
from components.model.settings.stack import StackSettings
from tools.realrun import seed
from tools.realrun.cluster import ControlPlane, free_port
from tools.realrun.controllers import chart, flux_chart, gitserver
from tools.realrun.controllers.binaries import (
    FLUX2_MANIFESTS_VERSION,
    KUSTOMIZE_CONTROLLER_VERSION,
    SOURCE_CONTROLLER_VERSION,
)
from tools.realrun.toolchain import module_dir

FLUX2_MODULE = "github.com/fluxcd/flux2/v2"
MODULES = {
    "source-controller": ("flux/source-controller", "github.com/fluxcd/source-controller"),
    "kustomize-controller": ("flux/kustomize-controller", "github.com/fluxcd/kustomize-controller"),
}
VERSIONS = {"source-controller": SOURCE_CONTROLLER_VERSION, "kustomize-controller": KUSTOMIZE_CONTROLLER_VERSION}
# The kinds these two controllers serve: the stand-in never writes their conditions (conditions.py).
SERVED = frozenset(
    {
        *(
            ("source.toolkit.fluxcd.io", kind)
            for kind in ("GitRepository", "HelmRepository", "HelmChart", "OCIRepository", "Bucket")
        ),
        ("kustomize.toolkit.fluxcd.io", "Kustomization"),
    }
)
# Nothing listens on the discard port of loopback: a proxied request is refused on the host.
REFUSING_PROXY = "http://127.0.0.1:9"


@dataclass(frozen=True)
class Started:
    """The running controllers' identities, the Git server, the CRDs added, and what the API server
    answered the controllers' flow-control probe (`flow_control_probe`)."""

    identities: dict[str, chart.ChartIdentity]
    git: gitserver.GitServer | None
    crds_added: tuple[str, ...]
    flow_control: str = ""


def flow_control_probe(server: str, ca: Path, kubeconfig: Path) -> str:
    """What the controllers' start-up probe sees with the chart's RBAC: `HEAD /livez/ping` as their
    account (fluxcd/cli-utils pkg/flowcontrol IsEnabled). The chart lacks Flux's rule for that URL
    (flux_chart.CHART_LACKS), so the answer is 403; the probe only looks for the priority-and-fairness
    header, which the API server's flow-control filter sets before authorization runs."""
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
    request = urllib.request.Request(
        f"{server}/livez/ping", method="HEAD", headers={"Authorization": f"Bearer {token}"}
    )
    context = ssl.create_default_context(cafile=str(ca))
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            status, headers = answer.status, answer.headers
    except urllib.error.HTTPError as error:
        status, headers = error.code, error.headers
    header = "X-Kubernetes-PF-FlowSchema-UID"
    return f"HEAD /livez/ping: {status}, {header} {'present' if headers.get(header) else 'absent'}"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _missing_crds(api: client.ApiClient, folders: list[Path]) -> list[dict[str, Any]]:
    existing = seed.crd_names(api)
    found: dict[str, dict[str, Any]] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.yaml")):
            for document in _documents(path):
                if document.get("kind") == "CustomResourceDefinition" and document["metadata"]["name"] not in existing:
                    found.setdefault(document["metadata"]["name"], document)
    return list(found.values())


def identities(
    manifests: Path, deployments: Mapping[str, Path], values: Mapping[str, Any], namespace: str, folder: Path
) -> dict[str, chart.ChartIdentity]:
    """Each controller's account, the chart's RBAC naming it, and its host arguments."""
    rbac = [
        *flux_chart.crd_controller(_documents(manifests / "rbac/controller.yaml"), namespace),
        *flux_chart.reconciler(values, _documents(manifests / "rbac/reconciler.yaml"), namespace),
    ]
    found = {}
    for controller, deployment in deployments.items():
        account = _documents(manifests / f"bases/{controller}/account.yaml")[0]
        account = {**account, "metadata": {**account["metadata"], "namespace": namespace}}
        name = account["metadata"]["name"]
        base = flux_chart.deployment_args(_documents(deployment)[0])
        addresses = flux_chart.HostAddresses(
            metrics=f"127.0.0.1:{free_port()}",
            health=f"127.0.0.1:{free_port()}",
            storage=f"127.0.0.1:{free_port()}" if controller == "source-controller" else "",
            storage_path=str(folder / "storage") if controller == "source-controller" else "",
        )
        args = flux_chart.host_args(flux_chart.chart_args(controller, base, values), addresses)
        objects = (account, *flux_chart.granted(rbac, name, namespace))
        found[controller] = chart.ChartIdentity(namespace, name, objects, tuple(args))
    return found


def start(
    plane: ControlPlane,
    api: client.ApiClient,
    binaries: Mapping[str, Path],
    settings: StackSettings,
    tenants: Path | None,
    extra_repositories: Mapping[str, Mapping[str, str]] | None = None,
) -> Started:
    """The tenants' Git server (when the run has tenants), then both controllers as the chart's accounts."""
    delivery = settings.delivery
    if delivery.flux_chart.version != flux_chart.CHART_VERSION:
        raise chart.ChartError(
            f"the stack pins the flux2 chart {delivery.flux_chart.version}; "
            f"the run reproduces {flux_chart.CHART_VERSION}"
        )
    folder = plane.folder / "flux"
    folder.mkdir(exist_ok=True)
    git = (
        gitserver.start(plane, binaries["flux-gitserver"], tenants, folder / "git", extra_repositories)
        if tenants
        else None
    )
    manifests = module_dir("flux/manifests", FLUX2_MODULE) / "manifests"
    sources = {name: module_dir(*MODULES[name]) for name in MODULES}
    added = seed.install_crds(api, _missing_crds(api, [source / "config/crd/bases" for source in sources.values()]))
    values = flux_values(delivery)
    found = identities(
        manifests,
        {name: source / "config/manager/deployment.yaml" for name, source in sources.items()},
        values,
        delivery.flux_namespace,
        folder,
    )
    aggregated = [*_documents(manifests / "rbac/edit.yaml"), *_documents(manifests / "rbac/view.yaml")]
    everything = {(d["kind"], d["metadata"]["name"]): d for i in found.values() for d in i.objects}
    chart.apply(api, [*everything.values(), *aggregated], "realrun-chart-flux2")
    # The whole environment (none of the user's own: no proxy, no kubeconfig of theirs).
    (folder / "home").mkdir(exist_ok=True)
    (folder / "storage").mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder / "home"), "RUNTIME_NAMESPACE": delivery.flux_namespace,
           "HTTPS_PROXY": REFUSING_PROXY, "HTTP_PROXY": REFUSING_PROXY, "NO_PROXY": "127.0.0.1,localhost"}  # fmt: skip
    if git is not None:
        env["SSL_CERT_FILE"] = str(git.certificate)
    probes = {}
    for name, identity in found.items():
        kubeconfig = chart.kubeconfig(
            api, identity, plane.server, plane.folder / "pki" / "ca.crt", folder / f"{name}.kubeconfig"
        )
        plane.start(name, [str(binaries[name]), *identity.args], env={**env, "KUBECONFIG": str(kubeconfig)}, cwd=folder)
        probes[name] = flow_control_probe(plane.server, plane.folder / "pki" / "ca.crt", kubeconfig)
    flow = "; ".join(f"{name}: {probe}" for name, probe in probes.items())
    return Started(found, git, tuple(added), flow)


def summary(started: Started) -> str:
    """The report's line: versions, skew, identities, arguments."""
    parts = []
    for name, identity in started.identities.items():
        skew = (
            f" (the chart ships {flux_chart.CHART_TAGS[name]}, not served by the Go proxy)"
            if flux_chart.CHART_TAGS[name] != VERSIONS[name]
            else ""
        )
        parts.append(
            f"{name} {VERSIONS[name]}{skew} as {identity.username} ({len(identity.objects)} objects: account, "
            f"roles, bindings), args {' '.join(identity.args)}"
        )
    git = (
        f"; Git server https://{started.git.address} ({len(started.git.repositories)} tenant repositories)"
        if started.git
        else ""
    )
    added = f"; CRDs added from the controllers' modules: {', '.join(started.crds_added)}" if started.crds_added else ""
    added += f"; flow-control probe with the chart's RBAC: {started.flow_control}" if started.flow_control else ""
    return (
        f"flux2 chart {flux_chart.CHART_VERSION} (Flux {flux_chart.FLUX_VERSION}; "
        f"RBAC from flux2 {FLUX2_MANIFESTS_VERSION}'s "
        f"manifests as the chart renders them): " + "; ".join(parts) + git + added
    )
