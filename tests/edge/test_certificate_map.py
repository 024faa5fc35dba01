"""The GKE Gateway's certificates at scale: a Certificate Manager map, one entry and one certificate
per name, a DNS authorization per domain (components/clouds/gcp/certificate_map.py, ADR 0041).

Planned under mocks with 50 and 300 tenants with domains on prod: the old path (SSL certificates on
the target HTTPS proxy, at most 15) refused a stack past 14 of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from components.clouds.gcp.certificate_map import resource_id
from components.clouds.gcp.name_rules import RULES
from tests.support import kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

CERTMAP = "networking.gke.io/certmap"
MAP = "gcp:certificatemanager/certificateMap:CertificateMap"
ENTRY = "gcp:certificatemanager/certificateMapEntry:CertificateMapEntry"
CERTIFICATE = "gcp:certificatemanager/certificate:Certificate"
AUTHORIZATION = "gcp:certificatemanager/dnsAuthorization:DnsAuthorization"


def _domains(index: int) -> list[str]:
    return [f"shop.t{index}.example.net", f"*.api.t{index}.example.net"]


def _plan_with_domains(count: int, directory: Path) -> ProgramRun:
    tenants = [tenant_document(f"t{i}", domains=_domains(i)) for i in range(count)]
    return plan("prod", write_tenants(directory, *tenants))


@pytest.mark.parametrize("count", [50, 300])
def test_prod_plans_tenant_domains_past_the_old_15_certificates(count: int, tmp_path: Path) -> None:
    run = _plan_with_domains(count, tmp_path)
    names = ["*.tenants.example.com", *(d for i in range(count) for d in _domains(i))]
    (certificate_map,) = run.of_type(MAP)
    entries = {r.inputs["hostname"]: r for r in run.of_type(ENTRY)}
    certificates = {r.inputs["name"]: r for r in run.of_type(CERTIFICATE)}
    authorizations = {r.inputs["domain"]: r for r in run.of_type(AUTHORIZATION)}
    # One entry and one certificate per name, each entry in the map and naming its own certificate.
    assert sorted(entries) == sorted(names) and len(certificates) == len(names)
    for name, entry in entries.items():
        assert entry.inputs["map"] == certificate_map.inputs["name"]
        certificate = certificates[resource_id("prod", name)]
        # The entry serves its name with that one certificate (it depends on it, and on nothing else of the kind).
        assert len(entry.inputs["certificates"]) == 1 and certificate.urn in entry.dependencies
        assert not [c.urn for c in certificates.values() if c is not certificate and c.urn in entry.dependencies]
        assert certificate.inputs["managed"]["domains"] == [name]
        assert len(certificate.inputs["managed"]["dnsAuthorizations"]) == 1
        # Its one authorization is its domain's (`*.x` is proven by x's): the certificate depends on it.
        assert authorizations[name.removeprefix("*.")].urn in certificate.dependencies
    # `*.api.x` is authorized by x's authorization for api.x: one per domain, the suffix's included.
    assert sorted(authorizations) == sorted({n.removeprefix("*.") for n in names})
    (gateway,) = objects_of_kind(run, "Gateway")
    assert gateway["metadata"]["annotations"][CERTMAP] == certificate_map.inputs["name"]
    listeners = gateway["spec"]["listeners"]
    assert [listener["name"] for listener in listeners] == ["https", "tenant-domains"]
    assert all("tls" not in listener for listener in listeners)
    assert "hostname" not in listeners[1]


def test_nothing_references_the_old_certificate_path(prod_plan: ProgramRun) -> None:
    """No SSL certificate for the proxy: no cert-manager Certificate or Secret reference for the
    Gateway, no per-domain `t-<tenant>-<i>` listener, and no pre-shared certificate annotation."""
    objects = kubernetes_objects(prod_plan)
    (gateway,) = objects_of_kind(prod_plan, "Gateway")
    assert not objects_of_kind(prod_plan, "Certificate", gateway["metadata"]["namespace"])
    assert not [o for o in objects if o["metadata"]["name"].endswith("-domains-tls")]
    assert not [listener for listener in gateway["spec"]["listeners"] if listener["name"].startswith("t-")]
    assert "networking.gke.io/pre-shared-certs" not in gateway["metadata"]["annotations"]
    assert not prod_plan.of_type("gcp:compute/sSLCertificate:SSLCertificate")


def test_tenant_domain_routes_attach_to_the_tenant_domains_listener(prod_plan: ProgramRun) -> None:
    routes = [r for r in objects_of_kind(prod_plan, "HTTPRoute") if r["metadata"]["namespace"].startswith("tenant-")]
    sections = {ref.get("sectionName") for route in routes for ref in route["spec"]["parentRefs"]}
    assert "tenant-domains" in sections and not any(s and s.startswith("t-") for s in sections)


def test_the_stacks_own_authorization_record_is_written_in_its_zone(prod_plan: ProgramRun) -> None:
    (record,) = [r for r in prod_plan.of_type("gcp:dns/recordSet:RecordSet") if r.name.endswith("authorization-record")]
    assert record.inputs["managedZone"] == "tenants-example-com" and record.inputs["type"] == "CNAME"


def test_resource_ids_are_valid_distinct_and_stable() -> None:
    long_a = "a" * 60 + ".example.net"
    long_b = "a" * 60 + ".example.org"
    ids = [resource_id("prod", name) for name in ("*.tenants.example.com", "tenants.example.com", long_a, long_b)]
    assert ids[0].startswith("tenancy-prod-wildcard-tenants-example-com-")
    assert len(set(ids)) == 4 and all(RULES["certificate-manager"].problems(i) == [] for i in ids)
    assert resource_id("prod", long_a) == ids[2]
    # Readable parts that collide (a review found each): dots and hyphens, `*.` and `wildcard.`, and two
    # stacks sharing a project (certificates and authorizations are per project).
    pairs = [
        (("prod", "shop.acme.example"), ("prod", "shop-acme.example")),
        (("prod", "*.api.acme.example"), ("prod", "wildcard.api.acme.example")),
        (("prod", "eu.acme.example"), ("prod-eu", "acme.example")),
    ]
    for first, second in pairs:
        assert resource_id(*first) != resource_id(*second), (first, second)
        assert all(RULES["certificate-manager"].problems(resource_id(*x)) == [] for x in (first, second))


def test_the_rule_is_the_apis_and_refuses_what_the_api_refuses() -> None:
    rule = RULES["certificate-manager"]
    assert rule.problems("tenancy-prod-shop-0123456789") == []
    assert rule.problems("Tenancy_prod") and rule.problems("a" * 64)


def test_each_tenant_domain_owner_gets_its_authorization_record_as_an_output(prod_plan: ProgramRun) -> None:
    """The stack output names, per tenant domain (not the stack's own suffix), the CNAME to publish."""
    records = prod_plan.outputs["certificateDnsAuthorizations"]
    authorized = {r.inputs["domain"] for r in prod_plan.of_type(AUTHORIZATION)}
    assert set(records) == authorized - {"tenants.example.com"} and records
