"""What a real dev cluster has before the first `up`: nodes per pool and the charts' CRDs.

Charts cannot be pulled here, so the run sets `tenancy:installs.managedElsewhere` and stands in for
the installs with what the platform's objects need from them: their CustomResourceDefinitions, from
../shared/crds (the upstream files the offline tests validate against, SOURCES.md there), chosen by
the chart that would bring them. No operator runs: custom resources are stored and validated by
the API server against the real CRD schemas (including their CEL rules), but nothing reconciles
them (docs/real-run.md says what that leaves unverified).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kubernetes import client

from components.model.core.labels import pool_node_labels, pool_taint
from components.model.core.yaml_text import load_yaml
from components.model.settings.stack import StackSettings
from tools.realrun.cluster import node_manifest
from tools.realrun.kube import dynamic
from tools.realrun.toolchain import ROOT

# The API groups each chart of the dev stack brings with it (its templates or its crds/ folder).
CHART_CRD_GROUPS: dict[str, tuple[str, ...]] = {
    "cloudnative-pg": ("postgresql.cnpg.io",),
    "mariadb-operator-crds": ("k8s.mariadb.com",),
    # The operator's own chart leaves its CRDs to mariadb-operator-crds (installed before it).
    "mariadb-operator": (),
    "cert-manager": ("cert-manager.io",),
    # Envoy Gateway's gateway-helm chart ships the Gateway API CRDs (v1.6.1, experimental channel, in
    # its `crds` subchart): seeded here is the standard channel of that release (../shared/crds, what the
    # offline tests validate against); the chart's other kinds come when Envoy Gateway starts
    # (controllers/envoy_gateway.py).
    "gateway-helm": ("gateway.networking.k8s.io",),
    "flux2": ("source.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io"),
}


def shared_crds() -> Path:
    """../shared/crds, or the folder TENANCY_CRDS_DIR names (as the offline tests read it)."""
    return Path(os.environ.get("TENANCY_CRDS_DIR", ROOT.parent / "shared" / "crds"))


def charts(settings: StackSettings) -> dict[str, str]:
    """Every chart the stack installs, by chart name, with the namespace its release goes into:
    installs.charts, the edge's controller and cert-manager, Flux."""
    from components.model.settings.edge import controller_chart

    found = {chart.chart: chart.namespace for chart in settings.installs.charts.values()}
    edge = settings.edge
    if edge.gateway.enabled:
        controller = controller_chart(edge.gateway, settings.edge_facts())
        if controller is not None:
            found[controller.chart] = controller.namespace
    if edge.tls.enabled:
        found[edge.tls.chart.chart] = edge.tls.chart.namespace
    if settings.delivery.install_flux:
        found["flux2"] = settings.delivery.flux_namespace
    return found


def chart_names(settings: StackSettings) -> list[str]:
    return list(charts(settings))


def create_chart_namespaces(api: client.ApiClient, settings: StackSettings) -> list[str]:
    """The namespaces the charts' releases would create (`create_namespace`): whoever installs the
    charts elsewhere creates them, and the platform puts objects there (the edge's CA certificate
    into cert-manager's namespace, for one)."""
    resource = dynamic(api).resources.get(api_version="v1", kind="Namespace")
    names = sorted(set(charts(settings).values()))
    for name in names:
        resource.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return names


def crd_documents(charts: Iterable[str], folder: Path) -> list[dict[str, Any]]:
    """The CRDs of `charts` from `folder`; raises naming a chart whose groups have no file there."""
    groups = {group for chart in charts for group in CHART_CRD_GROUPS.get(chart, ())}
    documents = [load_yaml(path.read_text()) for path in sorted(folder.glob("*.yaml"))]
    chosen = [
        d for d in documents if d and d.get("kind") == "CustomResourceDefinition" and d["spec"]["group"] in groups
    ]
    missing = groups - {d["spec"]["group"] for d in chosen}
    if missing:
        raise RuntimeError(f"{folder}: no CRD for {', '.join(sorted(missing))}")
    return chosen


