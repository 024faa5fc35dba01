"""The data plane in the real run: `start` (after the seed: packages, host bookkeeping, registry and
images, real nodes, the enforcer) and `check_matrix` (after the converged `up`, and again while
acme is suspended: probes placed by the platform, the matrix measured and compared, the evidence).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubernetes import client

from components.clouds.registry import cloud_for
from components.guardrails.network import route_ports
from components.model.catalog.load import load_catalog
from components.model.core.labels import ENVIRONMENT_KEY, SUSPENDED_KEY, TENANT_KEY
from components.model.settings.stack import StackSettings
from tools.realrun.cluster import ControlPlane
from tools.realrun.dataplane import enforcer, host, images, matrix, nodes, offline
from tools.realrun.dataplane.probes import OPERATOR_WRITTEN, Probe, manifest, platform_probes, tenant_probes
from tools.realrun.kube import plain
from tools.realrun.report import Report

AGNHOST = "agnhost"
PAUSE = "pause"


@dataclass
class DataPlane:
    """What `start` brought up, for the checks."""

    plane: ControlPlane
    api: client.ApiClient
    folder: Path
    nodes: list[nodes.Node]
    agnhost_image: str
    evidence: Path


def start(
    report: Report, plane: ControlPlane, api: client.ApiClient, settings: StackSettings, binaries: Mapping[str, Path]
) -> DataPlane:
    started = time.monotonic()
    host.install_packages(report.note)
    folder = plane.folder.parent / "dataplane"
    folder.mkdir(parents=True, exist_ok=True)
    # Bookkeeping first: whatever fails later, these restore the host.
    host.keep_sysctls(plane)
    host.keep_iptables(plane)
    host.keep_kubelet_log_links(plane)
    # Bridged packets between pods of one node go through iptables (the enforcer's queue).
    host.set_sysctl("net.bridge.bridge-nf-call-iptables", "1")
    real = nodes.plan_nodes({name: pool.cost_code for name, pool in settings.node_pools.items()}, folder)
    for node in real:
        host.add_bridge(plane, node.bridge, f"{node.address}/24")
    registry = images.start_registry(plane, folder / "registry")
    hosts = images.registry_hosts(folder / "registry-hosts", registry)
    pause = images.Image(PAUSE, images.build_pause(folder / "build" / "pause"), "/pause")
    agnhost = images.Image(AGNHOST, binaries["agnhost"], "/agnhost")
    for node in real:
        nodes.start_containerd(plane, node, pause.reference(registry), hosts)
    # Registered after the nodes' mounts, so undone before them (LIFO): first the containers go.
    host.keep_container_cgroups(plane)
    for image in (pause, agnhost):
        tarball = images.docker_save_tarball(image, image.reference(registry), folder / "images" / f"{image.name}.tar")
        images.publish(real[0].socket, tarball, image.reference(registry))
    for node in real:
        nodes.start_kubelet(plane, node, binaries["kubelet"])
    ready = nodes.wait_ready(plane, api, real)
    enforcer.start(plane, api, binaries["kube-network-policies"], real[0].name, folder / "enforcer")
    report.check(
        "real nodes",
        True,
        f"{len(real)} kubelet nodes Ready after {ready:.0f} s ({', '.join(n.name for n in real)}; containerd, "
        f"bridge + host-local CNI, kube-network-policies on NFQUEUE {enforcer.QUEUE}); registry {registry}; "
        f"{time.monotonic() - started:.0f} s in all",
    )
    evidence = plane.folder.parent / "evidence"
    evidence.mkdir(parents=True, exist_ok=True)
    return DataPlane(plane, api, folder, real, agnhost.reference(registry), evidence)


def tenant_namespace_probes(api: client.ApiClient, settings: StackSettings, tenants: Path) -> list[Probe]:
    """Probes for every live tenant environment namespace, with the tenant's route ports there."""
    catalog = load_catalog(tenants, settings, "dev", cloud=cloud_for(settings))
    specs = {entry.spec.name: entry.spec for entry in catalog.tenants}
    found: list[Probe] = []
    for namespace in plain(api, client.CoreV1Api(api).list_namespace(label_selector=TENANT_KEY))["items"]:
        labels = namespace["metadata"].get("labels") or {}
        tenant, environment = labels.get(TENANT_KEY, ""), labels.get(ENVIRONMENT_KEY, "")
        if tenant not in specs or not environment:
            continue
        name = namespace["metadata"]["name"]
        probes = tenant_probes(name, tenant, environment, route_ports(specs[tenant], environment))
        found += [replace(p, suspended=labels.get(SUSPENDED_KEY) == "true") for p in probes]
    return sorted(found, key=lambda p: p.key)


def _ensure_namespace(core: client.CoreV1Api, name: str) -> None:
    try:
        core.read_namespace(name)
    except client.ApiException as error:
        if error.status != 404:
            raise
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))


