"""Bad network input is refused with file and field: stack settings (`tenancy:network`) and the tenant
file's `egress`, before anything is registered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import new_monitor, run_program, stack_config

BASE = {"tenancy:domainSuffix": "tenants.example.com"}


def problems(network: object) -> list[str]:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({**BASE, "tenancy:network": json.dumps(network)}, "Pulumi.test.yaml")
    return [str(p) for p in raised.value.problems]


def test_safe_defaults() -> None:
    network = parse_settings(BASE, "Pulumi.test.yaml").network
    assert network.mode == "networkPolicy"
    assert network.egress == {} and network.operators == {} and network.api_server is None
    assert network.identity_endpoints is True


@pytest.mark.parametrize(
    ("network", "where", "message"),
    [
        ({"egress": {"api": {"cidrs": ["10.0.0.300/32"]}}}, "tenancy:network.egress.api.cidrs.0", "is not a CIDR"),
        ({"egress": {"api": {"cidrs": ["10.0.0.1/8"]}}}, "tenancy:network.egress.api.cidrs.0", "host bits set"),
        (
            {"egress": {"api": {"cidrs": ["203.0.113.0/24"], "ports": [70000]}}},
            "tenancy:network.egress.api.ports.0",
            "65535",
        ),
        ({"egress": {"api": {"ports": [443]}}}, "tenancy:network.egress.api", "exactly one of cidrs"),
        (
            {"egress": {"api": {"cidrs": ["1.2.3.0/24"], "internet": True}}},
            "tenancy:network.egress.api",
            "exactly one of cidrs",
        ),
        ({"apiServer": {"cidrs": ["nope"], "ports": [6443]}}, "tenancy:network.apiServer.cidrs.0", "is not a CIDR"),
        (
            {"operators": {"x": {"namespace": "ops", "ports": [0]}}},
            "tenancy:network.operators.x.ports.0",
            "greater than",
        ),
        ({"mode": "namespaced"}, "tenancy:network.mode", "clusterNetworkPolicy"),
    ],
)
def test_bad_network_settings_name_the_key(network: object, where: str, message: str) -> None:
    found = problems(network)
    assert any(p.startswith(f"Pulumi.test.yaml: {where}:") and message in p for p in found), found


def test_egress_the_stack_does_not_allow_is_refused_with_file_and_field(tmp_path: Path) -> None:
    tenants = write_tenants(tmp_path, tenant_document("payer", egress=["payments-api", "anywhere"]))
    with pytest.raises(ConfigurationError) as raised:
        plan("dev", tenants)
    assert [str(p) for p in raised.value.problems] == [
        f"{tenants}/payer.yaml: egress.1: 'anywhere' is not an egress entry of this stack "
        "(tenancy:network.egress: internet-https, payments-api)"
    ]


def _refused(stack: str, overrides: dict[str, str]) -> list[str]:
    """Run the whole program on `stack` with `overrides`; the problems it refuses with, after checking
    that nothing was registered."""
    config, secret_keys = stack_config(stack, overrides)
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program(stack, config, secret_keys, monitor=monitor)
    assert monitor.recorded == []
    return [str(p) for p in raised.value.problems]


@pytest.mark.parametrize(
    ("network", "expected"),
    [
        (
            {"egress": {"api": {"cidrs": ["10.0.0/8"]}}},
            "tenancy:network.egress.api.cidrs.0: Value error, '10.0.0/8' is not a CIDR",
        ),
        ({"egress": {"api": {"cidrs": ["203.0.113.0/24"], "ports": [0]}}}, "tenancy:network.egress.api.ports.0:"),
        (
            {"egress": {"api": {"cidrs": ["203.0.113.0/24"], "protocol": "ICMP"}}},
            "tenancy:network.egress.api.protocol:",
        ),
        ({"egress": {"Bad Name": {"internet": True}}}, "tenancy:network.egress.Bad Name.[key]:"),
        ({"apiServer": {"cidrs": ["172.18.0.0/16"], "ports": [65536]}}, "tenancy:network.apiServer.ports.0:"),
        ({"egress": {"api": {"cidrs": ["203.0.113.0/24"]}}, "mode": "calico"}, "tenancy:network.mode:"),
        ({"internetExcludes": ["2600:1f00::1/40"]}, "tenancy:network.internetExcludes.0: Value error"),
    ],
)
def test_bad_network_config_is_refused_with_the_key_and_nothing_registered(
    network: dict[str, object], expected: str
) -> None:
    problems = _refused("dev", {"tenancy:network": json.dumps(network)})
    assert any(p.startswith("Pulumi.dev.yaml: ") and expected in p for p in problems), problems


@pytest.mark.parametrize(
    ("egress", "expected"),
    [
        (["payments-api", "anywhere"], "egress.1: 'anywhere' is not an egress entry of this stack"),
        ("payments-api", "egress: must be a list, such as [a, b] or lines starting with '- '"),
        (["Payments API"], "egress.0:"),
        (["payments-api", "payments-api"], "egress:"),
    ],
)
def test_bad_tenant_egress_is_refused_with_file_and_field_and_nothing_registered(
    tmp_path: Path, egress: object, expected: str
) -> None:
    tenants = write_tenants(tmp_path, tenant_document("payer", egress=egress))
    problems = _refused("dev", {"tenancy:tenantsDir": str(tenants)})
    assert any(p.startswith(f"{tenants}/payer.yaml: {expected}") for p in problems), problems


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_the_cluster_mode_beyond_the_crd_limits_registers_nothing(stack: str) -> None:
    config, _ = stack_config(stack)
    network = config["tenancy:network"]
    network = json.loads(network) if isinstance(network, str) else dict(network)
    too_many = {
        **network,
        "mode": "clusterNetworkPolicy",
        "apiServer": {"cidrs": ["10.0.0.0/28"], "ports": list(range(1, 27))},
    }
    problems = _refused(stack, {"tenancy:network": json.dumps(too_many)})
    assert [p.split(": ")[:2] for p in problems] == [[f"Pulumi.{stack}.yaml", "tenancy:network.apiServer.ports"]]
