"""external-dns in the real run, offline (tools/realrun/controllers/external_dns.py): the values it runs
with are the program's, how the records are read from its log, and how the run's lines judge them."""

from __future__ import annotations

import json
from pathlib import Path

from components.model.catalog.stack_config import parse_settings
from components.model.settings.stack import StackSettings
from tools.plan.harness import run_stack
from tools.realrun.controllers import external_dns as xdns
from tools.realrun.controllers import external_dns_source
from tools.realrun.engine import stack_config
from tools.realrun.setup import STACK, run_overrides
from tools.realrun.toolchain import MODULES, ROOT, binaries

SUFFIX = "tenants.dev.example.com"


def _settings(tmp_path: Path) -> StackSettings:
    document = stack_config(STACK, run_overrides(tmp_path / "tenants"))
    return parse_settings(document["config"], f"Pulumi.{STACK}.yaml")


def test_the_committed_dev_stack_has_no_external_dns_and_the_run_turns_it_on(tmp_path: Path) -> None:
    committed = parse_settings(stack_config(STACK, {})["config"], f"Pulumi.{STACK}.yaml")
    assert not xdns.runs(committed)
    assert xdns.runs(_settings(tmp_path))


def test_it_runs_with_the_programs_values_and_only_the_provider_changed(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    specs = xdns.tenant_specs(settings, STACK, ROOT / "tenants")
    values = xdns.chart_values(settings, STACK, specs)
    assert values["sources"] == ["gateway-httproute"]
    assert values["policy"] == "sync" and values["registry"] == "txt"
    assert values["txtOwnerId"] == f"tenancy-{STACK}"
    # The stack's suffix and every tenant's own domain (wildcards as their base), nothing else.
    assert SUFFIX in values["domainFilters"]
    assert "api.acme-corp.example" in values["domainFilters"]
    assert values["enableGatewayListenerSets"] is True
    assert values["provider"] == {"name": "inmemory"}
    zones = [a.removeprefix("--inmemory-zone=") for a in values["extraArgs"] if a.startswith("--inmemory-zone=")]
    assert zones == values["domainFilters"]
    assert "--txt-wildcard-replacement=wildcard" in values["extraArgs"]


def test_records_are_what_the_in_memory_provider_logged_created_and_not_deleted() -> None:
    log = "\n".join(
        [
            'time="t" level=info msg="CREATE: acme-dev.tenants.dev.example.com 0 IN A  10.96.0.12 []"',
            'time="t" level=info msg="CREATE: a-acme-dev.tenants.dev.example.com 0 IN TXT  '
            '\\"heritage=external-dns,external-dns/owner=tenancy-dev\\" []"',
            'time="t" level=info msg="CREATE: gone.tenants.dev.example.com 0 IN A  10.96.0.12;10.96.0.13 []"',
            'time="t" level=info msg="DELETE: gone.tenants.dev.example.com 0 IN A  10.96.0.12;10.96.0.13 []"',
            'time="t" level=info msg="All records are already up to date"',
        ]
    )
    held = xdns.records(log)
    assert set(held) == {("acme-dev.tenants.dev.example.com", "A"), ("a-acme-dev.tenants.dev.example.com", "TXT")}
    assert held[("acme-dev.tenants.dev.example.com", "A")].targets == ("10.96.0.12",)
    assert "external-dns/owner=tenancy-dev" in held[("a-acme-dev.tenants.dev.example.com", "TXT")].targets[0]
    assert list(xdns.address_records(held)) == ["acme-dev.tenants.dev.example.com"]


def test_a_record_for_a_name_its_namespace_does_not_own_is_a_problem() -> None:
    own = {
        "tenant-acme-dev": ["acme-dev.tenants.dev.example.com"],
        "tenant-beta-dev": ["beta-dev.tenants.dev.example.com"],
    }
    routes = {
        "acme-dev.tenants.dev.example.com": "tenant-acme-dev",
        "beta-dev.tenants.dev.example.com": "tenant-acme-dev",
    }
    good = xdns.Record("acme-dev.tenants.dev.example.com", "A", ("10.0.0.1",))
    foreign = xdns.Record("beta-dev.tenants.dev.example.com", "A", ("10.0.0.1",))
    published = {good.name: good, foreign.name: foreign}
    problems = xdns.record_problems(published, routes, own, {"10.0.0.1"})
    assert problems == [f"{foreign.name} is published for tenant-acme-dev, whose names are {own['tenant-acme-dev']}"]
    assert xdns.record_problems({good.name: good}, {good.name: "tenant-acme-dev"}, own, {"10.0.0.1"}) == []


def test_a_missing_record_a_stray_record_and_a_foreign_target_are_problems() -> None:
    own = {"tenant-acme-dev": ["acme-dev.tenants.dev.example.com"]}
    stray = xdns.Record("platform.tenants.dev.example.com", "A", ("10.0.0.1",))
    elsewhere = xdns.Record("acme-dev.tenants.dev.example.com", "CNAME", ("evil.example.net",))
    problems = xdns.record_problems(
        {stray.name: stray}, {"acme-dev.tenants.dev.example.com": "tenant-acme-dev"}, own, {"10.0.0.1"}
    )
    assert problems == [
        f"{stray.name} (A) is published but no tenant route names it",
        "acme-dev.tenants.dev.example.com (tenant-acme-dev) has no record",
    ]
    # With routes that are not all the program's (the e2e cases), a name without a record is no problem.
    unserved = {"v1.api.acme-corp.example": "tenant-acme-dev"}
    assert xdns.record_problems({}, unserved, own, {"10.0.0.1"}, complete=False) == []
    routes = {elsewhere.name: "tenant-acme-dev"}
    assert xdns.record_problems({elsewhere.name: elsewhere}, routes, own, {"10.0.0.1"}) == [
        f"{elsewhere.name} points at ['evil.example.net'], not the Gateway's ['10.0.0.1']"
    ]


def test_the_attack_cases_are_the_e2e_route_and_listener_set_cases_with_every_name_they_ask_for() -> None:
    cases = {case.name: case for case in xdns.edge_cases()}
    assert {"route-ga-external-dns-hostname", "route-external-dns-target", "listener-set-catch-all"} <= set(cases)
    assert {"route-own-name", "listener-set-own-hosts"} <= {n for n, c in cases.items() if c.expect == "admit"}
    newer_prefix = cases["route-ga-external-dns-hostname"]
    assert newer_prefix.expect == "deny" and newer_prefix.policy == "tenancy-route-annotations"
    import yaml

    names = xdns.named_hostnames(yaml.safe_load(newer_prefix.path.read_text()))
    assert names == {"acme-dev.tenants.dev.example.com", "genomics-lab.tenants.dev.example.com"}


def test_listener_sets_and_routes_are_replayed_in_rounds_of_their_own() -> None:
    """Replayed together, `listener-set-own-hosts` (exact `acme-prod.<suffix>`) took that name from the
    Gateway's wildcard listener and Envoy Gateway refused `route-prod-domain-in-prod`: no record, for
    a reason of the check's own making. Each ListenerSet now runs in a round before every route, and
    the routes' round requires the admitted routes' names."""
    cases = xdns.edge_cases()
    (first, first_requires), (second, second_requires) = xdns.replay_rounds(cases)
    assert {c.path.name for c in first} == {c.path.name for c in cases if c.path.name.startswith("listener-set-")}
    assert {c.path.name for c in second} == {c.path.name for c in cases if c.path.name.startswith("route-")}
    assert len(first) + len(second) == len(cases)
    assert (first_requires, second_requires) == (False, True)
    assert "route-prod-domain-in-prod" in {c.name for c in second if c.expect == "admit"}


def test_a_fresh_sync_is_two_syncs_ending_after_the_call() -> None:
    readings = iter([100.0, 100.0, 160.0, 160.0, 220.0])
    assert xdns.wait_for_fresh_sync(timeout=60, read=lambda: next(readings), sleep=lambda _: None)
    # One sync ends after the call, then none: it may have started before, so it is not enough.
    stuck = [100.0, 160.0]
    assert not xdns.wait_for_fresh_sync(
        timeout=0.05, read=lambda: stuck.pop(0) if len(stuck) > 1 else stuck[0], sleep=lambda _: None
    )


def test_the_build_is_the_pinned_module_with_only_the_provider_factory_replaced() -> None:
    go_mod = (MODULES / "external-dns/go.mod").read_text()
    assert f"\tsigs.k8s.io/external-dns {external_dns_source.VERSION}" in go_mod
    assert f"=> ../../.realrun/src/external-dns@{external_dns_source.VERSION}" in go_mod
    overlay = sorted(p.relative_to(external_dns_source.OVERLAY) for p in external_dns_source.OVERLAY.rglob("*.go"))
    assert overlay == [Path("provider/factory/provider.go")]
    (binary,) = [b for b in binaries() if b.name == "external-dns"]
    assert dict(binary.env) == {"GOTOOLCHAIN": external_dns_source.GO_TOOLCHAIN}
    assert binary.prepare is external_dns_source.prepare


def test_turning_external_dns_on_changes_nothing_the_program_plans_on_the_local_cloud() -> None:
    """The run's override only tells the run to start external-dns: the dev stack's plan is the same."""
    edge = stack_config(STACK, {})["config"]["tenancy:edge"]
    on = json.dumps({**edge, "externalDns": {**edge.get("externalDns", {}), "enabled": True}})
    without, with_it = run_stack(STACK), run_stack(STACK, {"tenancy:edge": on})
    assert {r.urn: r.inputs for r in with_it.resources} == {r.urn: r.inputs for r in without.resources}
    assert len(without.resources) > 100
