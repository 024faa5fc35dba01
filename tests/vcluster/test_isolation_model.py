"""The `isolation` field and its checks: every bad input names the file and field, nothing registers,
and a switch back from a virtual cluster to a namespace is refused unless acknowledged."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.model.core.errors import ConfigurationError
from components.model.tenant_file.spec import TenantSpec
from tests.admission.layers import stack_policy
from tests.support import tenant_document
from tests.vcluster.helpers import hard_tenant, previous_outputs, run_tenants, stack_virtual_clusters
from tools.plan.harness import ProgramRun

_LAST_DEPLOYMENT = {"tenants": {"hard": {"virtualClusters": {"dev": {"release": "vcluster"}}}}}


def _problems(error: pytest.ExceptionInfo[ConfigurationError]) -> list[tuple[str, str]]:
    return [(p.file.rsplit("/", 1)[-1], p.field) for p in error.value.problems]


def test_isolation_defaults_to_namespace_and_takes_a_mode_per_environment() -> None:
    plain = TenantSpec.model_validate(tenant_document("plain"))
    assert [plain.isolation_in(env) for env in plain.environments] == ["namespace", "namespace"]
    mixed = TenantSpec.model_validate(tenant_document("mixed", isolation={"dev": "virtual-cluster"}))
    assert (mixed.isolation_in("dev"), mixed.isolation_in("prod")) == ("virtual-cluster", "namespace")


def test_an_unknown_mode_is_refused_with_its_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path, hard_tenant(isolation="cluster"))
    assert ("hard.yaml", "isolation") in {(f, w.split(".")[0]) for f, w in _problems(raised)}


def test_environments_named_under_isolation_and_discard_state_must_exist(tmp_path: Path) -> None:
    document = hard_tenant(isolation={"staging": "virtual-cluster"}, virtualCluster={"discardState": ["qa"]})
    # `qa` is no environment of the stack either (an acknowledgement may name one the file dropped).
    with pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path, document)
    assert {("hard.yaml", "isolation.staging"), ("hard.yaml", "virtualCluster.discardState.0")} <= set(
        _problems(raised)
    )


def test_an_app_may_not_take_the_virtual_clusters_release_name(tmp_path: Path) -> None:
    app = {"name": "vcluster", "image": {"repository": "ghcr.io/example/x", "tag": "1.0.0", "port": 8080}}
    with pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path, hard_tenant(apps=[app]))
    assert ("hard.yaml", "apps.0.name") in _problems(raised)


def test_a_stack_without_the_api_server_address_refuses_virtual_clusters(tmp_path: Path) -> None:
    """prod (GKE) sets tenancy:virtualClusters.apiServer; without it the syncer could not reach the host."""
    with pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path, hard_tenant(), stack="prod", virtualClusters="{}")
    assert ("hard.yaml", "isolation") in _problems(raised)
    assert "virtualClusters.apiServer" in str(raised.value)


def test_switching_back_without_acknowledgement_is_refused_naming_file_and_field(tmp_path: Path) -> None:
    with previous_outputs("dev", _LAST_DEPLOYMENT), pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path, hard_tenant(isolation={"prod": "virtual-cluster"}))
    assert _problems(raised) == [("hard.yaml", "isolation.dev")]
    assert "virtualCluster.discardState" in str(raised.value)
    # The single-mode form names the field itself.
    with previous_outputs("dev", _LAST_DEPLOYMENT), pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path, hard_tenant(isolation="namespace"))
    assert _problems(raised) == [("hard.yaml", "isolation")]


def test_switching_back_with_acknowledgement_removes_the_virtual_cluster(tmp_path: Path) -> None:
    document = hard_tenant(isolation="namespace", virtualCluster={"discardState": ["dev"]})
    with previous_outputs("dev", _LAST_DEPLOYMENT):
        run = run_tenants(tmp_path, document)
    assert not [r for r in run.resources if r.name.endswith("-vcluster")]
    assert "virtualClusters" not in run.outputs["tenants"]["hard"]
    # Only the installer's account and binding stay while the acknowledgement does (issue 43):
    # helm-controller uninstalls the release as the installer after Pulumi has deleted it.
    left = sorted(r.name for r in run.resources if r.name.startswith("hard-") and "-vcluster" in r.name)
    assert left == ["hard-dev-vcluster-installer", "hard-dev-vcluster-installer-account"], left
    assert any(r.name == "virtual-cluster-roles-installer" for r in run.resources)
    # Dropping the acknowledgement afterwards removes them too.
    done = hard_tenant(isolation="namespace")
    with previous_outputs("dev", {"tenants": {"hard": {}}}):
        after = run_tenants(tmp_path / "after", done)
    assert not [r for r in after.resources if r.name.startswith("hard-") and "-vcluster" in r.name]


def test_an_acknowledged_virtual_cluster_is_registered_unprotected_first(tmp_path: Path) -> None:
    """The two steps of a switch back: acknowledge (unprotect), then switch (delete)."""
    protected = run_tenants(tmp_path / "a", hard_tenant())
    acknowledged = run_tenants(tmp_path / "b", hard_tenant(virtualCluster={"discardState": ["dev"]}))

    def guard(run_: ProgramRun, env: str) -> bool:
        [release] = [r for r in run_.resources if r.name == f"hard-{env}-vcluster"]
        return release.protect

    assert (guard(protected, "dev"), guard(protected, "prod")) == (True, True)
    assert (guard(acknowledged, "dev"), guard(acknowledged, "prod")) == (False, True)


def test_keeping_the_virtual_cluster_or_a_first_deployment_is_not_refused(tmp_path: Path) -> None:
    with previous_outputs("dev", _LAST_DEPLOYMENT):
        run = run_tenants(tmp_path, hard_tenant())
    assert sorted(run.outputs["tenants"]["hard"]["virtualClusters"]) == ["dev", "prod"]


def test_an_image_allow_list_needs_the_control_planes_registry_on_it(tmp_path: Path) -> None:
    """Otherwise the host's workload rule would refuse the control plane itself."""
    policy = stack_policy("dev", allowedRegistries=["ghcr.io/example"])
    with pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path / "a", hard_tenant(), policy=policy)
    assert ("hard.yaml", "isolation") in _problems(raised)
    assert "imageRegistry" in str(raised.value)
    elsewhere = stack_virtual_clusters("dev", imageRegistry="quay.io/mirror")
    with pytest.raises(ConfigurationError):
        run_tenants(tmp_path / "b", hard_tenant(), policy=policy, virtualClusters=elsewhere)
    mirror = stack_virtual_clusters("dev", imageRegistry="ghcr.io/example/vcluster")
    run = run_tenants(tmp_path / "c", hard_tenant(), policy=policy, virtualClusters=mirror)
    assert [r for r in run.resources if r.name == "hard-dev-vcluster"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"environments": ["prod"]}, "environments"),
        ({"lifecycle": "decommissioned", "decommissionedOn": "2026-11-01"}, "lifecycle"),
    ],
)
def test_removing_the_environment_or_the_tenant_needs_the_same_acknowledgement(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    """Both delete the namespace, and the virtual cluster's state with it."""
    with previous_outputs("dev", _LAST_DEPLOYMENT), pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path / "refused", hard_tenant(**change))
    assert _problems(raised) == [("hard.yaml", field)]
    # The acknowledgement may name an environment the file no longer has.
    with previous_outputs("dev", _LAST_DEPLOYMENT):
        run_tenants(tmp_path / "accepted", hard_tenant(**change, virtualCluster={"discardState": ["dev"]}))


