"""Issue 13 holes 3 and 4 played through RBAC and admission on dev, prod and prod-aws.

Hole 3, traffic smuggling: hand-written Endpoints/EndpointSlices (CVE-2021-25740) stop at RBAC;
ExternalName Services stop at admission. Hole 4, hostname hijack: Ingress defaultBackend,
controller annotations, ListenerSet listeners and every name field of a Certificate stop at
admission; CertificateRequests stop at RBAC. Each attack has its legitimate twin, admitted.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.admission.layers import (
    ACME_ADMIN,
    ACME_DEV,
    ACME_PROD,
    WRITERS,
    Cluster,
    cluster,
    platform_identity,
    stack_policy,
)
from tests.rbac import Subject
from tests.support import kubernetes_objects
from tools.plan.harness import ProgramRun

OWN = "shop.acme-corp.example"  # served by acme's prod on every stack (dev serves acme-dev.<suffix>)
PROD_DEPLOYER = Subject("ServiceAccount", "deployer", ACME_PROD)
FOREIGN = "genomics-lab.tenants.example.com"


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


# --- Hole 3 ------------------------------------------------------------------------------------


def service(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": spec}


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_external_name_service_is_denied_and_a_selector_service_admitted(
    stack: Cluster, who: Subject, namespace: str
) -> None:
    target = "web.tenant-genomics-lab-prod.svc.cluster.local"
    smuggler = service(type="ExternalName", externalName=target)
    outcome = stack.attempt(who, "CREATE", "/v1/services", smuggler, namespace)
    assert outcome.denied_by("tenancy-services", "Services of type ExternalName are not allowed"), outcome
    legit = service(selector={"app.kubernetes.io/name": "web"}, ports=[{"port": 80, "targetPort": 8080}])
    assert stack.attempt(who, "CREATE", "/v1/services", legit, namespace).stopped_by is None


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
@pytest.mark.parametrize(
    ("resource", "kind"), [("/v1/endpoints", "Endpoints"), ("discovery.k8s.io/v1/endpointslices", "EndpointSlice")]
)
def test_hand_written_endpoints_stop_at_rbac(
    stack: Cluster, who: Subject, namespace: str, resource: str, kind: str
) -> None:
    obj = {"kind": kind, "metadata": {"name": "web"}}
    assert stack.attempt(who, "CREATE", resource, obj, namespace).stopped_by == "rbac"
    assert stack.attempt(who, "UPDATE", resource, obj, namespace, old=dict(obj)).stopped_by == "rbac"


# --- Hole 4: Ingress ---------------------------------------------------------------------------

INGRESS = "networking.k8s.io/v1/ingresses"


def ingress(annotations: dict[str, str] | None = None, host: str = OWN, **spec: Any) -> dict[str, Any]:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    rule = {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
    body: dict[str, Any] = {"rules": [rule], **spec}
    metadata: dict[str, Any] = {"name": "web", **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata, "spec": body}


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_default_backend_is_denied(stack: Cluster, who: Subject, namespace: str) -> None:
    catch_all = ingress(defaultBackend={"service": {"name": "web", "port": {"number": 80}}})
    del catch_all["spec"]["rules"]
    outcome = stack.attempt(who, "CREATE", INGRESS, catch_all, namespace)
    assert outcome.denied_by("tenancy-hostnames-ingress", "spec.defaultBackend is not allowed"), outcome
    # Next to host rules it still becomes the controller's default server backend.
    beside_rules = ingress(defaultBackend={"service": {"name": "web", "port": {"number": 80}}})
    assert stack.attempt(who, "CREATE", INGRESS, beside_rules, namespace).denied_by("tenancy-hostnames-ingress")


HARMLESS = {
    "nginx.ingress.kubernetes.io/rewrite-target": "/$2",
    "nginx.ingress.kubernetes.io/use-regex": "true",
    "nginx.ingress.kubernetes.io/ssl-redirect": "true",
    "nginx.ingress.kubernetes.io/proxy-body-size": "8m",
    "nginx.ingress.kubernetes.io/cors-allow-origin": "https://shop.acme-corp.example, https://app.acme-corp.example",
    "nginx.ingress.kubernetes.io/whitelist-source-range": "10.0.0.0/8,192.0.2.0/24",
    "cert-manager.io/cluster-issuer": "letsencrypt",
    "external-dns.alpha.kubernetes.io/ttl": "60",
    "acme.cert-manager.io/http01-edit-in-place": "true",
    "meta.helm.sh/release-name": "web",
    "kubectl.kubernetes.io/last-applied-configuration": '{"apiVersion":"networking.k8s.io/v1"}',
}


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_harmless_annotations_are_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    outcome = stack.attempt(who, "CREATE", INGRESS, ingress(HARMLESS, stack.own_hostname(namespace)), namespace)
    assert outcome.stopped_by is None, outcome.decision.denials
    assert "tenancy-ingress-annotations" in outcome.decision.applied


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("nginx.ingress.kubernetes.io/server-alias", "bank.example.com"),
        ("nginx.ingress.kubernetes.io/server-snippet", "location / { proxy_pass http://x; }"),
        ("nginx.ingress.kubernetes.io/configuration-snippet", "more_set_headers X: y;"),
        ("nginx.ingress.kubernetes.io/auth-snippet", "x"),
        ("nginx.ingress.kubernetes.io/auth-url", "https://collector.evil.example/auth"),
        ("nginx.ingress.kubernetes.io/auth-signin", "https://evil.example/login"),
        ("nginx.ingress.kubernetes.io/mirror-target", "https://evil.example$request_uri"),
        ("nginx.ingress.kubernetes.io/permanent-redirect", "https://evil.example"),
        ("nginx.ingress.kubernetes.io/upstream-vhost", "web.tenant-genomics-lab-prod.svc"),
        ("nginx.ingress.kubernetes.io/default-backend", "web"),
        ("external-dns.alpha.kubernetes.io/hostname", "bank.example.com"),
        # cert-manager's ACME solver Ingress served by another controller's class (issue 26).
        ("acme.cert-manager.io/http01-ingress-class", "internal-nginx"),
        ("acme.cert-manager.io/http01-ingress-ingressclassname", "internal-nginx"),
    ],
)
def test_dangerous_annotations_are_denied(stack: Cluster, key: str, value: str) -> None:
    outcome = stack.attempt(ACME_ADMIN, "CREATE", INGRESS, ingress({key: value}), ACME_DEV)
    assert outcome.denied_by("tenancy-ingress-annotations", f"Ingress annotation {key} is not allowed for tenant acme")


@pytest.mark.parametrize("value", ["/$1;\n}", '/"x"', "/x#y", "/{x}"])
def test_injection_through_an_allowed_annotation_is_denied(stack: Cluster, value: str) -> None:
    obj = ingress({"nginx.ingress.kubernetes.io/rewrite-target": value})
    outcome = stack.attempt(ACME_ADMIN, "CREATE", INGRESS, obj, ACME_DEV)
    assert outcome.denied_by("tenancy-ingress-annotations", "has a value with characters outside"), outcome


def test_the_annotation_allow_list_is_the_stacks() -> None:
    from tests.support import plan

    controllers = {"traefik.ingress.kubernetes.io": ["router.entrypoints"]}
    custom = cluster(plan("prod", policy=stack_policy("prod", ingressAnnotations={"controllers": controllers})))
    own = custom.own_hostname(ACME_DEV)
    allowed = ingress({"traefik.ingress.kubernetes.io/router.entrypoints": "websecure"}, own)
    assert custom.attempt(ACME_ADMIN, "CREATE", INGRESS, allowed, ACME_DEV).stopped_by is None
    denied = ingress({"traefik.ingress.kubernetes.io/router.middlewares": "kube-system-strip@kubernetescrd"})
    assert custom.attempt(ACME_ADMIN, "CREATE", INGRESS, denied, ACME_DEV).denied_by("tenancy-ingress-annotations")
    # Replacing the map replaced the defaults: nginx is no longer governed on this stack.
    ungoverned = ingress({"nginx.ingress.kubernetes.io/server-alias": "x"}, own)
    assert custom.attempt(ACME_ADMIN, "CREATE", INGRESS, ungoverned, ACME_DEV).stopped_by is None


# --- Hole 4: ListenerSets ----------------------------------------------------------------------

LISTENERSETS = "gateway.networking.k8s.io/v1/listenersets"


def listener_set(*hostnames: str | None) -> dict[str, Any]:
    listeners = [
        {"name": f"l{i}", "port": 443, "protocol": "HTTPS", **({"hostname": h} if h else {})}
        for i, h in enumerate(hostnames)
    ]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "ListenerSet",
        "metadata": {"name": "web"},
        "spec": {"parentRef": {"name": "platform", "namespace": "tenancy-gateway"}, "listeners": listeners},
    }


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_listener_sets(stack: Cluster, who: Subject, namespace: str) -> None:
    own = stack.own_hostname(namespace)
    # prod serves the tenant's domains, the api wildcard among them (tenants/acme.yaml).
    names = [own, OWN, "*.api.acme-corp.example"] if namespace == ACME_PROD else [own]
    outcome = stack.attempt(who, "CREATE", LISTENERSETS, listener_set(*names), namespace)
    assert outcome.stopped_by is None, outcome.decision.denials
    foreign = stack.attempt(who, "CREATE", LISTENERSETS, listener_set(own, FOREIGN), namespace)
    assert foreign.denied_by("tenancy-hostnames-listenersets", f"listener hostname {FOREIGN} is outside")
    catch_all = stack.attempt(who, "CREATE", LISTENERSETS, listener_set(None), namespace)
    assert catch_all.denied_by("tenancy-hostnames-listenersets", "every ListenerSet listener needs a hostname")


# --- Hole 4: Certificates and CertificateRequests ----------------------------------------------

CERTIFICATES = "cert-manager.io/v1/certificates"


def certificate(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "web"},
        "spec": {"secretName": "web-tls", "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}, **spec},
    }


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_a_certificate_for_own_names_is_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    own = stack.own_hostname(namespace)
    ok = certificate(
        dnsNames=[own, *(["v1.api.acme-corp.example"] if namespace == ACME_PROD else [])],
        commonName=own,
        uris=[f"spiffe://{own}/ns/web/sa/web", f"https://user@{own}:8443/x?y#z"],
        emailAddresses=[f"ops@{own}"],
        literalSubject=f"CN={own},O=ACME Corporation,C=DE",
    )
    outcome = stack.attempt(who, "CREATE", CERTIFICATES, ok, namespace)
    assert outcome.stopped_by is None, outcome.decision.denials
    assert "tenancy-hostnames-certificates" in outcome.decision.applied


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"dnsNames": [OWN, "bank.example.com"]}, "certificate name bank.example.com is outside"),
        ({"commonName": "evil" + OWN}, f"certificate name evil{OWN} is outside"),
        ({"literalSubject": "CN=bank.example.com,O=ACME"}, "certificate name bank.example.com is outside"),
        ({"literalSubject": "O=ACME+cn=bank.example.com"}, "certificate name bank.example.com is outside"),
        ({"literalSubject": "2.5.4.3=bank.example.com"}, "certificate name bank.example.com is outside"),
        ({"literalSubject": f"CN={OWN}\\,bank.example.com"}, "literalSubject may not use escapes"),
        ({"uris": [f"https://{FOREIGN}/x"]}, f"certificate URI https://{FOREIGN}/x is outside"),
        ({"uris": ["spiffe://cluster.local/ns/kube-system/sa/admin"]}, "certificate URI spiffe://cluster.local"),
        ({"uris": [f"https://{OWN}@bank.example.com/"]}, "certificate URI https://"),
        ({"uris": ["urn:uuid:1234"]}, "certificate URI urn:uuid:1234 is outside"),
        ({"emailAddresses": ["ceo@example.com"]}, "certificate email address ceo@example.com is outside"),
        ({"emailAddresses": [f"a@b@{OWN}"]}, "certificate email address a@b@"),
        ({"ipAddresses": ["10.0.0.1"]}, "may not carry IP address SANs"),
        ({"otherNames": [{"oid": "1.3.6.1.4.1.311.20.2.3", "utf8Value": "a@b"}]}, "may not carry otherNames"),
        ({"isCA": True, "dnsNames": [OWN]}, "may not be CA certificates"),
    ],
)
def test_certificate_name_fields_outside_the_domains_are_denied(
    stack: Cluster, spec: dict[str, Any], message: str
) -> None:
    # In prod, which serves OWN: only the foreign part is refused.
    outcome = stack.attempt(PROD_DEPLOYER, "CREATE", CERTIFICATES, certificate(**spec), ACME_PROD)
    assert outcome.denied_by("tenancy-hostnames-certificates", message), outcome.decision.denials


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_certificate_requests_stop_at_rbac(stack: Cluster, who: Subject, namespace: str) -> None:
    """A CSR is a PEM blob no CEL can read; tenants ask through Certificates, cert-manager writes these."""
    request = {"apiVersion": "cert-manager.io/v1", "kind": "CertificateRequest", "metadata": {"name": "x"}}
    outcome = stack.attempt(who, "CREATE", "cert-manager.io/v1/certificaterequests", request, namespace)
    assert outcome.stopped_by == "rbac"


# --- No false denials of what the platform itself renders into tenant namespaces ---------------

PLURALS = {"Deployment": "apps/v1/deployments", "Secret": "/v1/secrets", "Service": "/v1/services"}


def test_rendered_tenant_objects_pass_the_new_rules(stack: Cluster) -> None:
    """Deployments (templates policy), Secrets (token rule) and Services (ExternalName) the program writes."""
    platform = platform_identity(stack.stack)
    checked = 0
    for obj in kubernetes_objects(stack.run):
        namespace = obj["metadata"].get("namespace", "")
        if obj["kind"] not in PLURALS or not namespace.startswith("tenant-"):
            continue
        outcome = stack.attempt(platform, "CREATE", PLURALS[obj["kind"]], obj, namespace)
        assert outcome.stopped_by is None, (obj["kind"], obj["metadata"]["name"], outcome.decision.denials)
        checked += 1
    assert checked >= 2


# --- Hole 4: IngressClasses --------------------------------------------------------------------


@pytest.fixture(scope="module")
def with_classes() -> Cluster:
    from tests.support import plan

    return cluster(plan("prod", policy=stack_policy("prod", ingressAnnotations={"classes": ["nginx"]})))


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_another_controllers_class_is_denied_where_the_stack_lists_classes(
    with_classes: Cluster, who: Subject, namespace: str
) -> None:
    internal = with_classes.attempt(who, "CREATE", INGRESS, ingress(ingressClassName="internal"), namespace)
    assert internal.denied_by("tenancy-ingress-annotations", "must use an allowed IngressClass (nginx)"), internal
    assert internal.denied_by("tenancy-ingress-annotations", "it names internal")
    # No class and no default class marked in the cluster: nothing serves it, and it is refused.
    assert with_classes.attempt(who, "CREATE", INGRESS, ingress(), namespace).denied_by("tenancy-ingress-annotations")
    legacy = ingress({"kubernetes.io/ingress.class": "internal"}, ingressClassName="nginx")
    assert with_classes.attempt(who, "CREATE", INGRESS, legacy, namespace).denied_by("tenancy-ingress-annotations")
    own = with_classes.own_hostname(namespace)
    allowed = with_classes.attempt(who, "CREATE", INGRESS, ingress(host=own, ingressClassName="nginx"), namespace)
    assert allowed.stopped_by is None, allowed.decision.denials


def test_any_class_is_admitted_where_the_stack_lists_none(stack: Cluster) -> None:
    """The default: class names are the cluster's own, so the program cannot guess them."""
    obj = ingress(host=stack.own_hostname(ACME_DEV), ingressClassName="internal")
    outcome = stack.attempt(ACME_ADMIN, "CREATE", INGRESS, obj, ACME_DEV)
    assert outcome.stopped_by is None, outcome.decision.denials


def _with_path(path: str, host: str = OWN) -> dict[str, Any]:
    obj = ingress({"nginx.ingress.kubernetes.io/use-regex": "true"}, host)
    obj["spec"]["rules"][0]["http"]["paths"][0].update({"path": path, "pathType": "ImplementationSpecific"})
    return obj


@pytest.mark.parametrize(
    "path",
    ["/x;\n}\nlocation /y {", "/a{2}", '/"x"', "/x#y", "/x\\y", "/a b", "/x'y"],
)
def test_paths_carrying_configuration_syntax_are_denied(stack: Cluster, path: str) -> None:
    outcome = stack.attempt(ACME_ADMIN, "CREATE", INGRESS, _with_path(path), ACME_DEV)
    assert outcome.denied_by("tenancy-ingress-annotations", "has a path with characters outside"), outcome


@pytest.mark.parametrize("path", ["/", "/api/v1/users", "/api(/|$)(.*)", "/static/.+.css$", "/~me"])
def test_plain_and_regex_paths_are_admitted(stack: Cluster, path: str) -> None:
    obj = _with_path(path, stack.own_hostname(ACME_DEV))
    assert stack.attempt(ACME_ADMIN, "CREATE", INGRESS, obj, ACME_DEV).stopped_by is None
