"""The control plane's own network needs, opened for it alone, as network-config-analyzer sees them:
the host API server (the syncer) and Flux on the control plane's port (GitOps into the virtual
cluster). Synced pods keep the namespace's isolation: nothing here opens a path between tenants.
Every test runs in both network modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.vcluster.objects import CONTROL_PLANE_KEY
from components.vcluster.values import CONTROL_PLANE_PORT
from tests.guardrails.network_analyzer import Connectivity, analyze, nca_command
from tests.guardrails.test_cluster_network_policy import cluster_mode
from tests.vcluster.helpers import HARD, SOFT, hard_tenant, run_tenants, soft_tenant

pytestmark = pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")

_EXTRA = [
    (HARD, "vcluster-0", {CONTROL_PLANE_KEY: "true"}),
    ("flux-system", "kustomize-controller", {"app": "kustomize-controller"}),
]
# Inside prod's virtualClusters.apiServer (172.16.0.0/28); prod opens no API server to other pods.
_API_SERVER = "172.16.0.2"


@pytest.fixture(scope="module", params=["networkPolicy", "clusterNetworkPolicy"])
def prod(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Connectivity:
    """prod in both network modes: the holes are a NetworkPolicy or an Admin-tier ClusterNetworkPolicy."""
    config = {"network": cluster_mode("prod")} if request.param == "clusterNetworkPolicy" else {}
    run = run_tenants(tmp_path_factory.mktemp("net"), hard_tenant(), soft_tenant(), stack="prod", **config)
    return analyze(run, extra_pods=_EXTRA)


def test_only_the_control_plane_reaches_the_host_api_server(prod: Connectivity) -> None:
    assert prod.allows(f"{HARD}/vcluster-0", _API_SERVER, 443)
    assert not prod.allows(f"{HARD}/vcluster-0", _API_SERVER, 80)
    for pod in (f"{HARD}/app", f"{HARD}/worker", f"{SOFT}/app"):
        assert not prod.reaches(pod, _API_SERVER), pod


def test_flux_reaches_the_control_plane_on_its_port_only(prod: Connectivity) -> None:
    flux = "flux-system/kustomize-controller"
    assert prod.allows(flux, f"{HARD}/vcluster-0", CONTROL_PLANE_PORT)
    assert not prod.allows(flux, f"{HARD}/vcluster-0", 10250)
    assert not prod.reaches(flux, f"{HARD}/app")


def test_synced_pods_reach_their_control_plane_and_no_other_tenant(prod: Connectivity) -> None:
    assert prod.allows(f"{HARD}/app", f"{HARD}/vcluster-0", CONTROL_PLANE_PORT)
    assert not prod.reaches(f"{SOFT}/app", f"{HARD}/vcluster-0")
    assert not prod.reaches(f"{HARD}/vcluster-0", f"{SOFT}/app")
    assert not prod.reaches(f"{HARD}/app", "tenant-hard-prod/app")


def test_a_namespace_tenant_gets_no_such_hole(tmp_path: Path) -> None:
    """The control plane policy exists only where a virtual cluster does."""
    run = run_tenants(tmp_path, soft_tenant(), stack="prod")
    assert not [r for r in run.resources if r.name.endswith("-vcluster-network")]


def test_a_forged_control_plane_label_gets_the_same_holes_and_no_more(tmp_path: Path) -> None:
    """A pod labelled as the control plane that is not it (admission refuses the label on any other pod,
    tenancy-vcluster-selector; this is the network's answer if one got it anyway, docs/network.md known
    limits): it gets Flux in and the host API server out, and still nothing of another tenant."""
    run = run_tenants(tmp_path, hard_tenant(), soft_tenant(), stack="prod")
    forged = (HARD, "impostor", {CONTROL_PLANE_KEY: "true", "app.kubernetes.io/name": "app"})
    connectivity = analyze(run, extra_pods=[*_EXTRA, forged])
    impostor = f"{HARD}/impostor"
    assert connectivity.allows(impostor, _API_SERVER, 443)
    assert not connectivity.allows(impostor, _API_SERVER, 80)
    assert connectivity.allows("flux-system/kustomize-controller", impostor, CONTROL_PLANE_PORT)
    assert not connectivity.reaches(impostor, f"{SOFT}/app")
    assert not connectivity.reaches(f"{SOFT}/app", impostor)
