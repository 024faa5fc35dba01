"""What the real run seeds a fresh control plane with (tools/realrun/seed.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.model.core.labels import NODE_POOL_KEY
from tests.k8s_schema import CRDS_DIR, require_crds
from tools.generators.kind_config import dev_settings
from tools.realrun.seed import CHART_CRD_GROUPS, chart_names, crd_documents, node_manifests


def test_every_chart_of_the_dev_stack_has_its_crd_groups_listed() -> None:
    names = chart_names(dev_settings())
    assert names, "the dev stack installs charts"
    assert set(names) <= set(CHART_CRD_GROUPS), sorted(set(names) - set(CHART_CRD_GROUPS))


def test_the_crds_come_from_the_shared_files_by_chart() -> None:
    require_crds()
    groups = {d["spec"]["group"] for d in crd_documents(["cloudnative-pg", "flux2"], CRDS_DIR)}
    assert groups == {
        "postgresql.cnpg.io",
        "source.toolkit.fluxcd.io",
        "kustomize.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
    }


def test_a_chart_whose_crds_are_missing_is_named(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"postgresql\.cnpg\.io"):
        crd_documents(["cloudnative-pg"], tmp_path)


def test_nodes_are_labelled_and_tainted_per_pool_as_kind_has_them() -> None:
    settings = dev_settings()
    nodes = {n["metadata"]["name"]: n for n in node_manifests(settings)}
    assert nodes["platform-worker"]["spec"]["taints"] == []
    for pool in settings.node_pools:
        node = nodes[f"pool-{pool}"]
        assert node["metadata"]["labels"][NODE_POOL_KEY] == pool
        assert node["spec"]["taints"] == [{"key": NODE_POOL_KEY, "value": pool, "effect": "NoSchedule"}]
        assert node["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake"}
