"""tenancy status: live objects parsed from fixtures that validate against the upstream CRDs
and the official schemas, read through fake client APIs injected at ClusterReader (no cluster).

tenant-acme-dev is healthy; tenant-acme-prod has a failed HelmRelease, a CloudNativePG Cluster
with one of two instances ready, a crash-looping pod and an ExternalSecret that cannot sync.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.k8s_schema import is_builtin, validate_builtin, validate_custom
from tests.support import EXAMPLE_TENANTS
from tools.operations import status
from tools.operations.status_model import environment_status, object_status, verdict
from tools.operations.status_read import CLIENT_MISSING, CUSTOM_KINDS, NO_CLUSTER, ClusterReader, NamespaceObjects
from tools.plan.harness import PROJECT_ROOT, ProgramRun

FIXTURES = Path(__file__).parent / "fixtures" / "status"


def live(namespace: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((FIXTURES / f"{namespace}.yaml").read_text(encoding="utf-8")) if doc]


@pytest.mark.parametrize("namespace", ["tenant-acme-dev", "tenant-acme-prod"])
def test_fixtures_are_what_the_api_server_would_return(namespace: str) -> None:
    for obj in live(namespace):
        if is_builtin(obj):
            validate_builtin(obj, "1.34")
        else:
            validate_custom(obj)


class FakeCore:
    """CoreV1Api's three calls over fixture objects, returning the client's own model classes."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]], failing: int | None = None) -> None:
        self.api_client = client.ApiClient()
        self.objects, self.failing = objects, failing
        self.calls: list[tuple[str, str]] = []

    def _model(self, body: Any, model: str) -> Any:
        return self.api_client.deserialize(json.dumps(body), model, "application/json")

    def _kind(self, namespace: str, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects.get(namespace, []) if o["kind"] == kind]

    def read_namespace(self, name: str) -> Any:
        self.calls.append(("read_namespace", name))
        if self.failing is not None:
            raise ApiException(status=self.failing, reason="Forbidden")
        found = self._kind(name, "Namespace")
        if not found:
            raise ApiException(status=404, reason="Not Found")
        return self._model(found[0], "V1Namespace")

    def list_namespaced_resource_quota(self, namespace: str) -> Any:
        self.calls.append(("list_namespaced_resource_quota", namespace))
        return self._model({"items": self._kind(namespace, "ResourceQuota")}, "V1ResourceQuotaList")

    def list_namespaced_pod(self, namespace: str) -> Any:
        self.calls.append(("list_namespaced_pod", namespace))
        return self._model({"items": self._kind(namespace, "Pod")}, "V1PodList")


