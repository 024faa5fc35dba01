"""Every example plan against what its edge controllers accept (components/edge/contract_check.py).

The rules are the controllers' own, read at their pinned tags (components/model/settings/
edge_contracts.py, components/model/core/await_rules.py); each is also shown to catch the defect
it names on a hand-made plan, so a check that cannot fail is caught too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.edge.contract_check import (
    PlanView,
    await_problems,
    contract_problems,
    external_dns_problems,
    gateway_problems,
)
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.settings.stack import StackSettings
from tests.support import kubernetes_objects, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, new_monitor, run_program, stack_config

PLANS = {"dev": "dev_plan", "prod": "prod_plan", "prod-aws": "prod_aws_plan"}


def settings_of(stack: str) -> StackSettings:
    config, _ = stack_config(stack)
    return parse_settings(config, f"Pulumi.{stack}.yaml")


def view_of(run: ProgramRun) -> PlanView:
    return PlanView(objects=kubernetes_objects(run), resources=list(run.resources), by_urn=run.by_urn())


@pytest.mark.parametrize("stack", sorted(PLANS))
def test_every_plan_keeps_every_edge_contract(stack: str, request: Any) -> None:
    run = request.getfixturevalue(PLANS[stack])
    assert contract_problems(settings_of(stack), view_of(run)) == []


def test_gke_gets_no_listener_set_nor_allowed_listeners(prod_plan: ProgramRun) -> None:
    """GKE 1.34 installs Gateway API v1.4.0 standard: no ListenerSet kind, no allowedListeners field."""
    objects = kubernetes_objects(prod_plan)
    assert not [o for o in objects if o["kind"] == "ListenerSet"]
    (gateway,) = [o for o in objects if o["kind"] == "Gateway"]
    assert "allowedListeners" not in gateway["spec"]


def test_the_gateway_rule_catches_listener_sets_on_gke(prod_plan: ProgramRun) -> None:
    view = view_of(prod_plan)
    gateway = next(o for o in view.objects if o["kind"] == "Gateway")
    broken = copy.deepcopy(gateway)
    broken["spec"]["allowedListeners"] = {"namespaces": {"from": "All"}}
    listener_set = {"kind": "ListenerSet", "metadata": {"name": "x", "namespace": "t"}, "spec": {"listeners": []}}
    problems = gateway_problems(settings_of("prod"), PlanView([broken, listener_set], []))
    assert any("allowedListeners" in p for p in problems) and any("ListenerSet t/x" in p for p in problems)


def test_the_alb_gateway_is_public_with_acm_certificates_and_ip_targets(prod_aws_plan: ProgramRun) -> None:
    objects = kubernetes_objects(prod_aws_plan)
    (gateway,) = [o for o in objects if o["kind"] == "Gateway"]
    for listener in gateway["spec"]["listeners"]:
        assert "certificateRefs" not in listener.get("tls", {})
    (config,) = [o for o in objects if o["kind"] == "LoadBalancerConfiguration"]
    assert gateway["spec"]["infrastructure"]["parametersRef"]["name"] == config["metadata"]["name"]
    assert config["spec"]["scheme"] == "internet-facing"
    (https,) = config["spec"]["listenerConfigurations"]
    assert https["defaultCertificate"].startswith("arn:aws:acm:")
    (target,) = [o for o in objects if o["kind"] == "TargetGroupConfiguration"]
    assert target["spec"]["defaultConfiguration"]["targetType"] == "ip"


def test_the_alb_rule_catches_secrets_internal_scheme_and_instance_targets(prod_aws_plan: ProgramRun) -> None:
    view = view_of(prod_aws_plan)
    objects = copy.deepcopy(view.objects)
    gateway = next(o for o in objects if o["kind"] == "Gateway")
    gateway["spec"]["listeners"][0]["tls"] = {"mode": "Terminate", "certificateRefs": [{"name": "s"}]}
    gateway["spec"].pop("infrastructure", None)
    problems = gateway_problems(settings_of("prod-aws"), PlanView(objects, []))
    assert any("ACM only" in p for p in problems) and any("no LoadBalancerConfiguration" in p for p in problems)
    objects = copy.deepcopy(view.objects)
    config = next(o for o in objects if o["kind"] == "LoadBalancerConfiguration")
    config["spec"]["scheme"] = "internal"
    target = next(o for o in objects if o["kind"] == "TargetGroupConfiguration")
    target["spec"]["defaultConfiguration"]["targetType"] = "instance"
    problems = gateway_problems(settings_of("prod-aws"), PlanView(objects, []))
    assert any("scheme 'internal'" in p for p in problems) and any("not `ip`" in p for p in problems)


@pytest.mark.parametrize(("stack", "provider"), [("prod", "google"), ("prod-aws", "aws")])
def test_external_dns_syncs_its_own_records_in_the_named_zones(stack: str, provider: str, request: Any) -> None:
    run: ProgramRun = request.getfixturevalue(PLANS[stack])
    (release,) = [r for r in run.resources if r.name == "platform-edge-external-dns"]
    values = release.inputs["values"]
    assert values["provider"]["name"] == provider
    assert values["policy"] == "sync" and values["registry"] == "txt" and values["txtOwnerId"] == f"tenancy-{stack}"
    assert release.inputs["version"] == "1.21.1"
    assert any(a.startswith("--zone-id-filter=") for a in values["extraArgs"])
    assert not any(a.startswith("--zone-name-filter") for a in values["extraArgs"])
    assert "--txt-wildcard-replacement=wildcard" in values["extraArgs"]
    listener_sets = any(o["kind"] == "ListenerSet" for o in kubernetes_objects(run))
    assert values.get("enableGatewayListenerSets", False) is listener_sets


def test_the_external_dns_rule_catches_upsert_only_and_azure_flags(prod_plan: ProgramRun) -> None:
    view = view_of(prod_plan)
    (release,) = [r for r in view.resources if r.name == "platform-edge-external-dns"]
    broken = copy.deepcopy(release)
    broken.inputs["values"]["policy"] = "upsert-only"
    broken.inputs["values"]["extraArgs"] = ["--zone-name-filter=z"]
    problems = external_dns_problems(settings_of("prod"), PlanView(view.objects, [broken]))
    assert any("never deleted" in p for p in problems)
    assert any("azure" in p for p in problems) and any("no --zone-id-filter" in p for p in problems)


def test_the_await_rule_catches_an_unawaited_gateway() -> None:
    metadata: dict[str, Any] = {"name": "g"}
    gateway: dict[str, Any] = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": metadata}
    assert await_problems(PlanView([gateway], [])) != []
    gateway["metadata"]["annotations"] = {"pulumi.com/waitFor": "condition=Ready"}
    assert "Programmed" in await_problems(PlanView([gateway], []))[0]
    gateway["metadata"]["annotations"] = {"pulumi.com/waitFor": "condition=Programmed"}
    assert await_problems(PlanView([gateway], [])) == []


@pytest.mark.parametrize("stack", sorted(PLANS))
def test_platform_edge_objects_and_tenant_data_are_awaited(stack: str, request: Any) -> None:
    run: ProgramRun = request.getfixturevalue(PLANS[stack])
    awaited = {
        (o["kind"], o["metadata"]["name"])
        for o in kubernetes_objects(run)
        if (o["metadata"].get("annotations") or {}).get("pulumi.com/waitFor")
    }
    kinds = {kind for kind, _ in awaited}
    assert {"Gateway", "ClusterIssuer"} <= kinds
    if stack == "dev":
        assert {"Certificate", "Cluster", "MariaDB"} <= kinds


def test_eks_edge_charts_start_after_their_pod_identity(prod_aws_plan: ProgramRun) -> None:
    by_name = {r.name: r for r in prod_aws_plan.resources}
    for role in ("controller", "cert-manager", "external-dns"):
        association = by_name[f"platform-edge-{role}-pod-identity"]
        assert association.urn in by_name[f"platform-edge-{role}"].dependencies, role


def _edge_refusal(
    stack: str, tmp_path: Path, edge_change: Callable[[dict[str, Any]], None], *tenants: dict[str, Any]
) -> str:
    config, _ = stack_config(stack)
    edge = json.loads(config["tenancy:edge"])
    edge_change(edge)
    overrides = {"tenancy:tenantsDir": str(write_tenants(tmp_path, *tenants)), "tenancy:edge": json.dumps(edge)}
    config, secret_keys = stack_config(stack, overrides)
    with pytest.raises(ConfigurationError) as raised:
        run_program(stack, config, secret_keys, monitor=new_monitor())
    return str(raised.value)


def test_eks_refuses_a_hostname_without_an_acm_certificate(tmp_path: Path) -> None:
    def drop(edge: dict[str, Any]) -> None:
        edge["gateway"]["acmCertificates"].pop("*.tenants.aws.example.com")

    message = _edge_refusal("prod-aws", tmp_path, drop, tenant_document("shop", domains=["shop.example.net"]))
    assert "tenancy:edge.gateway.acmCertificates: name the ACM certificate for '*.tenants.aws.example.com'" in message
    assert "domains.0: 'shop.example.net' has no ACM certificate" in message


def test_gke_refuses_tenant_domains_past_the_projects_certificate_manager_quotas(tmp_path: Path) -> None:
    """The refusal is at the project's Certificate Manager quotas (granted values in the stack file),
    names the field, and says how to get past it."""
    tenants = [tenant_document(f"t{i}", domains=[f"t{i}.example.net", f"*.t{i}.example.net"]) for i in range(5)]
    config, _ = stack_config("prod")
    gcp = json.loads(config["tenancy:gcp"])
    gcp["certificateManagerQuotas"] = {"certificates": 10, "mapEntries": 11, "dnsAuthorizations": 6}
    overrides = {"tenancy:tenantsDir": str(write_tenants(tmp_path, *tenants)), "tenancy:gcp": json.dumps(gcp)}
    config, secret_keys = stack_config("prod", overrides)
    with pytest.raises(ConfigurationError) as raised:
        run_program("prod", config, secret_keys, monitor=new_monitor())
    message = str(raised.value)
    # 1 wildcard + 10 tenant names: 11 certificates and entries, 6 authorizations (x and *.x share one).
    field = "Pulumi.prod.yaml: tenancy:gcp.certificateManagerQuotas.certificates"
    assert f"{field}: the stack's wildcard and 10 tenant domain names " in message
    assert "need 11 Certificate Manager certificates (one per name), more than the project's quota of 10" in message
    assert "request a higher quota for the project" in message and "a stack in another project" in message
    assert "mapEntries" not in message and "dnsAuthorizations" not in message


def test_gke_refuses_a_gateway_class_that_takes_no_certificate_map(tmp_path: Path) -> None:
    def regional(edge: dict[str, Any]) -> None:
        edge.setdefault("gateway", {})["className"] = "gke-l7-regional-external-managed"

    message = _edge_refusal("prod", tmp_path, regional, tenant_document("shop", domains=["shop.example.net"]))
    assert "tenancy:edge.gateway.className: 'gke-l7-regional-external-managed' takes no certificate map" in message


def test_the_gke_rule_catches_listener_tls_and_a_missing_certificate_map(prod_plan: ProgramRun) -> None:
    view = view_of(prod_plan)
    objects = copy.deepcopy(view.objects)
    gateway = next(o for o in objects if o["kind"] == "Gateway")
    gateway["spec"]["listeners"][0]["tls"] = {"mode": "Terminate", "certificateRefs": [{"name": "s"}]}
    del gateway["metadata"]["annotations"]["networking.gke.io/certmap"]
    problems = gateway_problems(settings_of("prod"), PlanView(objects, []))
    assert any("carries tls beside the Gateway's certificate map" in p for p in problems)
    assert any("no networking.gke.io/certmap annotation" in p for p in problems)
