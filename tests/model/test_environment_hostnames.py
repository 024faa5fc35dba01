"""Hostnames per environment (issue 33) written once (issue 35), in the model and the plan.

Each name is served by one environment of its tenant; the default keeps dev off prod's names; the
`hostnames` map moves names explicitly; templates resolve per stack and environment; a wildcard
covers one label, as a certificate does (issue 32).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from components.model.core.errors import ConfigurationError
from components.model.tenant_file.hostnames import covers, is_template, resolve_values, served_hostnames
from components.model.tenant_file.spec import TenantSpec
from tests.support import objects_of_kind, plan, tenant_document, write_tenants

SUFFIX = "tenants.dev.example.com"
DOMAINS = ["shop.acme.example", "*.api.acme.example"]


def spec(**fields: Any) -> TenantSpec:
    return TenantSpec.model_validate(tenant_document("acme", domains=DOMAINS, **fields))


def test_by_default_dev_serves_its_own_name_only_and_prod_the_tenants_names() -> None:
    tenant = spec()
    assert served_hostnames(tenant, "dev", SUFFIX) == [f"acme-dev.{SUFFIX}"]
    assert served_hostnames(tenant, "prod", SUFFIX) == [f"acme.{SUFFIX}", f"acme-prod.{SUFFIX}", *DOMAINS]


def test_a_listed_environment_serves_exactly_its_list_resolved_per_stack() -> None:
    tenant = spec(hostnames={"dev": ["acme-{environment}.{suffix}", "*.api.acme.example"]})
    assert served_hostnames(tenant, "dev", "tenants.example.com") == [
        "acme-dev.tenants.example.com",
        "*.api.acme.example",
    ]


@pytest.mark.parametrize(
    ("pattern", "hostname", "covered"),
    [
        ("shop.acme.example", "shop.acme.example", True),
        ("*.api.acme.example", "v1.api.acme.example", True),
        ("*.api.acme.example", "*.api.acme.example", True),
        # A wildcard certificate covers one label (RFC 6125 6.4.3).
        ("*.api.acme.example", "a.v1.api.acme.example", False),
        ("*.api.acme.example", "*.v1.api.acme.example", False),
        ("*.api.acme.example", "api.acme.example", False),
        ("*.api.acme.example", "evilapi.acme.example", False),
        ("*.api.acme.example", ".api.acme.example", False),
        ("shop.acme.example", "shop.acme.example.", False),
        ("shop.acme.example", "SHOP.acme.example", False),
    ],
)
def test_a_wildcard_covers_one_label_as_a_certificate_does(pattern: str, hostname: str, covered: bool) -> None:
    assert covers(pattern, hostname) is covered


@pytest.mark.parametrize(
    "template", ["{tenant}.{suffix}", "{suffix}.example.com", "web.{suffix}.example", "Web.{suffix}", "web.{suffix}."]
)
def test_templates_use_known_placeholders_at_their_place(template: str) -> None:
    with pytest.raises(ValidationError):
        spec(hostnames={"dev": [template]})


def test_chart_values_resolve_whole_hostname_templates_only() -> None:
    values = {"route": {"hostname": "acme-{environment}.{suffix}"}, "note": "deployed to {environment}", "n": 3}
    assert resolve_values(values, suffix=SUFFIX, environment="dev") == {
        "route": {"hostname": f"acme-dev.{SUFFIX}"},
        "note": "deployed to {environment}",
        "n": 3,
    }
    assert not is_template("shop.acme.example")


def _problems(tmp_path: Path, *documents: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigurationError) as raised:
        plan("dev", write_tenants(tmp_path, *documents))
    return {p.field: p.message for p in raised.value.problems}


def test_a_name_served_by_two_environments_is_refused(tmp_path: Path) -> None:
    # prod keeps every domain by default: giving one to dev as well is refused, with the way out.
    document = tenant_document("acme", domains=DOMAINS, hostnames={"dev": ["v1.api.acme.example"]})
    problems = _problems(tmp_path, document)
    assert "'*.api.acme.example' (prod) overlaps 'v1.api.acme.example' (dev)" in problems["hostnames.dev"], problems


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("api.acme.{suffix}", "two labels below the suffix: no certificate covers it"),
        ("genomics-lab.{suffix}", "another tenant's"),
        ("acme-prod.{suffix}", "another environment's name"),
        ("a.v1.api.acme.example", "deeper than the wildcard domain"),
        ("bank.example.com", "not a domain of the tenant"),
    ],
)
def test_an_environment_is_given_only_names_the_tenant_owns(tmp_path: Path, name: str, why: str) -> None:
    document = tenant_document(
        "acme", domains=DOMAINS, hostnames={"dev": [name], "prod": ["acme.{suffix}", "shop.acme.example"]}
    )
    problems = _problems(tmp_path, document)
    assert "is not one of the tenant's names for dev" in problems["hostnames.dev.0"], why


def test_an_unknown_environment_in_hostnames_is_refused(tmp_path: Path) -> None:
    problems = _problems(tmp_path, tenant_document("acme", hostnames={"staging": ["acme-staging.{suffix}"]}))
    assert "'staging' is not an environment of the tenant" in problems["hostnames.staging"]


def test_a_tenant_named_like_another_tenants_environment_is_refused(tmp_path: Path) -> None:
    problems = _problems(tmp_path, tenant_document("acme"), tenant_document("acme-dev", environments=["prod"]))
    assert "overlaps 'acme-dev.tenants.dev.example.com' of tenant 'acme'" in " ".join(problems.values()), problems


def test_moving_a_domain_moves_its_listener_set_and_authorization(tmp_path: Path) -> None:
    moved = tenant_document(
        "acme",
        domains=DOMAINS,
        hostnames={"dev": ["acme-{environment}.{suffix}", "*.api.acme.example"], "prod": ["shop.acme.example"]},
    )
    run = plan("dev", write_tenants(tmp_path, moved))
    annotations = {
        n["metadata"]["name"]: n["metadata"]["annotations"]["tenancy.io/authorized-domains"]
        for n in objects_of_kind(run, "Namespace")
        if n["metadata"]["name"].startswith("tenant-acme-")
    }
    assert annotations == {
        "tenant-acme-dev": f"acme-dev.{SUFFIX},*.api.acme.example",
        "tenant-acme-prod": "shop.acme.example",
    }
    listeners = {
        s["metadata"]["namespace"]: [entry["hostname"] for entry in s["spec"]["listeners"]]
        for s in objects_of_kind(run, "ListenerSet")
    }
    assert listeners == {"tenant-acme-dev": ["*.api.acme.example"], "tenant-acme-prod": ["shop.acme.example"]}
    certificates = {
        c["metadata"]["namespace"]: c["spec"]["dnsNames"]
        for c in objects_of_kind(run, "Certificate")
        if c["metadata"]["namespace"].startswith("tenant-")
    }
    assert certificates == {"tenant-acme-dev": ["*.api.acme.example"], "tenant-acme-prod": ["shop.acme.example"]}
