"""What a virtual-cluster environment renders, checked with real engines: the chart values against
the chart's own values schema, host objects against the official schemas and the Flux CRDs, and the
bindings applied inside the virtual cluster against the official schema too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from components.model.catalog.stack_config import parse_settings
from components.model.tenant_file.isolation import VirtualClusterChart
from tests.charts.pinned import chart_data
from tests.k8s_schema import validate_builtin, validate_custom
from tests.support import objects_of_kind
from tests.vcluster.helpers import HARD, HARD_PROD, hard_tenant, run_tenants, soft_tenant
from tools.plan.harness import ProgramRun, stack_config

_DATA = chart_data("vcluster", VirtualClusterChart().version)
assert _DATA is not None and _DATA.schema is not None, "no vCluster chart data for the pinned version"
_VALUES = jsonschema.Draft202012Validator(_DATA.schema)
_EXAMPLE = "tenant-operator-lab-dev"


def _release(run: ProgramRun, namespace: str) -> dict[str, Any]:
    [release] = [r for r in objects_of_kind(run, "HelmRelease", namespace) if r["metadata"]["name"] == "vcluster"]
    return release


def test_the_example_tenant_plans_its_virtual_clusters_on_every_stack(any_stack_plan: ProgramRun) -> None:
    """tenants/operator-lab.yaml plans on dev, prod and prod-aws with its virtual clusters, access and GitOps target."""
    run = any_stack_plan
    for env in ("dev", "prod"):
        namespace = f"tenant-operator-lab-{env}"
        release = _release(run, namespace)
        assert release["spec"]["chart"]["spec"]["version"] == "0.20.0"
        [kustomization] = objects_of_kind(run, "Kustomization", namespace)
        assert kustomization["spec"]["kubeConfig"] == {"secretRef": {"name": "vcluster-kubeconfig", "key": "config"}}
        assert "targetNamespace" not in kustomization["spec"]
    summary = run.outputs["tenants"]["operator-lab"]["virtualClusters"]
    assert summary["dev"] == {
        "kubeconfigSecret": "vcluster-kubeconfig",
        "chartVersion": "0.20.0",
        "release": "vcluster",
        "storage": "5Gi",
        "storageClass": "tenancy-standard",
    }


def test_chart_values_pass_the_charts_values_schema(any_stack_plan: ProgramRun) -> None:
    releases = [r for r in objects_of_kind(any_stack_plan, "HelmRelease") if r["metadata"]["name"] == "vcluster"]
    assert len(releases) == 2
    for release in releases:
        _VALUES.validate(release["spec"]["values"])


def test_synced_pods_keep_neither_label_names_nor_account_names(any_stack_plan: ProgramRun) -> None:
    # tenancy-vcluster-selector reserves the control plane's labels and tenancy-syncer-account refuses pods
    # running as `deployer`; neither refuses the syncer's pods only because vCluster v0.20.0 hashes a virtual
    # pod's label keys (util/translate/single_namespace.go: only `experimental.syncSettings.syncLabels` keep
    # their names; multi-namespace mode off) and runs every synced pod as the workload account
    # (pods/translate/translator.go; a virtual account's name only with `sync.toHost.serviceAccounts`).
    for release in (r for r in objects_of_kind(any_stack_plan, "HelmRelease") if r["metadata"]["name"] == "vcluster"):
        values = release["spec"]["values"]
        assert "syncSettings" not in values.get("experimental", {})
        assert not values.get("experimental", {}).get("multiNamespaceMode", {}).get("enabled", False)
        assert values["sync"]["toHost"]["serviceAccounts"] == {"enabled": False}


def test_the_values_schema_rejects_what_the_chart_does_not_know() -> None:
    """Guard against a schema that accepts anything: unknown keys and wrong types fail."""
    with pytest.raises(jsonschema.ValidationError):
        _VALUES.validate({"sync": {"toHost": {"pods": {"enforceNodeSelector": True}}}})
    with pytest.raises(jsonschema.ValidationError):
        _VALUES.validate({"controlPlane": {"statefulSet": {"scheduling": {"tolerations": "all"}}}})


def test_host_objects_pass_the_official_schemas(tmp_path: Path) -> None:
    for stack in ("dev", "prod", "prod-aws"):
        run = run_tenants(tmp_path / stack, hard_tenant(), stack=stack)
        version = parse_settings(stack_config(stack)[0], f"Pulumi.{stack}.yaml").kubernetes_version
        for namespace in (HARD, HARD_PROD):
            accounts = {"vcluster", "vc-workload-vcluster", "vcluster-installer"}
            objects = [
                o for o in objects_of_kind(run, "ServiceAccount", namespace) if o["metadata"]["name"] in accounts
            ]
            assert len(objects) == len(accounts)
            objects += objects_of_kind(run, "RoleBinding", namespace) + objects_of_kind(run, "NetworkPolicy", namespace)
            for obj in objects:
                validate_builtin(obj, version)
            for kind in ("HelmRelease", "HelmRepository", "Kustomization", "GitRepository"):
                for obj in objects_of_kind(run, kind, namespace):
                    validate_custom(obj)
        for role in objects_of_kind(run, "ClusterRole"):
            validate_builtin(role, version)


def _inside(release: dict[str, Any]) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(release["spec"]["values"]["experimental"]["deploy"]["vcluster"]["manifests"]))


def test_bindings_inside_the_virtual_cluster(dev_plan: ProgramRun) -> None:
    """Admins are cluster-admin inside in dev; in prod humans view and only GitOps (the deployer) writes."""
    dev = {b["metadata"]["name"]: b for b in _inside(_release(dev_plan, _EXAMPLE))}
    prod = {b["metadata"]["name"]: b for b in _inside(_release(dev_plan, "tenant-operator-lab-prod"))}
    for binding in [*dev.values(), *prod.values()]:
        validate_builtin(binding, "1.36")
    assert dev["tenancy-admin"]["subjects"][0]["name"] == "idp:operator-lab-admins"
    assert dev["tenancy-admin"]["roleRef"]["name"] == "cluster-admin"
    assert "tenancy-admin" not in prod
    assert {s["name"] for s in prod["tenancy-viewer"]["subjects"]} == {
        "idp:operator-lab-admins",
        "idp:operator-lab-members",
    }
    assert prod["tenancy-deployer"]["subjects"] == [
        {
            "kind": "User",
            "apiGroup": "rbac.authorization.k8s.io",
            "name": "system:serviceaccount:tenant-operator-lab-prod:deployer",
        }
    ]


def test_the_kubeconfig_never_passes_through_pulumi(dev_plan: ProgramRun) -> None:
    """vCluster writes the kubeconfig into the namespace; the stack only knows the Secret's name."""
    assert not [
        s for s in objects_of_kind(dev_plan, "Secret", _EXAMPLE) if s["metadata"]["name"] == "vcluster-kubeconfig"
    ]
    assert "certificate-authority-data" not in json.dumps(dev_plan.outputs)
    values = _release(dev_plan, _EXAMPLE)["spec"]["values"]
    assert values["exportKubeConfig"]["secret"] == {"name": "vcluster-kubeconfig"}
    assert values["exportKubeConfig"]["server"] == f"https://vcluster.{_EXAMPLE}.svc:443"


