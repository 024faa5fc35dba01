"""tools.ci.flux_public: the Flux objects the e2e waits for (scripts/e2e/wait-flux.sh), chosen from
what the dev stack really renders, and the scripts that wait for them, with stand-in tools."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tools.ci.flux_public import KUBECTL_RESOURCES, public_url, to_wait_for
from tools.plan.harness import PROJECT_ROOT, ProgramRun

HELM_REPOSITORIES = "helmrepositories.source.toolkit.fluxcd.io"
HELM_RELEASES = "helmreleases.helm.toolkit.fluxcd.io"


@pytest.fixture(scope="module")
def dev_flux_objects(dev_plan: ProgramRun) -> list[dict[str, Any]]:
    return [dict(r.inputs) for r in dev_plan.resources if "toolkit.fluxcd.io" in r.type]


def test_the_dev_stack_renders_public_flux_objects_for_the_e2e_to_wait_for(
    dev_flux_objects: list[dict[str, Any]],
) -> None:
    wanted = to_wait_for(dev_flux_objects)
    # The virtual clusters' chart repository (charts.loft.sh) and their HelmReleases, per environment.
    assert wanted == [
        (HELM_REPOSITORIES, "tenant-operator-lab-dev", "vcluster-charts"),
        (HELM_REPOSITORIES, "tenant-operator-lab-prod", "vcluster-charts"),
        (HELM_RELEASES, "tenant-operator-lab-dev", "vcluster"),
        (HELM_RELEASES, "tenant-operator-lab-prod", "vcluster"),
    ]
    # Sources come before what uses them.
    assert all(resource == HELM_REPOSITORIES for resource, _, _ in wanted[:2])
    # Everything else the dev stack renders points at a reserved example address.
    left_out = [
        o
        for o in dev_flux_objects
        if (o["metadata"]["namespace"], o["metadata"]["name"]) not in {(ns, name) for _, ns, name in wanted}
    ]
    assert left_out and all(
        o["kind"] in ("HelmRelease", "Kustomization") or not public_url(o["spec"]["url"]) for o in left_out
    )


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("https://charts.loft.sh", True),
        ("oci://ghcr.io/stefanprodan/charts/podinfo", True),
        ("oci://registry.acme-corp.example/charts/acme-web", False),
        ("https://git.example.org/operator-lab/clusters.git", False),
        ("https://git.university.example/genomics/platform-config.git", False),
        ("ssh://git@example.com/x.git", False),
        ("https://notexample.com/x", True),
        ("", False),
    ],
)
def test_reserved_example_names_are_not_public(url: str, public: bool) -> None:
    assert public_url(url) is public


def test_suspended_objects_and_unknown_sources_are_not_awaited() -> None:
    source = {
        "kind": "HelmRepository",
        "metadata": {"namespace": "a", "name": "s"},
        "spec": {"url": "https://charts.loft.sh"},
    }
    release = {
        "kind": "HelmRelease",
        "metadata": {"namespace": "a", "name": "r"},
        "spec": {"chart": {"spec": {"sourceRef": {"kind": "HelmRepository", "name": "s"}}}, "suspend": True},
    }
    other = {
        "kind": "Kustomization",
        "metadata": {"namespace": "a", "name": "k"},
        "spec": {"sourceRef": {"kind": "GitRepository", "name": "s"}},
    }
    assert to_wait_for([source, release, other]) == [(HELM_REPOSITORIES, "a", "s")]


def test_the_cli_reads_kubectl_json(dev_flux_objects: list[dict[str, Any]]) -> None:
    document = json.dumps({"apiVersion": "v1", "kind": "List", "items": dev_flux_objects})
    result = subprocess.run(
        [sys.executable, "-m", "tools.ci.flux_public"],
        input=document,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.splitlines()[0] == f"{HELM_REPOSITORIES} tenant-operator-lab-dev vcluster-charts"
    assert len(result.stdout.splitlines()) == 4
    assert KUBECTL_RESOURCES.count("toolkit.fluxcd.io") == 5


def _stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f'#!/usr/bin/env bash\necho "{name} $*" >> "$STUB_LOG"\n{body}\n', encoding="utf-8")
    path.chmod(0o755)


def _run(tmp_path: Path, script: str, kubectl: str, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    log.write_text("")
    _stub(bin_dir, "kubectl", kubectl)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STUB_LOG": str(log), "HOME": str(tmp_path), "PYTHON": sys.executable}
    result = subprocess.run(
        ["bash", str(PROJECT_ROOT / script), *args], capture_output=True, text=True, env=env, check=False
    )
    return result, log.read_text().splitlines()


def test_wait_flux_waits_for_each_public_object_in_order(
    tmp_path: Path, dev_flux_objects: list[dict[str, Any]]
) -> None:
    listing = tmp_path / "flux.json"
    listing.write_text(json.dumps({"items": dev_flux_objects}))
    result, calls = _run(tmp_path, "scripts/e2e/wait-flux.sh", f'[[ "$1" == get ]] && cat {listing}; exit 0', "90s")
    assert result.returncode == 0, result.stderr
    assert calls[0] == f"kubectl get {KUBECTL_RESOURCES} -A -o json"
    waits = [c for c in calls if c.startswith("kubectl wait")]
    first = f"{HELM_REPOSITORIES}/vcluster-charts -n tenant-operator-lab-dev --timeout=90s"
    assert waits[0] == f"kubectl wait --for=condition=Ready {first}"
    assert len(waits) == 4 and waits[-1].startswith(f"kubectl wait --for=condition=Ready {HELM_RELEASES}/vcluster")


def test_wait_flux_fails_naming_the_object_that_is_not_ready(
    tmp_path: Path, dev_flux_objects: list[dict[str, Any]]
) -> None:
    listing = tmp_path / "flux.json"
    listing.write_text(json.dumps({"items": dev_flux_objects}))
    kubectl = (
        f'case "$1" in get) if [[ "$*" == *jsonpath* ]]; then echo "Ready=False InstallFailed: values don\'t meet the'
        f' specifications of the schema"; else cat {listing}; fi ;; wait) [[ "$2 $3" != *helmreleases* ]] ;; esac'
    )
    result, _ = _run(tmp_path, "scripts/e2e/wait-flux.sh", kubectl)
    assert result.returncode == 1
    assert "InstallFailed: values don't meet the specifications of the schema" in result.stderr
    assert f"tenant-operator-lab-dev {HELM_RELEASES}/vcluster is not Ready" in result.stderr


def test_wait_flux_fails_when_nothing_public_is_found(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, "scripts/e2e/wait-flux.sh", "echo '{\"items\": []}'")
    assert result.returncode == 1 and "no Flux object with a public source" in result.stderr


VCLUSTER_KUBECTL = """
case "$*" in
  "get helmreleases"*) echo "tenant-operator-lab-dev vcluster" ;;
  "get secret vc-vcluster"*) printf 'YXBpVmVyc2lvbjogdjEK' ;;
  port-forward*) sleep 30 ;;
  *"wait --for=jsonpath"*) exit "${DNS_RC:-0}" ;;
  *logs*) echo "Name: kubernetes.default.svc.cluster.local" ;;
