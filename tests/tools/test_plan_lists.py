"""List entries in the plan diff are matched by what they are, not where they sit (tools/plan/lists.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.admission.network_policy_cases import INGRESS_PLATFORM
from tools.plan.diff import diff_dirs, field_changes, render_markdown
from tools.plan.harness import run_program, stack_config
from tools.plan.lists import CONTENT, FieldChange, diff_values, identity
from tools.plan.run import write_plan


def _write_plan(out: Path, stack: str = "dev", **config: str) -> Path:
    write_plan(run_program(stack, *stack_config(stack, {f"tenancy:{k}": v for k, v in config.items()})), out)
    return out


@pytest.fixture(scope="module")
def base_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The example stacks list only monitoring now (docs/edge.md: Ingress is off by default); the
    # base lists an ingress controller's namespace too, so two rules sit between others.
    return _write_plan(tmp_path_factory.mktemp("base") / "plan", platformNamespaces=INGRESS_PLATFORM)


def test_two_removed_network_policy_rules_read_as_two_removed_entries(base_plan: Path, tmp_path: Path) -> None:
    # Dropping the base's platform namespaces (ingress-nginx, monitoring) removes two rules from
    # the middle of every tenant's isolation policy: the rules after them must not read as changed.
    diff = diff_dirs(base_plan, _write_plan(tmp_path / "head", platformNamespaces="[]"))
    policies = [
        (record, fields)
        for changes in diff.scopes.values()
        for record, fields in changes.changed
        if record["type"] == "kubernetes:networking.k8s.io/v1:NetworkPolicy" and record["name"].endswith("-isolation")
    ]
    assert len(policies) == 7
    for record, fields in policies:
        assert [(change.path, change.entry, change.new) for change in fields] == [
            ("inputs.spec.ingress", True, None),
            ("inputs.spec.ingress", True, None),
        ], record["name"]
        selectors = [change.old["from"][0]["namespaceSelector"]["matchLabels"] for change in fields]
        removed = {labels["kubernetes.io/metadata.name"] for labels in selectors}
        assert removed == {"ingress-nginx", "monitoring"}
    markdown = render_markdown(diff)
    line = (
        '`inputs.spec.ingress`: removed entry `{"from": [{"namespaceSelector": {"matchLabels": '
        '{"kubernetes.io/metadata.name": "monitoring"}}}]}`'
    )
    assert line in markdown


def _container(name: str, image: str, *ports: int) -> dict[str, Any]:
    return {"name": name, "image": image, "ports": [{"containerPort": port, "protocol": "TCP"} for port in ports]}


def test_containers_env_and_ports_are_matched_by_name_and_port() -> None:
    old = {"spec": {"containers": [_container("app", "app:1", 8080, 9090), _container("sidecar", "proxy:1")]}}
    new = {"spec": {"containers": [_container("sidecar", "proxy:2"), _container("app", "app:1", 9090)]}}
    assert diff_values(old, new, "inputs") == [
        FieldChange(
            "inputs.spec.containers[name=app].ports[containerPort=8080,protocol=TCP]",
            {"containerPort": 8080, "protocol": "TCP"},
            None,
            entry=True,
        ),
        FieldChange("inputs.spec.containers[name=sidecar].image", "proxy:1", "proxy:2"),
    ]


def test_one_changed_port_in_a_rule_stays_one_field_change() -> None:
    rule: dict[str, Any] = {"from": [{"podSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}
    other: dict[str, Any] = {"from": [{"namespaceSelector": {}}]}
    changed = {"from": [{"podSelector": {}}], "ports": [{"port": 5353, "protocol": "UDP"}]}
    changes = field_changes(
        {"inputs": {"spec": {"ingress": [other, rule]}}}, {"inputs": {"spec": {"ingress": [other, changed]}}}
    )
    assert [(change.path, change.entry) for change in changes] == [
        ("inputs.spec.ingress[1].ports[port=53,protocol=UDP]", True),
        ("inputs.spec.ingress[1].ports[port=5353,protocol=UDP]", True),
    ]


def test_lists_without_a_usable_identity_fall_back_to_the_index() -> None:
    # RBAC rules have no key; names that repeat are no identity either.
    assert identity("rules", [{"verbs": ["get"]}], [{"verbs": ["list"]}]) is None
    assert identity("env", [{"name": "A"}, {"name": "A"}], []) is None
    assert identity("from", [{"podSelector": {}}], []) == CONTENT
    assert identity("tolerations", [{"key": "pool", "effect": "NoSchedule"}], []) == ("key", "effect")
    assert identity("subjects", [{"kind": "Group", "name": "idp:admins"}], []) == CONTENT
    assert identity("rules", [{"host": "a.example.com", "http": {}}], [{"host": "b.example.com"}]) == ("host",)
    # Any other list whose entries carry distinct names is matched by name (Flux `dependsOn`, say).
    old = {"dependsOn": [{"name": "a", "namespace": "x"}, {"name": "b", "namespace": "x"}]}
    assert diff_values(old, {"dependsOn": [old["dependsOn"][1]]}, "spec") == [
        FieldChange("spec.dependsOn[name=a]", {"name": "a", "namespace": "x"}, None, entry=True)
    ]
    assert diff_values({"rules": [{"verbs": ["get"]}]}, {"rules": [{"verbs": ["list"]}]}, "inputs") == [
        FieldChange("inputs.rules[0].verbs", ["get"], ["list"])
    ]