def test_the_exported_server_name_is_in_the_serving_certificate(dev_plan: ProgramRun) -> None:
    """vCluster v0.20.0 signs its serving certificate for `vcluster`, `vcluster.<namespace>`, the
    ClusterIP, localhost and `controlPlane.proxy.extraSANs` (pkg/certs/ of loft-sh/vcluster): the
    kubeconfig Flux and tenant pods use names `vcluster.<namespace>.svc`, so that name must be an
    extra SAN or every TLS handshake to the virtual cluster fails."""
    values = _release(dev_plan, _EXAMPLE)["spec"]["values"]
    host = values["exportKubeConfig"]["server"].removeprefix("https://").rsplit(":", 1)[0]
    built_in = {"vcluster", f"vcluster.{_EXAMPLE}", "localhost", "127.0.0.1"}
    assert host in built_in | set(values["controlPlane"]["proxy"]["extraSANs"])


def test_host_guard_rails_are_those_of_a_soft_tenant(tmp_path: Path) -> None:
    """Quota, limits, isolation policy and Pod Security labels do not change with isolation."""
    run = run_tenants(tmp_path, hard_tenant(), soft_tenant())

    def rails(namespace: str) -> list[Any]:
        quota = objects_of_kind(run, "ResourceQuota", namespace)[0]["spec"]
        limits = objects_of_kind(run, "LimitRange", namespace)[0]["spec"]
        [isolation] = [
            p for p in objects_of_kind(run, "NetworkPolicy", namespace) if p["metadata"]["name"] == "tenancy-isolation"
        ]
        [ns] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == namespace]
        labels = {
            k: v for k, v in ns["metadata"]["labels"].items() if k.startswith(("pod-security", "tenancy.io/pool"))
        }
        return [quota, limits, isolation["spec"], labels]

    assert rails(HARD) == rails("tenant-soft-dev")


def test_pods_of_the_control_plane_and_synced_pods_are_pinned_to_the_pool(dev_plan: ProgramRun) -> None:
    values = _release(dev_plan, _EXAMPLE)["spec"]["values"]
    scheduling = values["controlPlane"]["statefulSet"]["scheduling"]
    assert scheduling["nodeSelector"] == {"tenancy.io/pool": "research"}
    assert scheduling["tolerations"] == [
        {"key": "tenancy.io/pool", "operator": "Equal", "value": "research", "effect": "NoSchedule"}
    ]
    assert values["sync"]["fromHost"]["nodes"]["selector"]["labels"] == {"tenancy.io/pool": "research"}
    assert values["sync"]["toHost"]["pods"]["enforceTolerations"] == ["tenancy.io/pool=research:NoSchedule"]
    # Fake nodes and no chart RBAC: the syncer holds no ClusterRole on the host.
    assert values["sync"]["fromHost"]["nodes"]["enabled"] is False
    assert values["rbac"] == {"role": {"enabled": False}, "clusterRole": {"enabled": False}}


def test_a_suspended_tenants_virtual_cluster_stops_reconciling(tmp_path: Path) -> None:
    """Like every Flux object of a suspended tenant, the chart's source and release are suspended;
    an active tenant's carry no `suspend` at all."""
    suspended = run_tenants(tmp_path / "s", hard_tenant(lifecycle="suspended"))
    active = run_tenants(tmp_path / "a", hard_tenant())
    for kind in ("HelmRelease", "HelmRepository"):
        stopped = [o for o in objects_of_kind(suspended, kind) if o["metadata"]["name"].startswith("vcluster")]
        running = [o for o in objects_of_kind(active, kind) if o["metadata"]["name"].startswith("vcluster")]
        assert stopped and len(stopped) == len(running)
        for obj in stopped:
            assert obj["spec"]["suspend"] is True
            validate_custom(obj)
        assert all("suspend" not in obj["spec"] for obj in running)