def operator_client(api: client.ApiClient, identity: str) -> client.ApiClient:
    """A client that acts as the data operator (impersonation), with the pod writes its chart grants
    it cluster-wide (CloudNativePG's ClusterRole: pods create/get/delete); the run's charts are
    `managedElsewhere`, so the run grants that much itself."""
    rbac = client.RbacAuthorizationV1Api(api)
    name = "realrun-data-operator-pods"
    role = {"metadata": {"name": name}, "rules": [{"apiGroups": [""], "resources": ["pods"],
                                                   "verbs": ["create", "get", "delete"]}]}  # fmt: skip
    binding = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": identity}],
    }
    writes: list[tuple[Any, dict[str, Any]]] = [
        (rbac.create_cluster_role, role),
        (rbac.create_cluster_role_binding, binding),
    ]
    for create, body in writes:
        try:
            create(body)
        except client.ApiException as error:
            if error.status != 409:
                raise
    acting = client.ApiClient(api.configuration)
    acting.set_default_header("Impersonate-User", identity)  # type: ignore[no-untyped-call]
    return acting


def place(
    data: DataPlane, probes: Sequence[Probe], operator: str | None = None, timeout: float = 240
) -> tuple[list[Probe], list[str]]:
    """Create the probes that do not run yet (admitted by the real chain) and wait until every
    one is Ready; returns them with their addresses, and what was refused or never got Ready.

    A database probe is written by the data operator (`operator`), as CloudNativePG writes its
    instance pods: only an operator identity may put the labels its budgets select by on a pod
    (`tenancy-scheduling-operator-labels`), so a tenant's identity, or the run's administrator,
    is refused there, as it must be."""
    core = client.CoreV1Api(data.api)
    as_operator = client.CoreV1Api(operator_client(data.api, operator)) if operator else core
    problems: list[str] = []
    platform_node = next(n.name for n in data.nodes if n.pool == "shared")
    for probe in probes:
        if not probe.tenant:
            _ensure_namespace(core, probe.namespace)
        try:
            core.read_namespaced_pod(probe.name, probe.namespace)
            continue
        except client.ApiException as error:
            if error.status != 404:
                raise
        try:
            writer = as_operator if probe.role in OPERATOR_WRITTEN else core
            writer.create_namespaced_pod(probe.namespace, manifest(probe, data.agnhost_image, platform_node))  # type: ignore[arg-type]
        except client.ApiException as error:
            problems.append(f"{probe.key} refused: {_message(error)}")
    deadline = time.monotonic() + timeout
    ready: dict[str, Probe] = {}
    wanted = [p for p in probes if not any(x.startswith(p.key + " ") for x in problems)]
    while len(ready) < len(wanted) and time.monotonic() < deadline:
        data.plane.check_alive()
        for probe in wanted:
            status = plain(data.api, core.read_namespaced_pod(probe.name, probe.namespace)).get("status", {})
            conditions = {c["type"]: c["status"] for c in status.get("conditions", [])}
            if conditions.get("Ready") == "True" and status.get("podIP"):
                ready[probe.key] = replace(probe, ip=status["podIP"])
        time.sleep(1)
    problems += [f"{p.key} not Ready after {timeout:.0f} s" for p in wanted if p.key not in ready]
    return [ready[p.key] for p in wanted if p.key in ready], problems


def _message(error: client.ApiException) -> str:
    try:
        return str(json.loads(error.body or "{}").get("message", error.reason))
    except ValueError:
        return str(error.reason)


def save_pods(data: DataPlane, probes: Sequence[Probe], name: str) -> int:
    """The probe pods as they ran (status with containerStatuses and their container IDs)."""
    core = client.CoreV1Api(data.api)
    pods = [plain(data.api, core.read_namespaced_pod(p.name, p.namespace)) for p in probes]
    (data.evidence / f"{name}.json").write_text(json.dumps(pods, indent=1, default=str))
    return sum(1 for pod in pods for s in pod["status"].get("containerStatuses", []) if s.get("containerID"))


def check_matrix(
    report: Report, data: DataPlane, settings: StackSettings, tenants: Path, label: str, evidence_name: str
) -> bool:
    """Probes in place, every pair measured, compared with the model and nca; one check line."""
    started = time.monotonic()
    wanted = tenant_namespace_probes(data.api, settings, tenants) + platform_probes()
    operators = settings.policy.operator_identities
    probes, problems = place(data, wanted, operators[0] if operators else None)
    placed = time.monotonic() - started
    all_pairs = matrix.pairs(probes)
    measured = matrix.measure(all_pairs)
    analysis = offline.analysis(data.api, probes)
    entries = [
        matrix.entry(pair, observed, detail, offline.allows(analysis, pair)) for pair, observed, detail in measured
    ]
    (data.evidence / f"{evidence_name}.json").write_text(json.dumps(entries, indent=1))
    containers = save_pods(data, probes, f"{evidence_name}-pods")
    differ = matrix.differences(entries)
    opened = sum(1 for e in entries if e["observed"])
    return report.check(
        label,
        not differ and not problems and bool(entries),
        f"{len(entries)} pairs and ports measured between {len(probes)} probes ({containers} containers), "
        f"{opened} open, {len(entries) - opened} closed; placed in {placed:.0f} s, measured in "
        f"{time.monotonic() - started - placed:.0f} s"
        + (f"; {len(differ)} differ: {' | '.join(differ[:12])}" if differ else ", all as the model and nca say")
        + (f"; {' | '.join(problems)}" if problems else ""),
    )
