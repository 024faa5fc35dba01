"""cert-manager's controller in the real run, and the check that it issued every Certificate.

The controller (realrun/cert-manager, the version the stack's chart pins) runs on the host as the
chart's `cert-manager` service account with the chart's RBAC and arguments (chart.py). The stack
configures no Gateway API support for it (its chart values set no `config.enableGatewayAPI`): the
platform and tenants ask for their certificates with explicit Certificate objects, so neither
`--enable-gateway-api` nor the gateway-shim runs, as on a cluster.
"""

from __future__ import annotations

import base64
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

from components.edge.issuers import CA_SECRET, SELF_SIGNED_ISSUER, issuer_name
from components.model.settings.stack import StackSettings
from tools.realrun import seed
from tools.realrun.cluster import ControlPlane
from tools.realrun.controllers import chart
from tools.realrun.controllers.binaries import CERT_MANAGER_VERSION
from tools.realrun.kube import dynamic
from tools.realrun.toolchain import KUBERNETES_VERSION, module_dir

MODULE = "github.com/cert-manager/cert-manager"
# The kinds this controller serves: the stand-in never writes their conditions (conditions.py).
SERVED = frozenset(
    {("cert-manager.io", "Certificate"), ("cert-manager.io", "Issuer"), ("cert-manager.io", "ClusterIssuer")}
)
# The field managers cert-manager's controllers write statuses with (its user agent's prefix).
MANAGER_PREFIX = "cert-manager-"


@dataclass(frozen=True)
class Started:
    """The running controller: its identity (as the chart grants it) and the CRDs its chart added."""

    identity: chart.ChartIdentity
    crds_added: tuple[str, ...]


def chart_values(settings: StackSettings) -> dict[str, Any]:
    """The values the stack installs cert-manager's chart with (its pinned ChartInstall)."""
    return dict(settings.edge.tls.chart.values)


def start(plane: ControlPlane, api: client.ApiClient, binaries: Mapping[str, Path], settings: StackSettings) -> Started:
    """Render the pinned chart, create what it grants the controller, and start it as that identity."""
    install = settings.edge.tls.chart
    if install.version != CERT_MANAGER_VERSION:
        raise chart.ChartError(
            f"the stack pins cert-manager's chart {install.version}; realrun/cert-manager builds {CERT_MANAGER_VERSION}"
        )
    folder = plane.folder / "charts"
    folder.mkdir(exist_ok=True)
    documents = chart.render(
        binaries["helm"],
        module_dir("cert-manager", MODULE) / "deploy/charts/cert-manager",
        install.chart,
        install.namespace,
        install.version,
        chart_values(settings),
        folder,
        KUBERNETES_VERSION,
    )
    # The chart brings CertificateRequests, Orders and Challenges too (crds.enabled): the seeded
    # Certificates, Issuers and ClusterIssuers are already there.
    existing = seed.crd_names(api)
    missing = [d for d in chart.crds(documents) if d["metadata"]["name"] not in existing]
    added = seed.install_crds(api, missing)
    identity = chart.identity(documents, "cert-manager", "cert-manager-controller")
    chart.apply(api, [*identity.objects, *chart.aggregated_roles(documents)], "realrun-chart-cert-manager")
    kubeconfig = chart.kubeconfig(
        api, identity, plane.server, plane.folder / "pki" / "ca.crt", folder / "cert-manager.kubeconfig"
    )
    plane.start(
        "cert-manager", [str(binaries["cert-manager-controller"]), f"--kubeconfig={kubeconfig}", *identity.args]
    )
    return Started(identity, tuple(added))


