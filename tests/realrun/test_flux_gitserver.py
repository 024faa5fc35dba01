"""The tenants' repositories on the run's Git server, and the attack repositories
(tools/realrun/controllers/gitserver.py, flux_attacks.py, flux_checks.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.delivery.gitops import GITOPS_NAME
from components.guardrails.access import DEPLOYER_ACCOUNT
from tools.realrun.controllers import flux_attacks, flux_checks, gitserver

ROOT = Path(__file__).resolve().parents[2]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_every_gitops_tenant_gets_a_repository_at_its_urls_path() -> None:
    found = {r.tenant: r for r in gitserver.tenant_repositories(ROOT / "tenants")}
    assert found["genomics-lab"].path == "/genomics/platform-config.git"
    assert found["genomics-lab"].refs() == {"dev": {"branch": "main"}, "prod": {"tag": "v2.3.0"}}
    assert found["operator-lab"].virtual_cluster


@needs_git
def test_the_repository_holds_each_ref_at_the_commit(tmp_path: Path) -> None:
    made = gitserver.make_repository(
        tmp_path / "root",
        tmp_path / "work",
        "/team/repo.git",
        {"clusters/dev/kustomization.yaml": "resources: []\n"},
        [{"branch": "main"}, {"tag": "v1.0.0"}],
    )
    bare = tmp_path / "root/team/repo.git"
    assert made["branch main"] == gitserver.git(["rev-parse", "main"], bare)
    assert made["tag v1.0.0"] == gitserver.git(["rev-parse", "v1.0.0^{commit}"], bare)
    assert gitserver.git(["show", "main:clusters/dev/kustomization.yaml"], bare) == "resources: []"


def test_only_the_url_of_the_tenant_file_changes(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text("# comment\ngitops:\n  url: https://git.example/a.git # theirs\n  path: ./x\n")
    gitserver.point_at(file, "https://git.example/a.git", "https://127.0.0.1:1/a.git")
    assert file.read_text() == "# comment\ngitops:\n  url: https://127.0.0.1:1/a.git # theirs\n  path: ./x\n"
    with pytest.raises(gitserver.GitServerError):
        gitserver.point_at(file, "https://git.example/a.git", "https://127.0.0.1:1/a.git")


def test_the_apps_deployment_leaves_placement_to_the_kustomizations_patches() -> None:
    manifests = gitserver.app_manifests("t", "dev")
    deployment = yaml.safe_load(manifests["deployment.yaml"])
    assert "nodeSelector" not in deployment["spec"]["template"]["spec"]
    assert yaml.safe_load(manifests["kustomization.yaml"])["resources"] == ["configmap.yaml", "deployment.yaml"]


def test_the_attacks_run_in_a_host_environment_against_another_tenant() -> None:
    plan = flux_checks.plan_attacks(ROOT / "tenants")
    assert plan is not None
    assert plan.namespace == "tenant-genomics-lab-dev"
    assert plan.other_namespace.startswith("tenant-") and "genomics-lab" not in plan.other_namespace
    assert {a.name for a in plan.attacks} == {"cluster-scoped", "other-namespace", "other-service-account"}


def _live(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    labels = {"tenancy.io/tenant": "t"}
    meta = {"name": GITOPS_NAME, "namespace": "tenant-t-dev", "labels": labels}
    api = "source.toolkit.fluxcd.io/v1" if kind == "GitRepository" else "kustomize.toolkit.fluxcd.io/v1"
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}


def test_an_attacks_objects_are_the_programs_with_another_url() -> None:
    source = _live("GitRepository", {"interval": "5m", "url": "https://x/a.git", "ref": {"tag": "v1"},
                                     "secretRef": {"name": "git-credentials"}})  # fmt: skip
    kustomization_spec = {
        "interval": "5m",
        "path": "./clusters/dev",
        "prune": True,
        "serviceAccountName": DEPLOYER_ACCOUNT,
        "targetNamespace": "tenant-t-dev",
        "sourceRef": {"kind": "GitRepository", "name": GITOPS_NAME},
        "patches": [{"patch": "p"}],
    }
    attack = flux_attacks.attacks("tenant-t-dev", "tenant-u-dev", DEPLOYER_ACCOUNT)[0]
    repository, kustomization = flux_attacks.attack_objects(
        attack, source, _live("Kustomization", kustomization_spec), "https://127.0.0.1:1/x.git"
    )
    assert repository["spec"] == {"interval": "5m", "url": "https://127.0.0.1:1/x.git", "ref": {"branch": "main"}}
    name = repository["metadata"]["name"]
    assert kustomization["spec"] == {
        **kustomization_spec,
        "sourceRef": {"kind": "GitRepository", "name": name},
        "path": "./",
    }
    # Not the tenant's: the lifecycle checks count objects labelled with the tenant.
    assert "tenancy.io/tenant" not in repository["metadata"]["labels"]


def test_the_other_namespace_attack_moves_its_object_after_the_target_namespace() -> None:
    attack = next(a for a in flux_attacks.attacks("ns", "other", "deployer") if a.name == "other-namespace")
    kustomization = yaml.safe_load(attack.files["kustomization.yaml"])
    (replacement,) = kustomization["replacements"]
    assert replacement["targets"][0]["fieldPaths"] == ["metadata.namespace"]
    assert yaml.safe_load(attack.files["escape.yaml"])["data"]["target"] == "other"
    assert "system:serviceaccount:ns:deployer" in attack.refusal


def test_every_attack_names_its_marker_among_what_must_not_land() -> None:
    for attack in flux_attacks.attacks("ns", "other", "deployer"):
        assert ("v1", "ConfigMap", "ns", flux_attacks.MARKER) in attack.must_not_land
        assert yaml.safe_load(attack.files["marker.yaml"])["metadata"]["name"] == flux_attacks.MARKER
