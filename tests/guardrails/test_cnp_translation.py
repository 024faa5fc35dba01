"""The ClusterNetworkPolicy -> Calico translation used only for analysis (tests/guardrails/cnp_translation.py):
each step it documents, and nca's reading of the tiers it builds on a small cluster of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.guardrails.cnp_translation import calico_policies, global_policy, network_policy_tier_defaults, selector
from tests.guardrails.network_analyzer import nca_command


def cnp(tier: str, priority: int, **spec: Any) -> dict[str, Any]:
    body = {"tier": tier, "priority": priority, "subject": {"namespaces": {}}, **spec}
    return {
        "apiVersion": "policy.networking.k8s.io/v1alpha2",
        "kind": "ClusterNetworkPolicy",
        "metadata": {"name": f"{tier}-{priority}"},
        "spec": body,
    }


def test_label_selectors_become_calico_expressions() -> None:
    assert selector(None) == selector({}) == "all()"
    assert selector({"matchLabels": {"b": "2", "a": "1"}}) == "a == '1' && b == '2'"
    expressions = [
        {"key": "k", "operator": "In", "values": ["x", "y"]},
        {"key": "k", "operator": "NotIn", "values": ["z"]},
        {"key": "e", "operator": "Exists"},
        {"key": "d", "operator": "DoesNotExist"},
    ]
    assert selector({"matchExpressions": expressions}) == "k in {'x', 'y'} && k not in {'z'} && has(e) && !has(d)"


def test_tiers_become_orders_around_the_network_policies() -> None:
    assert global_policy(cnp("Admin", 200))["spec"]["order"] == 200
    assert global_policy(cnp("Baseline", 10))["spec"]["order"] == 2010
    with pytest.raises(ValueError, match="tie with the NetworkPolicies"):
        global_policy(cnp("Admin", 1000))


def test_rules_expand_per_peer_and_protocol_in_order() -> None:
    rule = {
        "action": "Accept",
        "to": [{"networks": ["192.0.2.0/24"]}, {"namespaces": {"matchLabels": {"a": "b"}}}],
        "protocols": [
            {"udp": {"destinationPort": {"number": 53}}},
            {"tcp": {"destinationPort": {"range": {"start": 80, "end": 90}}}},
        ],
    }
    egress = global_policy(cnp("Admin", 1, egress=[rule, {"action": "Deny", "to": [{"networks": ["0.0.0.0/0"]}]}]))[
        "spec"
    ]["egress"]
    assert egress == [
        {"action": "Allow", "protocol": "UDP", "destination": {"nets": ["192.0.2.0/24"], "ports": [53]}},
        {"action": "Allow", "protocol": "TCP", "destination": {"nets": ["192.0.2.0/24"], "ports": ["80:90"]}},
        {"action": "Allow", "protocol": "UDP", "destination": {"namespaceSelector": "a == 'b'", "ports": [53]}},
        {"action": "Allow", "protocol": "TCP", "destination": {"namespaceSelector": "a == 'b'", "ports": ["80:90"]}},
        {"action": "Deny", "destination": {"nets": ["0.0.0.0/0"]}},
    ]


def test_pass_and_named_ports_are_refused() -> None:
    with pytest.raises(ValueError, match="Pass"):
        global_policy(cnp("Admin", 1, ingress=[{"action": "Pass", "from": [{"namespaces": {}}]}]))
    named = {"action": "Accept", "from": [{"namespaces": {}}], "protocols": [{"destinationNamedPort": "http"}]}
    with pytest.raises(ValueError, match="destinationNamedPort"):
        global_policy(cnp("Admin", 1, ingress=[named]))


def test_network_policies_get_their_tier_default_deny() -> None:
    policy = {
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"podSelector": {"matchLabels": {"app": "w"}}, "policyTypes": ["Ingress"]},
    }
    [default] = network_policy_tier_defaults([policy])
    assert default["spec"] == {
        "order": 1001,
        "namespaceSelector": "kubernetes.io/metadata.name == 'ns'",
        "selector": "app == 'w'",
        "types": ["Ingress"],
        "ingress": [{"action": "Deny"}],
    }
    assert calico_policies([policy]) == []  # without any ClusterNetworkPolicy nothing is added


def _pod(namespace: str, name: str, ip: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, "labels": {"app": name}}
    status = {"hostIP": "192.168.0.10", "podIP": ip}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "m", "image": "x"}]},
        "status": status,
    }


@pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")
def test_nca_reads_the_tiers_as_intended(tmp_path: Path) -> None:
    # Admin denies a->b; a NetworkPolicy selects a/w for ingress from a/v only; Baseline accepts all.
    objects = [
        cnp(
            "Admin",
            10,
            egress=[{"action": "Deny", "to": [{"namespaces": {"matchLabels": {"kubernetes.io/metadata.name": "b"}}}]}],
        ),
        cnp("Baseline", 10, ingress=[{"action": "Accept", "from": [{"namespaces": {}}]}]),
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "w-in", "namespace": "a"},
            "spec": {
                "podSelector": {"matchLabels": {"app": "w"}},
                "policyTypes": ["Ingress"],
                "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "v"}}}]}],
            },
        },
    ]
    (tmp_path / "policies").mkdir()
    policies = [o for o in objects if o["kind"] == "NetworkPolicy"] + calico_policies(objects)
    (tmp_path / "policies" / "p.yaml").write_text(yaml.safe_dump_all(policies))
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}}
        for n in "ab"
    ]
    (tmp_path / "ns.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "NamespaceList", "items": namespaces})
    )
    pods = [
        _pod("a", "v", "10.0.0.1"),
        _pod("a", "w", "10.0.0.2"),
        _pod("a", "u", "10.0.0.3"),
        _pod("b", "x", "10.0.0.4"),
    ]
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "PodList", "items": pods}))
    args = [str(nca_command()), "--connectivity", str(tmp_path / "policies"), "--ns_list", str(tmp_path / "ns.yaml")]
    args += ["--pod_list", str(tmp_path / "pods.yaml"), "-o", "txt_no_fw_rules"]
    output = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True).stdout
    edges = {line.split(" : ")[0] for line in output.splitlines() if "=>" in line}
    assert "a/v[Pod] => a/w[Pod]" in edges  # the NetworkPolicy allows it
    assert "a/u[Pod] => a/w[Pod]" not in edges  # selected by a NetworkPolicy: Baseline never applies
    assert "a/u[Pod] => a/v[Pod]" in edges  # not selected: Baseline accepts
    assert "a/v[Pod] => b/x[Pod]" not in edges  # Admin denies before anything else
    # Egress no tier decides is allowed (b/x and a/v have no matching egress rule anywhere).
    assert "b/x[Pod] => a/v[Pod]" in edges
    assert "a/v[Pod] => a/u[Pod]" in edges