esac
exit 0
"""


def test_vcluster_dns_looks_up_kubernetes_default_inside_each_virtual_cluster(tmp_path: Path) -> None:
    result, calls = _run(tmp_path, "scripts/e2e/vcluster-dns.sh", VCLUSTER_KUBECTL, "60s")
    assert result.returncode == 0, result.stderr
    assert "kubectl port-forward -n tenant-operator-lab-dev svc/vcluster 18443:443" in calls
    run = next(c for c in calls if " run dns-check " in c)
    assert (
        "--server https://localhost:18443" in run
        and "nslookup" in run
        and "kubernetes.default.svc.cluster.local" in run
    )
    # Restricted Pod Security in the host namespace, where the syncer copies the pod.
    assert '"runAsNonRoot":true' in run and '"drop":["ALL"]' in run and "RuntimeDefault" in run
    assert any(
        c.endswith("--for=jsonpath={.status.phase}=Succeeded pod/dns-check --namespace default --timeout=60s")
        for c in calls
    )


def test_vcluster_dns_fails_when_the_lookup_fails(tmp_path: Path) -> None:
    kubectl = VCLUSTER_KUBECTL.replace('exit "${DNS_RC:-0}"', "exit 1")
    result, _ = _run(tmp_path, "scripts/e2e/vcluster-dns.sh", kubectl, "5s")
    assert result.returncode == 1
    assert "the lookup of kubernetes.default inside the virtual cluster failed" in result.stderr
