"""kind/cluster.yaml stays in step with the dev stack: the pools' nodes and the Kubernetes version.

A pool's tenants are held to nodes labelled and tainted for it (the admission bundle and the
MutatingAdmissionPolicy inject and check the pool), so a kind cluster whose nodes lack them leaves
every pod of those tenants Pending; and a node older than `tenancy:kubernetesVersion` lacks the
admission APIs the bundle registers.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.catalog.stack_config import parse_settings
from components.model.core.labels import pool_node_labels, pool_taint
from components.model.settings.stack import StackSettings
from tools.generators import kind_config as kind_config_tool
from tools.plan.harness import PROJECT_ROOT, stack_config

KIND_CONFIG = PROJECT_ROOT / "kind" / "cluster.yaml"
NODE_IMAGE = re.compile(r"^kindest/node:v(?P<minor>\d+\.\d+)\.\d+@sha256:[0-9a-f]{64}$")


def kind_config() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(KIND_CONFIG.read_text(encoding="utf-8"))
    return config


def dev_settings() -> StackSettings:
    config, _ = stack_config("dev")
    return parse_settings(config, "Pulumi.dev.yaml")


def taints(node: dict[str, Any]) -> list[dict[str, str]]:
    """The taints a node registers with, from its kubeadm JoinConfiguration patches."""
    found: list[dict[str, str]] = []
    for patch in node.get("kubeadmConfigPatches", []):
        document = yaml.safe_load(patch)
        if document.get("kind") == "JoinConfiguration":
            found.extend(document.get("nodeRegistration", {}).get("taints", []))
    return found


def workers() -> list[dict[str, Any]]:
    return [node for node in kind_config()["nodes"] if node["role"] == "worker"]


def test_it_is_a_kind_cluster_config() -> None:
    config = kind_config()
    assert (config["kind"], config["apiVersion"]) == ("Cluster", "kind.x-k8s.io/v1alpha4")
    assert [node["role"] for node in config["nodes"]].count("control-plane") == 1


def test_every_pool_of_the_dev_stack_has_a_labelled_and_tainted_node() -> None:
    settings = dev_settings()
    assert settings.node_pools, "the dev stack declares pools"
    for name, pool in settings.node_pools.items():
        nodes = [node for node in workers() if node.get("labels") == pool_node_labels(name, pool.cost_code)]
        assert nodes, f"no kind node for pool {name}"
        assert all(taints(node) == [pool_taint(name)] for node in nodes), name


def test_every_pool_node_belongs_to_a_pool_of_the_stack_and_one_node_is_left_for_the_platform() -> None:
    settings = dev_settings()
    pooled = [node for node in workers() if node.get("labels")]
    assert Counter(node["labels"]["tenancy.io/pool"] for node in pooled) == Counter(list(settings.node_pools))
    # Flux, the operators and DNS tolerate no pool taint: they need an untainted worker.
    assert [node for node in workers() if not node.get("labels") and not taints(node)]


def test_node_images_are_the_stacks_kubernetes_version_pinned_by_digest() -> None:
    version = dev_settings().kubernetes_version
    for node in kind_config()["nodes"]:
        match = NODE_IMAGE.match(node["image"])
        assert match, node["image"]
        assert match["minor"] == version, f"{node['image']} is not Kubernetes {version}"
    assert len({node["image"] for node in kind_config()["nodes"]}) == 1


def test_a_node_without_its_taint_patch_has_no_taint() -> None:
    # The pool checks above read taints only from the kubeadm patch: a pool node whose patch is
    # missing (labels alone) would hold pods nobody else may use, yet not keep others off it.
    pool_node = next(node for node in workers() if node.get("labels"))
    assert taints(pool_node)
    assert taints({**pool_node, "kubeadmConfigPatches": []}) == []


# --- generated from the stack (issue 24): a pool added to the dev stack gets its node ----------


def test_the_file_is_what_the_dev_stack_generates() -> None:
    assert kind_config_tool.rendered(dev_settings()) == KIND_CONFIG.read_text(encoding="utf-8")
    assert kind_config_tool.main(["--check"]) == 0


def test_a_pool_added_to_the_dev_stack_gets_a_labelled_and_tainted_node() -> None:
    config, _ = stack_config("dev")
    pools = {**json.loads(config["tenancy:nodePools"]), "gpu": {"kind": "existing", "costCode": "gpu-lab"}}
    settings = parse_settings({**config, "tenancy:nodePools": json.dumps(pools)}, "Pulumi.dev.yaml")
    generated = yaml.safe_load(kind_config_tool.rendered(settings))
    [node] = [n for n in generated["nodes"] if n.get("labels") == pool_node_labels("gpu", "gpu-lab")]
    assert taints(node) == [pool_taint("gpu")]
    assert Counter(n["labels"]["tenancy.io/pool"] for n in generated["nodes"] if n.get("labels")) == Counter(
        list(pools)
    )


def test_a_stale_file_is_reported_with_the_command_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "cluster.yaml"
    stale.write_text(KIND_CONFIG.read_text(encoding="utf-8").replace("  - role: worker\n", "", 1), encoding="utf-8")
    monkeypatch.setattr(kind_config_tool, "KIND_CONFIG", stale)
    monkeypatch.setattr(kind_config_tool, "PROJECT_ROOT", tmp_path)
    assert kind_config_tool.main(["--check"]) == 1
    assert "out of step with Pulumi.dev.yaml" in capsys.readouterr().err
    assert kind_config_tool.main(["--write"]) == 0
    assert stale.read_text(encoding="utf-8") == KIND_CONFIG.read_text(encoding="utf-8")


def test_the_kind_network_subnet_is_the_stacks_api_server_cidr() -> None:
    settings = dev_settings()
    assert settings.network.api_server is not None
    assert kind_config_tool.subnet(settings) == settings.network.api_server.cidrs[0] == "172.18.0.0/16"
    config, _ = stack_config("dev")
    without = parse_settings({**config, "tenancy:network": "{}"}, "Pulumi.dev.yaml")
    with pytest.raises(kind_config_tool.KindConfigError, match=r"tenancy:network\.apiServer\.cidrs"):
        kind_config_tool.subnet(without)
