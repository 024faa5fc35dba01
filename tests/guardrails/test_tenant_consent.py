"""Traffic between tenants by mutual consent: `acceptsFrom` in the receiving tenant's file and
`connectsTo` in the sending tenant's, same environment only. network-config-analyzer shows that
exactly that path opens, on the accepted ports, in both network modes; one-sided consent is refused
with file and field before anything is registered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from tests.guardrails.network_analyzer import analyze, nca_command
from tests.guardrails.test_cluster_network_policy import cluster_mode
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, new_monitor, run_program, stack_config

# (stack, network mode): the namespaced mode on every cloud, the cluster mode where it is available.
PLANS = [
    ("dev", "networkPolicy"),
    ("dev", "clusterNetworkPolicy"),
    ("prod", "networkPolicy"),
    ("prod-aws", "networkPolicy"),
]


def _tenants(directory: Path) -> Path:
    return write_tenants(
        directory,
        tenant_document("ledger", acceptsFrom=[{"tenant": "billing", "ports": [8443]}]),
        tenant_document("billing", connectsTo=["ledger"]),
        tenant_document("bystander"),
    )


@pytest.fixture(scope="module", params=PLANS, ids=[f"{stack}-{mode}" for stack, mode in PLANS])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    stack, mode = request.param
    config = {"network": cluster_mode(stack)} if mode == "clusterNetworkPolicy" else {}
    return plan(stack, _tenants(tmp_path_factory.mktemp("tenants")), **config)


@pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")
def test_exactly_the_consented_path_opens(run: ProgramRun) -> None:
    connectivity = analyze(run)
    for environment in ("dev", "prod"):
        billing, ledger = f"tenant-billing-{environment}", f"tenant-ledger-{environment}"
        for pod in ("app", "worker"):
            assert connectivity.allows(f"{billing}/app", f"{ledger}/{pod}", 8443)
            assert not connectivity.allows(f"{billing}/app", f"{ledger}/{pod}", 8080)
        # One direction only, one environment only, nobody else.
        assert not connectivity.reaches(f"{ledger}/app", f"{billing}/app")
        assert not connectivity.reaches(f"tenant-bystander-{environment}/app", f"{ledger}/app")
        assert not connectivity.reaches(f"{billing}/app", f"tenant-bystander-{environment}/app")
    assert not connectivity.reaches("tenant-billing-dev/app", "tenant-ledger-prod/app")
    assert not connectivity.reaches("tenant-billing-prod/app", "tenant-ledger-dev/app")


def _isolation(run: ProgramRun, namespace: str) -> dict[str, Any]:
    found = [
        p for p in objects_of_kind(run, "NetworkPolicy", namespace) if p["metadata"]["name"] == "tenancy-isolation"
    ]
    found += [
        p
        for p in objects_of_kind(run, "ClusterNetworkPolicy")
        if p["metadata"]["name"] == f"tenancy-isolation-{namespace}"
    ]
    [policy] = found
    # The own namespace's name stands in its rules (cluster mode: NotIn [own]); compare without it.
    return dict(json.loads(json.dumps(policy["spec"]).replace(f'"{namespace}"', '"<own>"')))


def test_the_path_is_a_minimal_pair_of_rules(run: ProgramRun) -> None:
    bystander = _isolation(run, "tenant-bystander-dev")
    ledger, billing = _isolation(run, "tenant-ledger-dev"), _isolation(run, "tenant-billing-dev")
    # The receiver has one ingress rule more, the sender one egress rule more; nothing else differs.
    assert len(ledger["ingress"]) == len(bystander["ingress"]) + 1 and ledger["egress"] == bystander["egress"]
    assert len(billing["egress"]) == len(bystander["egress"]) + 1 and billing["ingress"] == bystander["ingress"]
    [extra_in] = [rule for rule in ledger["ingress"] if rule not in bystander["ingress"]]
    assert "tenant-billing-dev" in str(extra_in) and "8443" in str(extra_in)
    [extra_out] = [rule for rule in billing["egress"] if rule not in bystander["egress"]]
    assert "tenant-ledger-dev" in str(extra_out)


@pytest.mark.parametrize(
    ("documents", "expected"),
    [
        (
            [tenant_document("ledger", acceptsFrom=[{"tenant": "billing"}]), tenant_document("billing")],
            [
                "ledger.yaml: acceptsFrom.0.tenant: 'billing' does not consent: "
                "{dir}/billing.yaml has no 'ledger' in connectsTo"
            ],
        ),
        (
            [tenant_document("ledger"), tenant_document("billing", connectsTo=["ledger"])],
            [
                "billing.yaml: connectsTo.0: 'ledger' does not consent: "
                "{dir}/ledger.yaml has no 'billing' in acceptsFrom"
            ],
        ),
        (
            [tenant_document("billing", connectsTo=["nobody", "billing"])],
            [
                "billing.yaml: connectsTo.0: 'nobody' is not another tenant of this stack",
                "billing.yaml: connectsTo.1: 'billing' is not another tenant of this stack",
            ],
        ),
        (
            [tenant_document("ledger", acceptsFrom=[{"tenant": "billing", "ports": [70000]}])],
            ["ledger.yaml: acceptsFrom.0.ports.0: Input should be less than or equal to 65535"],
        ),
    ],
)
def test_one_sided_or_bad_consent_is_refused_and_nothing_registered(
    tmp_path: Path, documents: list[dict[str, Any]], expected: list[str]
) -> None:
    tenants = write_tenants(tmp_path, *documents)
    config, secret_keys = stack_config("dev", {"tenancy:tenantsDir": str(tenants)})
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program("dev", config, secret_keys, monitor=monitor)
    assert monitor.recorded == []
    assert [str(p) for p in raised.value.problems] == [f"{tenants}/{e.format(dir=tenants)}" for e in expected]
