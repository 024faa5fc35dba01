"""Platform installs (`tenancy:installs`): pinned charts installed first, and what waits for them.

The dev stack must converge on a bare kind cluster: the database operators are Helm releases at
exact versions, in the namespaces and with the pod labels the network model opens to them, and
every tenant, the shared database instances and the placeholder shared secrets wait for them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from components.clouds.local.network import NETWORK
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.support import plan
from tools.plan.harness import PROJECT_ROOT, ProgramRun, RecordingMonitor, new_monitor, run_program, stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"


def dev_installs() -> dict[str, Any]:
    config = yaml.safe_load((PROJECT_ROOT / "Pulumi.dev.yaml").read_text(encoding="utf-8"))["config"]
    installs: dict[str, Any] = config["tenancy:installs"]
    return installs


def releases(run: ProgramRun) -> dict[str, Any]:
    return {r.name: r for r in run.of_type(RELEASE) if r.name.startswith("platform-installs-")}


def test_dev_installs_every_chart_pinned_from_its_repository(dev_plan: ProgramRun) -> None:
    charts = dev_installs()["charts"]
    found = releases(dev_plan)
    assert set(found) == {f"platform-installs-{name}" for name in charts}
    for name, chart in charts.items():
        inputs = found[f"platform-installs-{name}"].inputs
        assert inputs["version"] == chart["version"] and inputs["namespace"] == chart["namespace"]
        if chart["repository"].startswith("oci://"):
            assert inputs["chart"] == f"{chart['repository']}/{chart['chart']}" and "repositoryOpts" not in inputs
        else:
            assert inputs["chart"] == chart["chart"] and inputs["repositoryOpts"] == {"repo": chart["repository"]}
        # Awaited, rolled back on failure, never uninstalled by Pulumi.
        assert inputs["atomic"] is True and "skipAwait" not in inputs
        assert found[f"platform-installs-{name}"].retain_on_delete


def test_every_helm_release_of_the_example_stacks_is_pinned(example_plan: ProgramRun) -> None:
    releases = example_plan.of_type(RELEASE)
    assert releases or example_plan.stack != "dev"
    for release in releases:
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", release.inputs.get("version", "")), release.name


def test_the_operator_crds_come_before_the_operator(dev_plan: ProgramRun) -> None:
    found = releases(dev_plan)
    assert (
        found["platform-installs-mariadb-operator-crds"].urn in found["platform-installs-mariadb-operator"].dependencies
    )
    assert found["platform-installs-cloudnative-pg"].dependencies == []


def test_operators_run_where_the_network_model_lets_them_reach_tenant_databases() -> None:
    charts = dev_installs()["charts"]
    for operator, access in NETWORK.operators.items():
        # The chart's release name is its app name: the pods carry app.kubernetes.io/name=<release>.
        assert access.pod_labels == {"app.kubernetes.io/name": operator}
        assert charts[operator]["namespace"] == access.namespace


def test_tenants_and_shared_data_wait_for_the_installs(dev_plan: ProgramRun) -> None:
    urns = {r.urn for r in releases(dev_plan).values()}
    tenants = dev_plan.of_type("tenancy:index:Tenant")
    assert tenants and all(urns <= set(t.dependencies) for t in tenants)
    [placeholder] = [r for r in dev_plan.resources if r.name == "shared-secret-registry-pull-placeholder"]
    assert urns <= set(placeholder.dependencies)


def test_no_installs_no_releases_and_nothing_waits() -> None:
    # The edge installs charts of its own (tests/edge/); without it either, nothing is installed.
    edge = '{"gateway": {"enabled": false}, "tls": {"enabled": false}}'
    run = plan("dev", installs="{}", edge=edge)
    assert releases(run) == {} and not [r for r in run.of_type(RELEASE) if r.name.startswith("platform-edge")]
    assert all(t.dependencies == [] for t in run.of_type("tenancy:index:Tenant"))


def test_placeholder_is_an_empty_registry_login_whose_content_is_the_platform_teams(dev_plan: ProgramRun) -> None:
    [placeholder] = [r for r in dev_plan.resources if r.name == "shared-secret-registry-pull-placeholder"]
    assert placeholder.inputs["metadata"]["namespace"] == "tenancy-shared"
    assert placeholder.inputs["metadata"]["name"] == "registry-pull"
    assert placeholder.inputs["type"] == "kubernetes.io/dockerconfigjson"
    assert placeholder.ignore_changes == ["data", "stringData"]


class _ReadIds(RecordingMonitor):
    """Also records the id every read asks for."""

    read_ids: dict[str, str]

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        self.read_ids[request.name] = request.id
        return super().ReadResource(request)


def read_ids(**overrides: str) -> dict[str, str]:
    base = new_monitor()
    monitor = _ReadIds(base.mocks)
    monitor.read_ids = {}
    config, secret_keys = stack_config("dev", {f"tenancy:{k}": v for k, v in overrides.items()})
    run_program("dev", config, secret_keys, monitor=monitor)
    return monitor.read_ids


def test_the_shared_source_is_read_by_the_placeholders_id_or_by_name() -> None:
    # With placeholders the read takes the created Secret's id (unknown before it exists, so a first
    # preview skips the read); without them the platform team's Secret is read by name.
    assert read_ids()["shared-secret-registry-pull"] != "tenancy-shared/registry-pull"
    without = json.dumps({**dev_installs(), "sharedSecretPlaceholders": False})
    assert read_ids(installs=without)["shared-secret-registry-pull"] == "tenancy-shared/registry-pull"


@pytest.mark.parametrize(
    ("installs", "field", "message"),
    [
        (
            {"charts": {"x": {"repository": "https://c.example", "chart": "x", "version": "^1.0", "namespace": "x"}}},
            "tenancy:installs.charts.x.version",
            "must be a version such as '2.17.2' or 'v1.21.1'; got '^1.0'",
        ),
        (
            {"charts": {"x": {"repository": "http://c.example", "chart": "x", "version": "1.0.0", "namespace": "x"}}},
            "tenancy:installs.charts.x.repository",
            "must be an https:// or oci:// URL without a trailing '/'",
        ),
        (
            {
                "charts": {
                    "x": {
                        "repository": "https://c.example",
                        "chart": "x",
                        "version": "1.0.0",
                        "namespace": "x",
                        "after": ["y"],
                    }
                }
            },
            "tenancy:installs",
            "charts.x.after names charts not in installs.charts: y",
        ),
    ],
)
def test_bad_installs_name_the_key(installs: dict[str, Any], field: str, message: str) -> None:
    config = {"tenancy:domainSuffix": "tenants.example.com", "tenancy:installs": json.dumps(installs)}
    with pytest.raises(ConfigurationError) as raised:
        parse_settings(config, "Pulumi.test.yaml")
    assert any(p.field == field and message in p.message for p in raised.value.problems), raised.value.problems


def test_a_cycle_in_the_install_order_is_refused() -> None:
    chart = {"repository": "https://c.example", "chart": "x", "version": "1.0.0", "namespace": "x"}
    installs = {"charts": {"a": {**chart, "after": ["b"]}, "b": {**chart, "after": ["a"]}}}
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({"tenancy:domainSuffix": "t.example.com", "tenancy:installs": json.dumps(installs)}, "P.yaml")
    assert "cycle among: a, b" in str(raised.value)


def test_installs_managed_elsewhere_register_no_release_and_keep_the_engine_rules() -> None:
    # `installs.managedElsewhere`: every chart (installs.charts, the edge's controller and
    # cert-manager, Flux) is someone else's; the platform renders the rest, and what uses their
    # CRDs relies on the documented prerequisites (docs/first-run.md), as the real run does.
    from tests.engine.mixes import disabled_providers, records
    from tools.plan.engine_rules import check_plan

    managed = {**dev_installs(), "managedElsewhere": True}
    run = plan("dev", installs=json.dumps(managed))
    assert run.of_type(RELEASE) == []
    assert run.of_type("kubernetes:postgresql.cnpg.io/v1:Cluster"), "tenants' databases are still rendered"
    assert check_plan(records(run), disabled_providers("dev"), managed_elsewhere=True) == []
