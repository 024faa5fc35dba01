"""What the real run sets up before the engine runs: the stack's config overrides and the seeded
cluster (shared by the run and the benchmark)."""

from __future__ import annotations

from pathlib import Path

from kubernetes import client

from components.model.settings.stack import StackSettings
from tools.realrun import cluster, seed
from tools.realrun.engine import stack_config
from tools.realrun.kube import api_client
from tools.realrun.report import Report

STACK = "dev"


def run_overrides(tenants: Path, base_stack: str = STACK) -> dict[str, object]:
    """What the run changes in the dev stack's config, and why each."""
    committed = stack_config(base_stack, {})["config"]
    return {
        # The control plane's kubeconfig context instead of kind's.
        "tenancy:cluster": {**committed["tenancy:cluster"], "context": cluster.KUBECONFIG_CONTEXT},
        # Charts cannot be pulled here: their CRDs and namespaces are seeded instead (seed.py).
        "tenancy:installs": {**committed.get("tenancy:installs", {}), "managedElsewhere": True},
        # A copy of tenants/, which the lifecycle checks edit.
        "tenancy:tenantsDir": str(tenants),
        # external-dns on: kind has no DNS zone, so the committed stack turns it off, and the program
        # installs it on GKE/EKS only; the run starts it with the program's own values and the in-memory
        # provider (controllers/external_dns.py), which changes nothing the program plans here.
        "tenancy:edge": _with_external_dns(committed.get("tenancy:edge", {})),
    }


def _with_external_dns(edge: dict[str, object]) -> dict[str, object]:
    external_dns = edge.get("externalDns")
    return {**edge, "externalDns": {**(external_dns if isinstance(external_dns, dict) else {}), "enabled": True}}


def seed_cluster(report: Report, plane: cluster.ControlPlane, settings: StackSettings) -> client.ApiClient:
    """The pools' nodes and the charts' CRDs, as a real dev cluster has them before the first `up`."""
    api = api_client(plane.kubeconfig)
    seed.create_nodes(api, seed.node_manifests(settings))
    documents = seed.crd_documents(seed.chart_names(settings), seed.shared_crds())
    crds = seed.install_crds(api, documents)
    namespaces = seed.create_chart_namespaces(api, settings)
    waited = seed.wait_for_quota_discovery(api, documents)
    report.check(
        "seed",
        True,
        f"{len(settings.node_pools) + 1} kwok nodes, {len(crds)} CRDs (counted by quotas after {waited:.0f} s), "
        f"namespaces {namespaces}",
    )
    return api
