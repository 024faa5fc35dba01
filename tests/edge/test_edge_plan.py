"""The edge each example stack renders for its cloud, valid against the upstream CRDs.

dev (kind): Envoy Gateway and cert-manager as pinned charts, Envoy's GatewayClass, a local CA
(selfSigned -> CA certificate -> CA ClusterIssuer), no external-dns. prod (GKE): no controller (GKE's
gke-l7 class), ACME DNS-01 in Cloud DNS as a Google service account with DNS admin on the stack's
zone only, external-dns from HTTPRoutes. prod-aws (EKS): the Load Balancer Controller with its
Gateway API feature gate, ACME DNS-01 in Route 53, every controller's role bound by Pod Identity.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.clouds.gcp.edge_roles import dns_records_role
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.k8s_schema import require_crds, validate_builtin, validate_custom
from tests.support import kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, RecordedResource, stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"
EDGE_KINDS = {"Gateway", "GatewayClass", "ListenerSet", "HTTPRoute", "Certificate", "ClusterIssuer"}


def edge_releases(run: ProgramRun) -> dict[str, RecordedResource]:
    return {
        r.name.removeprefix("platform-edge-"): r for r in run.of_type(RELEASE) if r.name.startswith("platform-edge-")
    }


def issuer(run: ProgramRun, name: str) -> dict[str, Any]:
    (found,) = [o for o in kubernetes_objects(run) if o["kind"] == "ClusterIssuer" and o["metadata"]["name"] == name]
    return found


def test_every_edge_object_is_valid_against_its_crd_or_schema(any_stack_plan: ProgramRun) -> None:
    require_crds()
    objects = [o for o in kubernetes_objects(any_stack_plan) if o["kind"] in EDGE_KINDS]
    # GKE: no ListenerSet (Gateway API v1.4.0); EKS: no Certificate for the ALB (ACM only).
    absent = {"GatewayClass", "ListenerSet", "Certificate"}
    assert EDGE_KINDS - absent <= {o["kind"] for o in objects}
    for obj in objects:
        validate_custom(obj)
    (namespace,) = [
        n for n in objects_of_kind(any_stack_plan, "Namespace") if n["metadata"]["name"] == "tenancy-gateway"
    ]
    validate_builtin(namespace, "1.34")


def test_dev_installs_envoy_gateway_and_cert_manager_with_a_local_ca(dev_plan: ProgramRun) -> None:
    releases = edge_releases(dev_plan)
    assert set(releases) == {"controller", "cert-manager"}
    envoy = releases["controller"].inputs
    assert envoy["chart"] == "oci://docker.io/envoyproxy/gateway-helm" and envoy["version"] == "v1.9.1"
    assert envoy["namespace"] == "envoy-gateway-system" and envoy["atomic"] is True
    cert_manager = releases["cert-manager"].inputs
    assert cert_manager["chart"] == "cert-manager" and cert_manager["version"] == "v1.21.1"
    assert cert_manager["repositoryOpts"] == {"repo": "https://charts.jetstack.io"}
    assert all(r.retain_on_delete for r in releases.values())
    (gateway_class,) = objects_of_kind(dev_plan, "GatewayClass")
    assert gateway_class["spec"]["controllerName"] == "gateway.envoyproxy.io/gatewayclass-controller"
    # selfSigned signs the CA certificate, the stack's issuer signs with that CA.
    assert issuer(dev_plan, "tenancy-self-signed")["spec"] == {"selfSigned": {}}
    assert issuer(dev_plan, "tenancy-dev")["spec"] == {"ca": {"secretName": "tenancy-local-ca"}}
    (ca,) = objects_of_kind(dev_plan, "Certificate", "cert-manager")
    assert ca["spec"]["isCA"] is True and ca["spec"]["issuerRef"]["name"] == "tenancy-self-signed"


def test_dev_proxies_get_an_address_without_a_load_balancer(dev_plan: ProgramRun) -> None:
    # Envoy Gateway v1.9.1 sets a Gateway `Programmed` only once it has an address
    # (internal/gatewayapi/status/gateway.go, updateGatewayProgrammedCondition: AddressNotAssigned);
    # its proxies' default Service is a LoadBalancer (api/v1alpha1 DefaultKubernetesServiceType),
    # whose address kind never assigns, and `up` awaits `Programmed`. The real run found it.
    values = edge_releases(dev_plan)["controller"].inputs["values"]
    default_proxy = values["config"]["envoyGateway"]["envoyProxy"]
    assert default_proxy["provider"]["type"] == "Kubernetes"
    assert default_proxy["provider"]["kubernetes"]["envoyService"]["type"] == "ClusterIP"


@pytest.mark.parametrize(
    ("stack", "class_name", "suffix"),
    [
        ("dev", "tenancy-envoy", "tenants.dev.example.com"),
        ("prod", "gke-l7-global-external-managed", "tenants.example.com"),
        ("prod-aws", "tenancy-alb", "tenants.aws.example.com"),
    ],
)
def test_one_platform_gateway_https_for_the_suffix(stack: str, class_name: str, suffix: str, request: Any) -> None:
    run = request.getfixturevalue({"dev": "dev_plan", "prod": "prod_plan", "prod-aws": "prod_aws_plan"}[stack])
    (gateway,) = objects_of_kind(run, "Gateway")
    assert gateway["metadata"] == {**gateway["metadata"], "name": "platform", "namespace": "tenancy-gateway"}
    assert gateway["spec"]["gatewayClassName"] == class_name
    listener, *tenant_listeners = gateway["spec"]["listeners"]
    assert listener["hostname"] == f"*.{suffix}" and listener["protocol"] == "HTTPS" and listener["port"] == 443
    # GKE: tenant domains take one listener here (no ListenerSet, ADR 0033/0041); elsewhere ListenerSets.
    assert bool(tenant_listeners) is (stack == "prod")
    if stack == "prod":
        # The load balancer's certificates are the Certificate Manager map's: no listener carries tls,
        # no certificate is issued into the Gateway's namespace (ADR 0041).
        assert gateway["metadata"]["annotations"]["networking.gke.io/certmap"]
        assert all("tls" not in each for each in [listener, *tenant_listeners])
        assert not objects_of_kind(run, "Certificate", "tenancy-gateway")
        return
    if stack == "prod-aws":
        # The ALB reads no Secret: its certificates are ACM's (ADR 0034).
        assert listener["tls"] == {"mode": "Terminate", "options": {"tenancy.io/certificate-source": "acm"}}
        assert not objects_of_kind(run, "Certificate", "tenancy-gateway")
        return
    (certificate,) = [
        c for c in objects_of_kind(run, "Certificate", "tenancy-gateway") if c["spec"]["dnsNames"] == [f"*.{suffix}"]
    ]
    assert certificate["spec"]["issuerRef"]["name"] == f"tenancy-{stack}"
    assert listener["tls"]["certificateRefs"] == [{"kind": "Secret", "name": certificate["spec"]["secretName"]}]


def test_gke_uses_its_built_in_class_and_cloud_dns_through_workload_identity(prod_plan: ProgramRun) -> None:
    assert not objects_of_kind(prod_plan, "GatewayClass")
    releases = edge_releases(prod_plan)
    assert set(releases) == {"cert-manager", "external-dns"}
    acme = issuer(prod_plan, "tenancy-prod")["spec"]["acme"]
    assert acme["email"] == "platform-team@example.com"
    (solver,) = acme["solvers"]
    assert solver["dns01"] == {
        "cloudDNS": {"project": "tenancy-prod", "hostedZoneName": "tenants-example-com"},
        "cnameStrategy": "Follow",
    }
    bindings = {r.name: r.inputs for r in prod_plan.of_type("gcp:serviceaccount/iAMBinding:IAMBinding")}
    assert bindings["platform-edge-cert-manager-workload-identity"]["members"] == [
        "serviceAccount:tenancy-prod.svc.id.goog[cert-manager/cert-manager]"
    ]
    assert bindings["platform-edge-external-dns-workload-identity"]["members"] == [
        "serviceAccount:tenancy-prod.svc.id.goog[external-dns/external-dns]"
    ]
    # Record writes on the stack's zone only (the custom role, never roles/dns.admin: issue 44), never
    # on the project.
    zones = prod_plan.of_type("gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember")
    assert sorted(r.inputs["managedZone"] for r in zones) == ["tenants-example-com", "tenants-example-com"]
    assert {r.inputs["role"] for r in zones} == {dns_records_role("tenancy-prod")}
    # On the project: only external-dns's zone list (it lists the project's zones before filtering).
    project_dns = [r for r in prod_plan.of_type("gcp:projects/iAMMember:IAMMember") if "dns" in r.inputs["role"]]
    assert [(r.name, r.inputs["role"]) for r in project_dns] == [
        ("platform-edge-external-dns-zone-list", "roles/dns.reader")
    ]


def test_external_dns_is_limited_to_the_stacks_zones_and_tenants_domains(prod_plan: ProgramRun) -> None:
    values = edge_releases(prod_plan)["external-dns"].inputs["values"]
    assert values["sources"] == ["gateway-httproute"]
    assert values["txtOwnerId"] == "tenancy-prod" and values["policy"] == "sync"
    assert "tenants.example.com" in values["domainFilters"]
    assert {"shop.acme-corp.example", "api.acme-corp.example", "status.example.org"} <= set(values["domainFilters"])
    assert values["extraArgs"] == [
        "--google-project=tenancy-prod",
        "--zone-id-filter=tenants-example-com",
        "--txt-wildcard-replacement=wildcard",
    ]
    assert set(values["serviceAccount"]["annotations"]) == {"iam.gke.io/gcp-service-account"}


def test_eks_installs_the_load_balancer_controller_and_binds_every_role(prod_aws_plan: ProgramRun) -> None:
    releases = edge_releases(prod_aws_plan)
    assert set(releases) == {"controller", "cert-manager", "external-dns"}
    lbc = releases["controller"].inputs
    assert lbc["chart"] == "aws-load-balancer-controller" and lbc["repositoryOpts"] == {
        "repo": "https://aws.github.io/eks-charts"
    }
    assert lbc["values"]["controllerConfig"] == {"featureGates": {"ALBGatewayAPI": True}}
    assert (
        lbc["values"]["clusterName"] == "tenancy-prod"
        and lbc["values"]["serviceAccount"]["name"] == "aws-load-balancer-controller"
    )
    (gateway_class,) = objects_of_kind(prod_aws_plan, "GatewayClass")
    assert gateway_class["spec"]["controllerName"] == "gateway.k8s.aws/alb"
    associations = {
        r.inputs["serviceAccount"]: r.inputs
        for r in prod_aws_plan.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
        if r.name.startswith("platform-edge-")
    }
    assert associations["aws-load-balancer-controller"]["roleArn"].endswith(
        ":role/tenancy-prod-load-balancer-controller"
    )
    assert associations["cert-manager"]["namespace"] == "cert-manager"
    assert associations["external-dns"]["roleArn"].endswith(":role/tenancy-prod-external-dns")
    (solver,) = issuer(prod_aws_plan, "tenancy-prod-aws")["spec"]["acme"]["solvers"]
    assert solver["dns01"]["route53"] == {"region": "eu-west-1", "hostedZoneID": "Z0123456789ABCDEFGHIJ"}
    values = releases["external-dns"].inputs["values"]
    assert (
        values["extraArgs"] == ["--zone-id-filter=Z0123456789ABCDEFGHIJ", "--txt-wildcard-replacement=wildcard"]
        and values["txtOwnerId"] == "tenancy-prod-aws"
    )


def test_tenants_wait_for_the_edge(dev_plan: ProgramRun) -> None:
    waited = {urn for t in dev_plan.of_type("tenancy:index:Tenant") for urn in t.dependencies}
    gateway = [r for r in dev_plan.resources if r.name == "platform-edge-gateway"]
    assert gateway and gateway[0].urn in waited
    assert {r.urn for r in edge_releases(dev_plan).values()} <= waited


def test_status_page_is_served_through_its_listener_set_and_route(dev_plan: ProgramRun) -> None:
    (listener_set,) = objects_of_kind(dev_plan, "ListenerSet", "tenant-status-page-prod")
    assert listener_set["spec"]["parentRef"]["name"] == "platform"
    assert [entry["hostname"] for entry in listener_set["spec"]["listeners"]] == ["status.example.org"]
    (route,) = objects_of_kind(dev_plan, "HTTPRoute", "tenant-status-page-prod")
    assert route["spec"]["hostnames"] == ["status.example.org"]
    assert route["spec"]["rules"] == [{"backendRefs": [{"name": "status", "port": 8080}]}]
    # Only the parent whose listeners take the name (GEP-1713): the Gateway's `*.<suffix>` listener
    # never accepts status.example.org.
    assert [p["kind"] for p in route["spec"]["parentRefs"]] == ["ListenerSet"]
    (certificate,) = objects_of_kind(dev_plan, "Certificate", "tenant-status-page-prod")
    assert certificate["spec"]["dnsNames"] == ["status.example.org"]


def _settings_problems(stack: str, edge: dict[str, Any]) -> list[str]:
    config, _ = stack_config(stack)
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({**config, "tenancy:edge": json.dumps(edge)}, f"Pulumi.{stack}.yaml")
    return [str(p) for p in raised.value.problems]


def test_a_cloud_edge_needs_its_zones_account_and_roles() -> None:
    found = _settings_problems("prod-aws", {})
    assert "Pulumi.prod-aws.yaml: tenancy:edge.gateway.sourceCidrs: the load balancer reaches pods" in " ".join(found)
    keys = {p.split(": ")[1] for p in found}
    assert keys == {
        "tenancy:edge.zones",
        "tenancy:edge.gateway.sourceCidrs",
        "tenancy:edge.gateway.controllerRoleArn",
        "tenancy:edge.tls.acme",
        "tenancy:edge.tls.roleArn",
        "tenancy:edge.externalDns.roleArn",
    }
    assert {p.split(": ")[1] for p in _settings_problems("prod", {})} == {"tenancy:edge.zones", "tenancy:edge.tls.acme"}


def test_a_gateway_without_tls_and_ingress_outside_platform_namespaces_are_refused() -> None:
    found = _settings_problems("dev", {"tls": {"enabled": False}})
    assert any("gateway.enabled needs tls.enabled" in p for p in found)
    found = _settings_problems("dev", {"ingress": {"enabled": True}})
    assert found == [
        "Pulumi.dev.yaml: tenancy:platformNamespaces: ingress is enabled: list its controller's namespace "
        "'ingress-nginx' here"
    ]


def test_app_hostnames_must_be_served_by_every_environment_the_app_runs_in(tmp_path: Path) -> None:
    app = {"name": "web", "image": {"repository": "docker.io/library/nginx", "tag": "1.29.4", "port": 8080}}
    prod_only = {**app, "hostnames": ["shop.acme.example"], "environments": ["prod"]}
    # Written once, resolved per stack and environment.
    everywhere = {**app, "name": "api", "hostnames": ["acme-{environment}.{suffix}"]}
    ok = tenant_document("acme", domains=["shop.acme.example"], apps=[prod_only, everywhere])
    run = plan("dev", write_tenants(tmp_path / "ok", ok))
    hosts = {
        (r["metadata"]["namespace"], r["metadata"]["name"]): r["spec"]["hostnames"]
        for r in objects_of_kind(run, "HTTPRoute")
        if r["metadata"]["namespace"].startswith("tenant-acme-")
    }
    assert hosts == {
        ("tenant-acme-dev", "api"): ["acme-dev.tenants.dev.example.com"],
        ("tenant-acme-prod", "api"): ["acme-prod.tenants.dev.example.com"],
        ("tenant-acme-prod", "web"): ["shop.acme.example"],
    }
    bad = tenant_document(
        "acme",
        domains=["shop.acme.example"],
        apps=[
            {**app, "hostnames": ["shop.northwind.example", "genomics.tenants.dev.example.com", "shop.acme.example"]}
        ],
    )
    with pytest.raises(ConfigurationError) as raised:
        plan("dev", write_tenants(tmp_path / "bad", bad))
    problems = {p.field: p.message for p in raised.value.problems}
    assert list(problems) == ["apps.0.hostnames.0", "apps.0.hostnames.1", "apps.0.hostnames.2"]
    # The tenant's own domain, served by prod only: the app also runs in dev.
    assert "dev (shop.acme.example)" in problems["apps.0.hostnames.2"]
    assert "prod (" not in problems["apps.0.hostnames.2"]
    chart = {"name": "web", "chart": {"repository": "https://c.example", "name": "web", "version": "1.0.0"}}
    with pytest.raises(ConfigurationError, match="hostnames need an image app with a port"):
        plan(
            "dev",
            write_tenants(
                tmp_path / "chart",
                tenant_document("acme", apps=[{**chart, "hostnames": ["acme.tenants.dev.example.com"]}]),
            ),
        )