class FakeCustom:
    """CustomObjectsApi.list_namespaced_custom_object over fixtures; `missing` CRDs answer 404."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]], missing: Collection[str] = ()) -> None:
        self.objects, self.missing = objects, missing
        self.calls: list[tuple[str, ...]] = []

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str) -> Any:
        self.calls.append((group, version, namespace, plural))
        if plural in self.missing:
            raise ApiException(status=404, reason="Not Found")
        (kind,) = [k for api, k, p in CUSTOM_KINDS if (api, p) == (f"{group}/{version}", plural)]
        return {"items": [o for o in self.objects.get(namespace, []) if o["kind"] == kind]}


def fixtures() -> dict[str, list[dict[str, Any]]]:
    return {ns: live(ns) for ns in ("tenant-acme-dev", "tenant-acme-prod")}


def test_the_reader_asks_for_each_kind_in_the_namespace_and_returns_api_json() -> None:
    core, custom = FakeCore(fixtures()), FakeCustom(fixtures(), missing={"mariadbs"})
    objects = ClusterReader(core, custom).read("tenant-acme-dev")
    assert core.calls == [
        (call, "tenant-acme-dev")
        for call in ("read_namespace", "list_namespaced_resource_quota", "list_namespaced_pod")
    ]
    assert custom.calls == [(*api.split("/"), "tenant-acme-dev", plural) for api, _, plural in CUSTOM_KINDS]
    assert objects.namespace is not None and objects.namespace["metadata"]["name"] == "tenant-acme-dev"
    # The client's models come back as the API's JSON: camelCase keys, timestamps as text.
    (ready,) = [
        c for p in objects.pods if p["metadata"]["name"] == "web-7d9f8b6c5-x2k4q" for c in p["status"]["conditions"]
    ]
    assert ready["lastTransitionTime"].startswith("2026-11-24T09:00:00")
    assert objects.quotas[0]["status"]["used"]["pods"] == "3"
    # A CRD that is not installed is absent, not an error; the others are listed.
    assert "k8s.mariadb.com/v1alpha1/MariaDB" not in objects.custom
    assert [o["metadata"]["name"] for o in objects.custom["helm.toolkit.fluxcd.io/v2/HelmRelease"]] == ["web"]


def test_a_missing_namespace_is_reported_and_nothing_else_is_asked() -> None:
    core, custom = FakeCore({}), FakeCustom({})
    assert ClusterReader(core, custom).read("tenant-gone-dev") == NamespaceObjects(None, [], [], {})
    assert core.calls == [("read_namespace", "tenant-gone-dev")] and custom.calls == []


def test_a_refused_request_is_not_mistaken_for_absence() -> None:
    with pytest.raises(ApiException):
        ClusterReader(FakeCore(fixtures(), failing=403), FakeCustom({})).read("tenant-acme-dev")


def _read(namespace: str) -> NamespaceObjects:
    return ClusterReader(FakeCore(fixtures()), FakeCustom(fixtures())).read(namespace)


def test_flux_databases_and_external_secrets_are_parsed() -> None:
    dev = {o["kind"]: o for o in live("tenant-acme-dev")}
    release = object_status("HelmRelease", dev["HelmRelease"])
    assert (release.ready, release.detail, release.last) == (True, "4.13.0-rc.1", "2026-11-24T09:01:00Z")
    source = object_status("OCIRepository", dev["OCIRepository"])
    assert source.ready and source.detail.startswith("4.13.0-rc.1@sha256:")
    assert object_status("Cluster", dev["Cluster"]).detail == "Cluster in healthy state (2/2 ready)"
    prod = {o["kind"]: o for o in live("tenant-acme-prod")}
    failed = object_status("HelmRelease", prod["HelmRelease"])
    assert (failed.ready, failed.detail) == (False, "4.12.0")
    assert not object_status("Cluster", prod["Cluster"]).ready
    secret = object_status("ExternalSecret", prod["ExternalSecret"])
    assert (secret.ready, secret.detail) == (False, "refreshed 2026-11-24T09:00:00Z")
    assert object_status("MariaDB", prod["MariaDB"]).ready


@pytest.fixture(scope="module")
def dev_run(dev_plan: ProgramRun) -> ProgramRun:
    return dev_plan


def test_a_healthy_environment_has_no_problems(dev_run: ProgramRun) -> None:
    env = environment_status(
        "dev",
        "tenant-acme-dev",
        _read("tenant-acme-dev"),
        status.expected_objects(dev_run, "tenant-acme-dev"),
        suspended=False,
    )
    assert env.problems == [] and env.pods_not_ready == [] and env.running_pods == 2
    assert env.quota["pods"] == {"used": "3", "hard": "15"}
    assert env.last_reconcile == "2026-11-24T09:01:00Z"
    assert verdict("active", [env]) == ("Ready", True)


def test_every_unhealthy_part_is_named(dev_run: ProgramRun) -> None:
    env = environment_status(
        "prod",
        "tenant-acme-prod",
        _read("tenant-acme-prod"),
        status.expected_objects(dev_run, "tenant-acme-prod"),
        suspended=False,
    )
    text = "\n".join(env.problems)
    for part in (
        "HelmRelease web is not Ready",
        "Cluster pg-orders is not Ready",
        "ExternalSecret payment-api-key",
        "web-5c6d7e8f9-abcde",
    ):
        assert part in text
    assert verdict("active", [env]) == ("NotReady", False)
    # What the program registers but the cluster lacks is a problem too.
    partial = _read("tenant-acme-prod")
    partial.custom["k8s.mariadb.com/v1alpha1/MariaDB"] = []
    missing = environment_status(
        "prod", "tenant-acme-prod", partial, status.expected_objects(dev_run, "tenant-acme-prod"), suspended=False
    )
    assert "MariaDB mysql-legacy-billing is missing" in missing.problems


def _reader(objects: dict[str, list[dict[str, Any]]]) -> ClusterReader:
    return ClusterReader(FakeCore(objects), FakeCustom(objects))


def test_the_command_prints_a_verdict_per_tenant_and_fails_when_one_is_not_ready(
    capsys: pytest.CaptureFixture[str],
) -> None:
    healthy = fixtures()
    healthy["tenant-acme-prod"] = [
        json.loads(json.dumps(o).replace("tenant-acme-dev", "tenant-acme-prod")) for o in live("tenant-acme-dev")
    ] + [o for o in live("tenant-acme-prod") if o["kind"] == "MariaDB"]
    assert status.main(["--stack", "dev", "--tenant", "acme"], reader=_reader(healthy)) == 0
    out = capsys.readouterr().out
    assert out.startswith("acme (active): Ready\n") and "HelmRelease web: Ready, 4.13.0-rc.1" in out
    assert status.main(["--stack", "dev", "--tenant", "acme", "--json"], reader=_reader(fixtures())) == 1
    (acme,) = json.loads(capsys.readouterr().out)
    assert acme["verdict"] == "NotReady" and any("HelmRelease web is not Ready" in p for p in acme["problems"])
    assert [e["namespace"] for e in acme["environments"]] == ["tenant-acme-dev", "tenant-acme-prod"]


def test_a_suspended_tenant_is_suspended_only_while_its_flux_objects_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "tenants"
    shutil.copytree(EXAMPLE_TENANTS, directory)
    acme = yaml.safe_load((directory / "acme.yaml").read_text(encoding="utf-8"))
    (directory / "acme.yaml").write_text(yaml.safe_dump({**acme, "lifecycle": "suspended"}), encoding="utf-8")
    objects = copy.deepcopy(fixtures())
    for obj in objects["tenant-acme-dev"] + objects["tenant-acme-prod"]:
        if obj["apiVersion"].split("/")[0].endswith("fluxcd.io"):
            obj["spec"]["suspend"] = True
    args = ["--stack", "dev", "--tenant", "acme", "--tenants-dir", str(directory)]
    assert status.main(args, reader=_reader(objects)) == 0
    assert capsys.readouterr().out.startswith("acme (suspended): Suspended")
    (source,) = [o for o in objects["tenant-acme-prod"] if o["kind"] == "OCIRepository"]
    del source["spec"]["suspend"]
    assert status.main(args, reader=_reader(objects)) == 1
    assert "OCIRepository web is not suspended" in capsys.readouterr().out


def test_help_and_an_unknown_tenant(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        status.main(["--help"])
    assert exit_info.value.code == 0 and "--context" in capsys.readouterr().out
    assert status.main(["--stack", "dev", "--tenant", "nobody"], reader=_reader({})) == 2


def test_a_cluster_that_refuses_the_reads_is_reported_with_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    refusing = ClusterReader(FakeCore(fixtures(), failing=403), FakeCustom(fixtures()))
    assert status.main(["--stack", "dev", "--tenant", "acme"], reader=refusing) == 2
    assert "cannot read the cluster (ApiException)" in capsys.readouterr().err


def test_without_the_kubernetes_client_the_command_says_what_to_install() -> None:
    # The client is in the `ops` group, not the runtime set: a machine with requirements.txt only.
    blocked = (
        "import runpy, sys; sys.modules['kubernetes'] = None; "
        "sys.argv = ['tools.operations.status', '--stack', 'dev']; "
    )
    result = subprocess.run(
        [sys.executable, "-c", blocked + "runpy.run_module('tools.operations.status', run_name='__main__')"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(CLIENT_MISSING) and "Traceback" not in result.stderr
    assert "pip install -r requirements-ops.txt" in line


def test_without_a_kubeconfig_the_command_says_how_to_point_it_at_a_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The real client, no reader injected: a KUBECONFIG that names no file, as on a fresh machine.
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert status.main(["--stack", "dev", "--tenant", "acme"]) == 2
    err = capsys.readouterr().err
    assert "cannot read the cluster (ConfigException)" in err
    assert NO_CLUSTER in err and "KUBECONFIG" in NO_CLUSTER and "--context" in NO_CLUSTER
