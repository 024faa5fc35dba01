"""Egress by host name (`tenancy:network.egress.<name>.hosts`): rendered as a GKE FQDNNetworkPolicy on
the GCP stack, refused with the key where the cloud or the mode cannot enforce it.

No CRD for FQDNNetworkPolicy is published beside the other upstream CRDs (../shared/crds), so its shape
is checked against Google's documented example and field rules
(https://cloud.google.com/kubernetes-engine/docs/how-to/fqdn-network-policies): apiVersion
networking.gke.io/v1alpha1, a namespaced object with `spec.podSelector` and `spec.egress[]` of
`matches` (each exactly one of `name` or `pattern`) and optional `ports` (`protocol`, `port`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from components.model.core.errors import ConfigurationError
from components.model.settings.network import EgressEntry
from tests.guardrails.test_cluster_network_policy import cluster_mode
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, stack_config

SAAS = {"hosts": ["api.saas.example", "*.files.saas.example"], "ports": [443]}


def _network(stack: str, **extra: Any) -> str:
    """The stack's own `tenancy:network` with a `saas` hosts entry added, as JSON for plan()."""
    config, _ = stack_config(stack)
    network: Any = config.get("tenancy:network", {})
    network = json.loads(network) if isinstance(network, str) else dict(network)
    return json.dumps({**network, **extra, "egress": {**network.get("egress", {}), "saas": SAAS}})


def _tenants(tmp_path: Path) -> Path:
    return write_tenants(
        tmp_path,
        tenant_document("payer", egress=["saas"]),
        tenant_document("other"),
    )


@pytest.fixture(scope="module")
def prod_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return plan("prod", _tenants(tmp_path_factory.mktemp("tenants")), network=_network("prod"))


def _validate_documented_shape(obj: dict[str, Any]) -> None:
    """The FQDNNetworkPolicy fields Google documents, and nothing else."""
    assert obj["apiVersion"] == "networking.gke.io/v1alpha1" and obj["kind"] == "FQDNNetworkPolicy"
    assert set(obj) == {"apiVersion", "kind", "metadata", "spec"}
    assert obj["metadata"]["namespace"] and obj["metadata"]["name"]
    spec = obj["spec"]
    assert set(spec) <= {"podSelector", "egress"} and isinstance(spec["podSelector"], dict)
    assert spec["egress"], "an FQDN policy without egress rules allows nothing"
    for rule in spec["egress"]:
        assert set(rule) <= {"matches", "ports"} and rule["matches"]
        for match in rule["matches"]:
            assert len(match) == 1 and set(match) <= {"name", "pattern"}, match
            assert "*" not in match.get("name", "") and match.get("pattern", "*.").startswith("*.")
        for port in rule.get("ports", []):
            assert set(port) <= {"protocol", "port"} and port["protocol"] in {"TCP", "UDP", "SCTP"}
            assert isinstance(port.get("port", 1), int)


def test_a_granted_hosts_entry_renders_an_fqdn_policy_for_the_namespace(prod_run: ProgramRun) -> None:
    found = objects_of_kind(prod_run, "FQDNNetworkPolicy")
    environments = {o["metadata"]["namespace"] for o in found}
    assert environments and all(ns.startswith("tenant-payer-") for ns in environments), environments
    namespace = sorted(environments)[0]
    (policy,) = [o for o in found if o["metadata"]["namespace"] == namespace]
    _validate_documented_shape(policy)
    assert policy["metadata"]["name"] == "tenancy-hosts"
    assert policy["metadata"]["labels"]["tenancy.io/platform-owned"] == "true"
    assert policy["spec"] == {
        "podSelector": {},
        "egress": [
            {
                "matches": [{"name": "api.saas.example"}, {"pattern": "*.files.saas.example"}],
                "ports": [{"protocol": "TCP", "port": 443}],
            }
        ],
    }


def test_the_fqdn_policy_goes_with_its_namespace(prod_run: ProgramRun) -> None:
    namespaces = {
        r.inputs["metadata"]["name"]: r.urn for r in prod_run.resources if r.type == "kubernetes:core/v1:Namespace"
    }
    policies = [r for r in prod_run.resources if r.type.endswith(":FQDNNetworkPolicy")]
    assert policies
    for resource in policies:
        assert resource.deleted_with == namespaces[resource.inputs["metadata"]["namespace"]]


def test_a_hosts_entry_opens_no_address_in_the_isolation_policy(prod_run: ProgramRun) -> None:
    """A rule with an empty `to` would open every destination: the hosts entry adds no ipBlock rule."""
    for policy in objects_of_kind(prod_run, "NetworkPolicy"):
        for rule in policy["spec"].get("egress", []):
            assert rule.get("to"), (policy["metadata"], rule)


def _problems(stack: str, tmp_path: Path, **extra: Any) -> list[str]:
    with pytest.raises(ConfigurationError) as raised:
        plan(stack, _tenants(tmp_path), network=_network(stack, **extra))
    return [str(p) for p in raised.value.problems]


@pytest.mark.parametrize(("stack", "cloud"), [("dev", "local"), ("prod-aws", "aws")])
def test_hosts_are_refused_where_the_cloud_cannot_enforce_them(stack: str, cloud: str, tmp_path: Path) -> None:
    (problem,) = _problems(stack, tmp_path)
    assert problem.startswith(f"Pulumi.{stack}.yaml: tenancy:network.egress.saas.hosts: cloud {cloud!r} cannot"), (
        problem
    )
    assert "published address ranges as cidrs" in problem and "egress proxy or gateway" in problem


def test_hosts_are_refused_in_the_cluster_network_policy_mode(tmp_path: Path) -> None:
    mode = json.loads(cluster_mode("prod"))["mode"]
    (problem,) = _problems("prod", tmp_path, mode=mode)
    assert problem.startswith("Pulumi.prod.yaml: tenancy:network.egress.saas.hosts: hosts are rendered"), problem


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"hosts": ["api.saas.example"], "cidrs": ["203.0.113.0/24"]}, "exactly one of"),
        ({"hosts": ["api.*.example"]}, "is not a host name"),
        ({"hosts": ["*.*.example"]}, "is not a host name"),
        ({"hosts": ["API.saas.example"]}, "is not a host name"),
        ({"hosts": ["203.0.113.7"]}, "addresses go in cidrs"),
        ({"hosts": ["localhost"]}, "is not a host name"),
    ],
)
def test_bad_hosts_are_refused(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as raised:
        EgressEntry.model_validate(entry)
    assert any(message in error["msg"] for error in raised.value.errors()), raised.value.errors()


def test_good_hosts_are_kept() -> None:
    entry = EgressEntry.model_validate({"hosts": ["api.saas.example", "*.saas.example"], "ports": [443]})
    assert entry.hosts == ["api.saas.example", "*.saas.example"] and entry.ip_targets() == []