def _items(api: client.ApiClient, api_version: str, kind: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = (
        dynamic(api).resources.get(api_version=api_version, kind=kind).get().to_dict()["items"]
    )
    return items


def _ready_by_controller(item: Mapping[str, Any]) -> str:
    """'' when Ready is True and the status was written by one of cert-manager's managers, else why not."""
    conditions = (item.get("status") or {}).get("conditions") or []
    ready = [c for c in conditions if c.get("type") == "Ready"]
    if not ready:
        return "no Ready condition"
    if ready[0].get("status") != "True":
        return f"not Ready ({ready[0].get('reason')}: {ready[0].get('message', '')})"
    writers = {
        m.get("manager", "") for m in item["metadata"].get("managedFields") or [] if m.get("subresource") == "status"
    }
    if not any(w.startswith(MANAGER_PREFIX) for w in writers):
        return f"status written by {sorted(writers)}, not by cert-manager"
    return ""


def sans(pem: bytes) -> set[str]:
    """The certificate's subject alternative names, as `DNS:name` / `IP Address:addr` entries."""
    lines = _openssl(["x509", "-noout", "-ext", "subjectAltName"], pem).splitlines()
    header = [i for i, line in enumerate(lines) if "Subject Alternative Name" in line]
    if not header:
        return set()
    entries = (entry.strip() for line in lines[header[0] + 1 :] for entry in line.split(","))
    return {entry for entry in entries if entry}


def chains_to(leaf: bytes, ca: bytes) -> str:
    """'' when `leaf` verifies against the CA certificate `ca` alone, else openssl's answer."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "ca.pem").write_bytes(ca)
        (Path(folder) / "leaf.pem").write_bytes(leaf)
        result = subprocess.run(
            ["openssl", "verify", "-CAfile", "ca.pem", "leaf.pem"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
    return "" if result.returncode == 0 else (result.stdout + result.stderr).strip()[-300:]


def _openssl(args: list[str], pem: bytes) -> str:
    return subprocess.run(["openssl", *args], input=pem, capture_output=True, check=True).stdout.decode()


def _secret(api: client.ApiClient, namespace: str, name: str) -> dict[str, bytes] | None:
    try:
        secret = client.CoreV1Api(api).read_namespaced_secret(name, namespace)
    except client.ApiException as error:
        if error.status == 404:
            return None
        raise
    return {key: base64.b64decode(value) for key, value in (secret.data or {}).items()}


def certificate_problems(api: client.ApiClient, settings: StackSettings, stack: str) -> tuple[int, list[str]]:
    """How many Certificates there are, and what is wrong with each that is not issued as it must be:
    Ready by cert-manager, from the stack's ClusterIssuer (the CA certificate: from the self-signed
    one), its Secret's certificate chaining to the issuer's CA and naming exactly its dnsNames."""
    problems = []
    issuers = {i["metadata"]["name"]: i for i in _items(api, "cert-manager.io/v1", "ClusterIssuer")}
    for name in (issuer_name(stack), SELF_SIGNED_ISSUER):
        if name not in issuers:
            problems.append(f"ClusterIssuer {name} is missing")
        elif why := _ready_by_controller(issuers[name]):
            problems.append(f"ClusterIssuer {name}: {why}")
    ca_secret = _secret(api, settings.edge.tls.chart.namespace, CA_SECRET) or {}
    ca = ca_secret.get("tls.crt", b"")
    certificates = _items(api, "cert-manager.io/v1", "Certificate")
    for certificate in certificates:
        meta, spec = certificate["metadata"], certificate["spec"]
        where = f"Certificate {meta['namespace']}/{meta['name']}"
        ref = spec.get("issuerRef") or {}
        wanted = SELF_SIGNED_ISSUER if meta["name"] == CA_SECRET else issuer_name(stack)
        if (ref.get("kind"), ref.get("name")) != ("ClusterIssuer", wanted):
            problems.append(f"{where}: issuer {ref.get('kind')}/{ref.get('name')}, not ClusterIssuer/{wanted}")
        if why := _ready_by_controller(certificate):
            problems.append(f"{where}: {why}")
            continue
        data = _secret(api, meta["namespace"], spec["secretName"])
        if data is None or "tls.crt" not in data:
            problems.append(f"{where}: Secret {spec['secretName']} holds no tls.crt")
            continue
        leaf = data["tls.crt"]
        if not ca:
            problems.append(f"{where}: the CA Secret {CA_SECRET} holds no certificate")
        elif why := chains_to(leaf, ca):
            problems.append(f"{where}: does not chain to the stack's CA: {why}")
        expected = {f"DNS:{name}" for name in spec.get("dnsNames") or []}
        found = sans(leaf)
        if found != expected:
            problems.append(f"{where}: SANs {sorted(found)}, expected {sorted(expected)}")
    return len(certificates), problems


def issued(api: client.ApiClient, settings: StackSettings, stack: str) -> tuple[bool, str]:
    """The run's line for cert-manager (checks.py calls it after the converged `up`)."""
    count, problems = certificate_problems(api, settings, stack)
    if not count:
        return False, "no Certificate is live: the dev stack's edge and tenants ask for some"
    if problems:
        return False, f"{len(problems)} of {count} Certificates or issuers wrong: " + "; ".join(problems)[:3000]
    return True, (
        f"{count} Certificates Ready by cert-manager {CERT_MANAGER_VERSION}'s own controllers through ClusterIssuer "
        f"{issuer_name(stack)} (the CA through {SELF_SIGNED_ISSUER}); each Secret chains to the stack's CA and names "
        "exactly the Certificate's dnsNames"
    )