def test_the_control_planes_volume_is_in_the_outputs(tmp_path: Path) -> None:
    run = run_tenants(tmp_path, hard_tenant())
    made = run.outputs["tenants"]["hard"]["virtualClusters"]["dev"]
    assert (made["storage"], made["storageClass"]) == ("5Gi", "tenancy-standard")


def test_the_control_planes_volume_cannot_change_through_the_stack(tmp_path: Path) -> None:
    """The chart puts `storage` in the StatefulSet's volume claim template, which the API server
    refuses to change: every virtual cluster's upgrade would fail after `up` succeeded."""
    made = {"tenants": {"hard": {"virtualClusters": {"dev": {"release": "vcluster", "storage": "5Gi"}}}}}
    bigger = stack_virtual_clusters("dev", storage="10Gi")
    with previous_outputs("dev", made), pytest.raises(ConfigurationError) as raised:
        run_tenants(tmp_path / "a", hard_tenant(), virtualClusters=bigger)
    assert _problems(raised) == [("Pulumi.dev.yaml", "tenancy:virtualClusters.storage")]
    message = str(raised.value)
    assert "hard (dev) were made with a volume size of '5Gi', not '10Gi'" in message
    assert "Growing the control plane's volume" in message
    # The twins: the size it was made with, a first deployment, an older deployment without the key.
    with previous_outputs("dev", made):
        run_tenants(tmp_path / "b", hard_tenant())
    run_tenants(tmp_path / "c", hard_tenant(), virtualClusters=bigger)
    with previous_outputs("dev", _LAST_DEPLOYMENT):
        run_tenants(tmp_path / "d", hard_tenant(), virtualClusters=bigger)