def crd_names(api: client.ApiClient) -> set[str]:
    """The names of the CustomResourceDefinitions the API server serves now: a controller's chart
    adds only the CRDs the seed did not install."""
    return {
        item["metadata"]["name"]
        for item in dynamic(api)
        .resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
        .get()
        .to_dict()["items"]
    }


def install_crds(api: client.ApiClient, documents: Iterable[dict[str, Any]], timeout: float = 60) -> list[str]:
    """Create each CRD and wait until the API server serves it (condition Established)."""
    crds = dynamic(api).resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    names = []
    for document in documents:
        crds.create(body=document)
        names.append(document["metadata"]["name"])
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending and time.monotonic() < deadline:
        for name in sorted(pending):
            conditions = crds.get(name=name).to_dict().get("status", {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                pending.discard(name)
        time.sleep(0.2)
    if pending:
        raise RuntimeError(f"CRDs not established after {timeout:.0f} s: {', '.join(sorted(pending))}")
    return names


def node_manifests(settings: StackSettings) -> list[dict[str, Any]]:
    """As kind/cluster.yaml has them: an untainted platform worker, and a node per pool labelled
    and tainted as the platform expects (components/model/core/labels.py)."""
    nodes = [node_manifest("platform-worker", {}, [])]
    for name, pool in settings.node_pools.items():
        nodes.append(node_manifest(f"pool-{name}", pool_node_labels(name, pool.cost_code), [pool_taint(name)]))
    return nodes


def create_nodes(api: client.ApiClient, nodes: Iterable[Mapping[str, Any]], timeout: float = 60) -> None:
    """Create the nodes and wait until kwok reports each Ready."""
    resource = dynamic(api).resources.get(api_version="v1", kind="Node")
    names = set()
    for node in nodes:
        resource.create(body=dict(node))
        names.add(node["metadata"]["name"])
    ready: set[str] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = {
            n["metadata"]["name"]
            for n in resource.get().to_dict()["items"]
            if any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions") or [])
        }
        if names <= ready:
            return
        time.sleep(0.5)
    raise RuntimeError(f"nodes not Ready after {timeout:.0f} s (kwok): {', '.join(sorted(names - ready))}")


def wait_for_quota_discovery(api: client.ApiClient, documents: Iterable[dict[str, Any]], timeout: float = 150) -> float:
    """Wait until the quota controller counts the seeded kinds; returns the seconds waited.

    The controller manager's quota controller discovers new resource kinds every 30 s, and a quota
    created before it has computes no usage for them (until its periodic resync, 5 minutes later):
    admission then refuses such objects ("status unknown for quota"), as tenant quotas count
    certificates and Flux sources. A real cluster's CRDs predate its tenants; here they were
    installed a moment ago, so the run creates a fresh probe quota every few seconds until one is
    counted for every namespaced kind, as the tenants' quotas will be.
    """
    started = time.monotonic()
    keys = sorted(
        f"count/{d['spec']['names']['plural']}.{d['spec']['group']}"
        for d in documents
        if d["spec"].get("scope") == "Namespaced"
    )
    dyn = dynamic(api)
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    quotas = dyn.resources.get(api_version="v1", kind="ResourceQuota")
    namespace = "realrun-quota-probe"
    namespaces.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    missing = keys
    attempt = 0
    while missing and time.monotonic() - started < timeout:
        attempt += 1
        name = f"probe-{attempt}"
        probe = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}}
        quotas.create(body={**probe, "spec": {"hard": {key: "1000" for key in keys}}}, namespace=namespace)
        time.sleep(3)
        status = quotas.get(name=name, namespace=namespace).to_dict().get("status") or {}
        missing = [key for key in keys if key not in (status.get("used") or {})]
    namespaces.delete(name=namespace)
    if missing:
        raise RuntimeError(f"the quota controller does not count {', '.join(missing)} after {timeout:.0f} s")
    return time.monotonic() - started
