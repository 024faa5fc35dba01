"""Every admission rule of the bundle, evaluated offline by cel-cpp through tests/cel_admission.py.

The policies, bindings and tenant Namespaces are the ones the real program renders (dev: 1.36 with
the node-pool mutation; prod: 1.34 without). Each rule has objects that must be admitted and
objects that must be denied, with the denial message checked.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.core.labels import NODE_POOL_KEY
from tests.cel_admission import AdmissionChain, Decision, Request
from tests.support import kubernetes_objects, objects_of_kind
from tools.plan.harness import ProgramRun

ACME_DEV = "tenant-acme-dev"
PLATFORM_GROUPS = ["system:masters", "system:authenticated"]


@pytest.fixture(scope="module")
def dev(dev_plan: ProgramRun) -> AdmissionChain:
    return AdmissionChain(kubernetes_objects(dev_plan))


@pytest.fixture(scope="module")
def prod(prod_plan: ProgramRun) -> AdmissionChain:
    return AdmissionChain(kubernetes_objects(prod_plan))


def namespace(run: ProgramRun, name: str) -> dict[str, Any]:
    [found] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == name]
    return found


@pytest.fixture(scope="module")
def acme_dev(dev_plan: ProgramRun) -> dict[str, Any]:
    return namespace(dev_plan, ACME_DEV)


@pytest.fixture(scope="module")
def poolless(acme_dev: dict[str, Any]) -> dict[str, Any]:
    """acme's namespace as it would be for a tenant without a node pool."""
    copied = copy.deepcopy(acme_dev)
    del copied["metadata"]["labels"][NODE_POOL_KEY]
    return copied


def create(
    chain: AdmissionChain,
    resource: str,
    kind: str,
    obj: dict[str, Any],
    ns: dict[str, Any],
    **extra: Any,
) -> Decision:
    obj = {"kind": kind, **obj}
    obj.setdefault("metadata", {}).setdefault("namespace", ns["metadata"]["name"])
    return chain.admit(Request("CREATE", resource, kind, object=obj, namespace_object=ns, **extra))


def denied_with(decision: Decision, policy: str, text: str) -> bool:
    return any(d.startswith(f"{policy}: ") and text in d for d in decision.denials)


@pytest.fixture(scope="module")
def acme_prod(dev_plan: ProgramRun) -> dict[str, Any]:
    """acme's prod namespace: it serves the tenant's own name and domains (dev serves acme-dev.<suffix>)."""
    return namespace(dev_plan, "tenant-acme-prod")


# --- Rule 1: hostnames ----------------------------------------------------------------------


def ingress(*hosts: str, tls: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"rules": [{"host": h} if h else {} for h in hosts]}
    if tls is not None:
        spec["tls"] = [{"hosts": tls, "secretName": "web-tls"}]
    return {"apiVersion": "networking.k8s.io/v1", "metadata": {"name": "web"}, "spec": spec}


@pytest.mark.parametrize(
    "hosts",
    [
        ["acme.tenants.dev.example.com"],
        ["acme-prod.tenants.dev.example.com"],
        ["shop.acme-corp.example", "v1.api.acme-corp.example"],
        ["*.api.acme-corp.example"],
    ],
)
def test_ingress_inside_the_tenant_domains_is_admitted(
    dev: AdmissionChain, acme_prod: dict[str, Any], hosts: list[str]
) -> None:
    decision = create(dev, "networking.k8s.io/v1/ingresses", "Ingress", ingress(*hosts, tls=hosts), acme_prod)
    assert decision.allowed, decision.denials
    assert "tenancy-hostnames-ingress" in decision.applied


@pytest.mark.parametrize(
    "host",
    [
        "evilacme.tenants.dev.example.com",  # suffix trick
        "genomics-lab.tenants.dev.example.com",  # another tenant
        "tenants.dev.example.com",
        "*.tenants.dev.example.com",
        "api.acme-corp.example",  # only *.api.acme-corp.example is authorized
        "acme-corp.example",
        "shop.acme-corp.example.evil.org",
        # Deeper than a wildcard (no certificate covers it), or another environment's (dev's) name.
        "a.v1.api.acme-corp.example",
        "shop.acme.tenants.dev.example.com",
        "*.acme.tenants.dev.example.com",
        "acme-dev.tenants.dev.example.com",
    ],
)
def test_ingress_outside_the_tenant_domains_is_denied(
    dev: AdmissionChain, acme_prod: dict[str, Any], host: str
) -> None:
    decision = create(dev, "networking.k8s.io/v1/ingresses", "Ingress", ingress(host), acme_prod)
    assert denied_with(
        decision, "tenancy-hostnames-ingress", f"Ingress host {host} is outside the domains of tenant acme"
    )


def test_ingress_tls_host_is_checked_too(dev: AdmissionChain, acme_prod: dict[str, Any]) -> None:
    obj = ingress("shop.acme-corp.example", tls=["shop.acme-corp.example", "bank.example.com"])
    decision = create(dev, "networking.k8s.io/v1/ingresses", "Ingress", obj, acme_prod)
    assert decision.denials == [
        "tenancy-hostnames-ingress: Ingress TLS host bank.example.com is outside the domains of tenant acme "
        "(acme.tenants.dev.example.com, acme-prod.tenants.dev.example.com, shop.acme-corp.example, "
        "*.api.acme-corp.example)"
    ]


def test_ingress_rule_without_host_is_denied(dev: AdmissionChain, acme_prod: dict[str, Any]) -> None:
    decision = create(dev, "networking.k8s.io/v1/ingresses", "Ingress", ingress(""), acme_prod)
    assert denied_with(decision, "tenancy-hostnames-ingress", "every Ingress rule needs a host")


def test_ingress_update_is_checked(dev: AdmissionChain, acme_prod: dict[str, Any]) -> None:
    old = {"kind": "Ingress", **ingress("shop.acme-corp.example")}
    new = {"kind": "Ingress", **ingress("evilacme.tenants.dev.example.com")}
    for obj in (old, new):
        obj["metadata"]["namespace"] = "tenant-acme-prod"
    decision = dev.admit(
        Request(
            "UPDATE",
            "networking.k8s.io/v1/ingresses",
            "Ingress",
            object=new,
            old_object=old,
            namespace_object=acme_prod,
        )
    )
    assert denied_with(decision, "tenancy-hostnames-ingress", "evilacme.tenants.dev.example.com is outside")


@pytest.mark.parametrize(
    ("resource", "kind"), [("httproutes", "HTTPRoute"), ("grpcroutes", "GRPCRoute"), ("tlsroutes", "TLSRoute")]
)
def test_gateway_routes(dev: AdmissionChain, acme_prod: dict[str, Any], resource: str, kind: str) -> None:
    def route(hostnames: list[str] | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"parentRefs": [{"name": "platform", "namespace": "tenancy-gateway"}]}
        if hostnames is not None:
            spec["hostnames"] = hostnames
        return {"apiVersion": "gateway.networking.k8s.io/v1", "metadata": {"name": "web"}, "spec": spec}

    path = f"gateway.networking.k8s.io/v1/{resource}"
    assert create(dev, path, kind, route(["acme-prod.tenants.dev.example.com"]), acme_prod).allowed
    denied = create(dev, path, kind, route(["evilacme.tenants.dev.example.com"]), acme_prod)
    assert denied_with(denied, "tenancy-hostnames-routes", "route hostname evilacme.tenants.dev.example.com is outside")
    missing = create(dev, path, kind, route(None), acme_prod)
    assert denied_with(missing, "tenancy-hostnames-routes", f"{kind} needs spec.hostnames")


def test_certificates(dev: AdmissionChain, acme_prod: dict[str, Any]) -> None:
    def certificate(**spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "cert-manager.io/v1",
            "metadata": {"name": "web"},
            "spec": {"secretName": "web-tls", "issuerRef": {"name": "letsencrypt"}, **spec},
        }

    path = "cert-manager.io/v1/certificates"
    ok = certificate(dnsNames=["shop.acme-corp.example", "acme.tenants.dev.example.com"])
    assert create(dev, path, "Certificate", ok, acme_prod).allowed
    stolen = certificate(dnsNames=["shop.acme-corp.example", "status.example.org"])
    decision = create(dev, path, "Certificate", stolen, acme_prod)
    assert denied_with(decision, "tenancy-hostnames-certificates", "certificate name status.example.org is outside")
    common = certificate(commonName="evilacme.tenants.dev.example.com")
    decision = create(dev, path, "Certificate", common, acme_prod)
    assert denied_with(decision, "tenancy-hostnames-certificates", "evilacme.tenants.dev.example.com is outside")


def test_hostnames_are_not_checked_outside_tenant_namespaces(dev: AdmissionChain) -> None:
    platform_ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ingress-nginx", "labels": {}}}
    decision = create(dev, "networking.k8s.io/v1/ingresses", "Ingress", ingress("anything.example.com"), platform_ns)
    assert decision.allowed and decision.applied == []


# --- Rule 2: services -----------------------------------------------------------------------


def service(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}], **spec}}


def test_cluster_ip_service_is_admitted(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    assert create(dev, "/v1/services", "Service", service(), acme_dev).allowed
    assert create(dev, "/v1/services", "Service", service(type="ClusterIP"), acme_dev).allowed


def test_node_port_and_external_ips_are_denied(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    decision = create(dev, "/v1/services", "Service", service(type="NodePort"), acme_dev)
    assert denied_with(decision, "tenancy-services", "Services of type NodePort are not allowed")
    decision = create(dev, "/v1/services", "Service", service(externalIPs=["203.0.113.7"]), acme_dev)
    assert denied_with(decision, "tenancy-services", "Services may not set externalIPs")


def test_load_balancer_follows_the_tenant_switch(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    decision = create(dev, "/v1/services", "Service", service(type="LoadBalancer"), acme_dev)
    assert denied_with(
        decision, "tenancy-services", "LoadBalancer are not allowed for tenant acme (set allowLoadBalancer"
    )
    allowed = copy.deepcopy(acme_dev)
    allowed["metadata"]["annotations"]["tenancy.io/allow-load-balancer"] = "true"
    assert create(dev, "/v1/services", "Service", service(type="LoadBalancer"), allowed).allowed


# --- Rule 3: node pool ----------------------------------------------------------------------


def container(name: str = "app", **extra: Any) -> dict[str, Any]:
    """A container that satisfies the hardening rule."""
    return {
        "name": name,
        "image": "registry.acme-corp.example/acme/app:1.0.0",
        "imagePullPolicy": "Always",
        "resources": {"limits": {"memory": "256Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        **extra,
    }


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "metadata": {"name": "p"},
        "spec": {"containers": list(containers or [container()]), **spec},
    }


def own_pool(pool: str = "customers") -> dict[str, Any]:
    return {
        "nodeSelector": {NODE_POOL_KEY: pool},
        "tolerations": [{"key": NODE_POOL_KEY, "operator": "Equal", "value": pool, "effect": "NoSchedule"}],
    }


def test_prod_without_mutation_requires_the_pool_in_the_pod_spec(prod: AdmissionChain, prod_plan: ProgramRun) -> None:
    ns = namespace(prod_plan, "tenant-acme-prod")
    assert create(prod, "/v1/pods", "Pod", pod(**own_pool()), ns).allowed
    decision = create(prod, "/v1/pods", "Pod", pod(), ns)
    assert decision.denials == [
        "tenancy-node-pool: pods of tenant acme must run on node pool customers: "
        "set spec.nodeSelector {tenancy.io/pool: customers}"
    ]
    decision = create(prod, "/v1/pods", "Pod", pod(nodeSelector={NODE_POOL_KEY: "research"}), ns)
    assert denied_with(decision, "tenancy-node-pool", "must run on node pool customers")


def test_dev_mutation_injects_the_pool_and_the_result_is_admitted(
    dev: AdmissionChain, acme_dev: dict[str, Any]
) -> None:
    decision = create(dev, "/v1/pods", "Pod", pod(tolerations=[{"key": "gpu", "operator": "Exists"}]), acme_dev)
    assert decision.allowed, decision.denials
    assert decision.applied[0] == "tenancy-node-pool-injection"
    assert decision.object is not None
    spec = decision.object["spec"]
    assert spec["nodeSelector"] == {NODE_POOL_KEY: "customers"}
    assert spec["tolerations"] == [
        {"key": "gpu", "operator": "Exists"},
        {"key": NODE_POOL_KEY, "operator": "Equal", "value": "customers", "effect": "NoSchedule"},
    ]


def test_dev_mutation_overrides_another_pool_selector_and_keeps_an_existing_toleration(
    dev: AdmissionChain, acme_dev: dict[str, Any]
) -> None:
    spec = own_pool()
    spec["nodeSelector"] = {NODE_POOL_KEY: "research", "disk": "ssd"}
    decision = create(dev, "/v1/pods", "Pod", pod(**spec), acme_dev)
    assert decision.allowed, decision.denials
    assert decision.object is not None
    assert decision.object["spec"]["nodeSelector"] == {NODE_POOL_KEY: "customers", "disk": "ssd"}
    assert len(decision.object["spec"]["tolerations"]) == 1


@pytest.mark.parametrize(
    ("toleration", "message"),
    [
        (
            {"key": NODE_POOL_KEY, "operator": "Equal", "value": "research", "effect": "NoSchedule"},
            "pods of tenant acme may tolerate only tenancy.io/pool=customers (operator Equal)",
        ),
        ({"key": NODE_POOL_KEY, "operator": "Exists"}, "may tolerate only tenancy.io/pool=customers"),
        ({"operator": "Exists"}, "a toleration without a key tolerates every taint"),
        ({"operator": "Exists", "effect": "NoSchedule"}, "a toleration without a key tolerates every taint"),
    ],
)
def test_tolerating_another_pool_is_denied(
    dev: AdmissionChain, acme_dev: dict[str, Any], toleration: dict[str, Any], message: str
) -> None:
    # The mutation adds the tenant's own toleration; the foreign one must still be refused.
    decision = create(dev, "/v1/pods", "Pod", pod(tolerations=[toleration]), acme_dev)
    assert denied_with(decision, "tenancy-node-pool", message)


def test_poolless_tenant_may_tolerate_no_pool(dev: AdmissionChain, poolless: dict[str, Any]) -> None:
    assert create(dev, "/v1/pods", "Pod", pod(), poolless).allowed
    toleration = {"key": NODE_POOL_KEY, "operator": "Equal", "value": "customers", "effect": "NoSchedule"}
    decision = create(dev, "/v1/pods", "Pod", pod(tolerations=[toleration]), poolless)
    assert denied_with(decision, "tenancy-node-pool", "tenant acme has no node pool; its pods may not tolerate")


# --- Rule 4: workload hardening ----------------------------------------------------------------


def test_hardened_pod_is_admitted(prod: AdmissionChain, prod_plan: ProgramRun) -> None:
    ns = namespace(prod_plan, "tenant-acme-prod")
    caps = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}
    init = container("init", securityContext={"allowPrivilegeEscalation": False})
    obj = pod(container(securityContext=caps, ports=[{"containerPort": 80}]), initContainers=[init], **own_pool())
    decision = create(prod, "/v1/pods", "Pod", obj, ns)
    assert decision.allowed, decision.denials
    assert "tenancy-workloads" in decision.applied


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"securityContext": {"privileged": True, "allowPrivilegeEscalation": False}}, "container app is privileged"),
        ({"securityContext": {}}, "container app must set securityContext.allowPrivilegeEscalation: false"),
        ({"securityContext": {"allowPrivilegeEscalation": True}}, "must set securityContext.allowPrivilegeEscalation"),
        (
            {"securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"add": ["SYS_ADMIN"]}}},
            "container app adds capabilities other than NET_BIND_SERVICE",
        ),
        ({"ports": [{"containerPort": 80, "hostPort": 80}]}, "container app uses a hostPort"),
        ({"resources": {"requests": {"memory": "1Gi"}}}, "container app has no memory limit"),
    ],
)
def test_container_hardening_violations(
    dev: AdmissionChain, acme_dev: dict[str, Any], change: dict[str, Any], message: str
) -> None:
    decision = create(dev, "/v1/pods", "Pod", pod(container(**change)), acme_dev)
    assert denied_with(decision, "tenancy-workloads", message)


def test_init_container_without_memory_limit_is_denied(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    init = container("setup", resources={})
    decision = create(dev, "/v1/pods", "Pod", pod(container(), initContainers=[init]), acme_dev)
    assert decision.denials == [
        "tenancy-workloads: container setup has no memory limit (and the namespace LimitRange gave it none)"
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"hostNetwork": True}, "pods may not use the host's network, PID or IPC namespace"),
        ({"hostPID": True}, "pods may not use the host's network, PID or IPC namespace"),
        ({"hostIPC": True}, "pods may not use the host's network, PID or IPC namespace"),
        ({"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}, "volume root is a hostPath"),
        (
            {"volumes": [{"name": "share", "nfs": {"server": "10.0.0.5", "path": "/exports"}}]},
            "volume share mounts storage directly; use a PersistentVolumeClaim",
        ),
        (
            {"volumes": [{"name": "disk", "gcePersistentDisk": {"pdName": "genomics-lab-data"}}]},
            "volume disk mounts storage directly",
        ),
    ],
)
def test_host_access_is_denied(
    dev: AdmissionChain, acme_dev: dict[str, Any], spec: dict[str, Any], message: str
) -> None:
    decision = create(dev, "/v1/pods", "Pod", pod(**spec), acme_dev)
    assert denied_with(decision, "tenancy-workloads", message)


def test_claims_and_ephemeral_volumes_are_admitted(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    volumes = [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "config", "configMap": {"name": "app"}},
        {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
    ]
    decision = create(dev, "/v1/pods", "Pod", pod(volumes=volumes), acme_dev)
    assert decision.allowed, decision.denials


def test_ephemeral_debug_container_is_checked(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    old = {"kind": "Pod", **pod(**own_pool())}
    old["metadata"]["namespace"] = ACME_DEV
    new = copy.deepcopy(old)
    new["spec"]["ephemeralContainers"] = [
        {"name": "debug", "image": "busybox", "securityContext": {"privileged": True}}
    ]
    decision = dev.admit(
        Request(
            "UPDATE",
            "/v1/pods",
            "Pod",
            object=new,
            old_object=old,
            namespace_object=acme_dev,
            subresource="ephemeralcontainers",
        )
    )
    assert denied_with(decision, "tenancy-workloads", "container debug is privileged")


def test_registry_allow_list() -> None:
    import json

    from tests.support import plan
    from tests.vcluster.helpers import stack_virtual_clusters

    # A config override replaces all of tenancy:policy, so it repeats the stack's platform identity.
    identity = {"platformIdentities": {"users": ["tenancy-ci@tenancy-prod.iam.gserviceaccount.com"]}}
    policy = json.dumps({"allowedRegistries": ["registry.acme-corp.example", "ghcr.io/example"], **identity})
    # The example virtual clusters need their images from the allow-list too (docs/virtual-clusters.md).
    run = plan(
        "prod", policy=policy, virtualClusters=stack_virtual_clusters("prod", imageRegistry="ghcr.io/example/vc")
    )
    chain = AdmissionChain(kubernetes_objects(run))
    ns = namespace(run, "tenant-acme-prod")
    assert create(chain, "/v1/pods", "Pod", pod(**own_pool()), ns).allowed
    for image in (
        "docker.io/library/nginx:1.27",
        "nginx:1.27",
        "ghcr.io/example-evil/app:1",
        "registry.acme-corp.example.evil.io/x:1",
    ):
        decision = create(chain, "/v1/pods", "Pod", pod(container(image=image), **own_pool()), ns)
        assert decision.denials == [
            f"tenancy-workloads: image {image} is not from an allowed registry "
            "(registry.acme-corp.example, ghcr.io/example)"
        ]


def test_rendered_workloads_pass_the_bundle(dev: AdmissionChain, dev_plan: ProgramRun) -> None:
    """The platform's own Deployments (apps from tenant files) must be admissible in their namespaces."""
    deployments = objects_of_kind(dev_plan, "Deployment")
    for deployment in deployments:
        ns = namespace(dev_plan, deployment["metadata"]["namespace"])
        template = deployment["spec"]["template"]
        # LimitRanger runs before validating policies; emulate its memory limit default.
        spec = copy.deepcopy(template["spec"])
        for c in spec["containers"]:
            c.setdefault("resources", {}).setdefault("limits", {}).setdefault("memory", "512Mi")
        obj = {"apiVersion": "v1", "metadata": {"name": "p", **template.get("metadata", {})}, "spec": spec}
        decision = create(dev, "/v1/pods", "Pod", obj, ns)
        assert decision.allowed, (deployment["metadata"], decision.denials)


# --- Rule 5: platform-owned objects ----------------------------------------------------------


def platform_owned_objects(run: ProgramRun) -> list[dict[str, Any]]:
    return [
        obj
        for obj in kubernetes_objects(run)
        if obj["metadata"].get("labels", {}).get("tenancy.io/platform-owned") == "true"
    ]


def test_platform_may_manage_its_objects(dev: AdmissionChain, dev_plan: ProgramRun) -> None:
    owned = platform_owned_objects(dev_plan)
    assert {o["kind"] for o in owned} >= {"ResourceQuota", "LimitRange", "NetworkPolicy", "RoleBinding"}
    for obj in owned:
        ns = namespace(dev_plan, obj["metadata"]["namespace"])
        resource = _resource_of(obj)
        for operation in ("CREATE", "UPDATE", "DELETE"):
            new = None if operation == "DELETE" else obj
            old = None if operation == "CREATE" else obj
            decision = dev.admit(
                Request(
                    operation,
                    resource,
                    obj["kind"],
                    object=new,
                    old_object=old,
                    namespace_object=ns,
                    username="tenancy-ci",
                    groups=PLATFORM_GROUPS,
                )
            )
            assert decision.allowed, (obj["metadata"], operation, decision.denials)


def _resource_of(obj: dict[str, Any]) -> str:
    plural = {
        "ResourceQuota": "resourcequotas",
        "LimitRange": "limitranges",
        "NetworkPolicy": "networkpolicies",
        "RoleBinding": "rolebindings",
        "Namespace": "namespaces",
        "ServiceAccount": "serviceaccounts",
        "GitRepository": "gitrepositories",
        "Kustomization": "kustomizations",
    }[obj["kind"]]
    group_version = obj["apiVersion"] if "/" in obj["apiVersion"] else "/" + obj["apiVersion"]
    return f"{group_version}/{plural}"


@pytest.mark.parametrize("kind", ["ResourceQuota", "LimitRange", "NetworkPolicy", "RoleBinding"])
def test_others_may_not_change_or_delete_platform_objects(dev: AdmissionChain, dev_plan: ProgramRun, kind: str) -> None:
    obj = next(
        o for o in platform_owned_objects(dev_plan) if o["kind"] == kind and o["metadata"]["namespace"] == ACME_DEV
    )
    ns = namespace(dev_plan, ACME_DEV)
    changed = copy.deepcopy(obj)
    changed["metadata"]["labels"].pop("tenancy.io/platform-owned")  # hiding it does not help
    for operation, new, old in (("UPDATE", changed, obj), ("DELETE", None, obj)):
        decision = dev.admit(
            Request(
                operation,
                _resource_of(obj),
                kind,
                object=new,
                old_object=old,
                namespace_object=ns,
                username="alice@acme",
                groups=["acme-admins", "system:authenticated"],
            )
        )
        name = obj["metadata"]["name"]
        assert denied_with(
            decision,
            "tenancy-platform-owned",
            f"{kind} {name} is managed by the tenancy platform; change the tenant file instead "
            f"(alice@acme may not {operation.lower()} it)",
        ), decision.denials


def test_tenant_namespace_labels_are_platform_owned(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    relabelled = copy.deepcopy(acme_dev)
    relabelled["metadata"]["labels"][NODE_POOL_KEY] = "research"
    request = Request(
        "UPDATE", "/v1/namespaces", "Namespace", object=relabelled, old_object=acme_dev, username="mallory"
    )
    assert denied_with(
        dev.admit(request),
        "tenancy-platform-owned-namespaces",
        "Namespace tenant-acme-dev is managed by the tenancy platform",
    )
    # The namespace controller must still be able to empty a namespace being deleted.
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "tenancy-quota", "namespace": ACME_DEV, "labels": {"tenancy.io/platform-owned": "true"}},
    }
    cleanup = Request(
        "DELETE",
        "/v1/resourcequotas",
        "ResourceQuota",
        old_object=quota,
        namespace_object=acme_dev,
        username="system:serviceaccount:kube-system:namespace-controller",
        groups=["system:serviceaccounts"],
    )
    assert dev.admit(cleanup).allowed


def test_unlabelled_tenant_objects_are_not_platform_owned(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    policy = {"apiVersion": "networking.k8s.io/v1", "metadata": {"name": "allow-web"}, "spec": {"podSelector": {}}}
    decision = create(
        dev, "networking.k8s.io/v1/networkpolicies", "NetworkPolicy", policy, acme_dev, username="alice@acme"
    )
    assert decision.allowed and "tenancy-platform-owned" not in decision.applied


# --- Rule 6: RBAC escalation -----------------------------------------------------------------


def binding(role_kind: str, role: str, *subjects: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "metadata": {"name": "extra"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": list(subjects),
    }


def group(name: str) -> dict[str, Any]:
    return {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": name}


RB = "rbac.authorization.k8s.io/v1/rolebindings"


def test_binding_a_tenant_role_to_own_subjects_is_admitted(dev: AdmissionChain, acme_dev: dict[str, Any]) -> None:
    sa = {"kind": "ServiceAccount", "name": "ci", "namespace": ACME_DEV}
    obj = binding("ClusterRole", "tenancy-tenant-viewer", group("acme-support"), sa)
    assert create(dev, RB, "RoleBinding", obj, acme_dev).allowed


def test_rendered_role_bindings_pass_the_rbac_rule(dev: AdmissionChain, dev_plan: ProgramRun) -> None:
    """Even from a requester the rule matches (platform identities are not matched): what the platform
    renders is exactly what the namespace's `tenancy.io/group-roles` admits."""
    bindings = objects_of_kind(dev_plan, "RoleBinding")
    assert bindings
    for obj in bindings:
        ns = namespace(dev_plan, obj["metadata"]["namespace"])
        decision = dev.admit(Request("CREATE", RB, "RoleBinding", object=obj, namespace_object=ns))
        # (tenancy-platform-owned refuses them from anyone but the platform: another rule.)
        assert not [d for d in decision.denials if d.startswith("tenancy-rbac")], (obj["metadata"], decision.denials)
        assert "tenancy-rbac" in decision.applied


@pytest.mark.parametrize(
    ("role_kind", "role"),
    [("ClusterRole", "cluster-admin"), ("ClusterRole", "admin"), ("Role", "tenancy-tenant-admin")],
)
def test_binding_other_roles_is_denied(
    dev: AdmissionChain, acme_dev: dict[str, Any], role_kind: str, role: str
) -> None:
    decision = create(
        dev, RB, "RoleBinding", binding(role_kind, role, group("acme-admins")), acme_dev, username="stray@acme"
    )
    assert denied_with(
        decision,
        "tenancy-rbac",
        f"RoleBinding extra references {role_kind} {role}; tenant namespaces may bind only tenancy-tenant-admin, "
        "tenancy-tenant-deployer, tenancy-tenant-operator, tenancy-tenant-viewer",
    )


@pytest.mark.parametrize(
    ("subject", "named"),
    [
        (group("idp:genomics-lab-leads"), "Group idp:genomics-lab-leads"),
        (
            {"kind": "ServiceAccount", "name": "deployer", "namespace": "tenant-genomics-lab-dev"},
            "ServiceAccount deployer",
        ),
        ({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "eve@example.com"}, "User eve@example.com"),
        (group("system:authenticated"), "Group system:authenticated"),
    ],
)
def test_binding_foreign_subjects_is_denied(
    dev: AdmissionChain, acme_dev: dict[str, Any], subject: dict[str, Any], named: str
) -> None:
    obj = binding("ClusterRole", "tenancy-tenant-admin", group("acme-admins"), subject)
    decision = create(dev, RB, "RoleBinding", obj, acme_dev)
    assert denied_with(
        decision,
        "tenancy-rbac",
        f"RoleBinding extra binds {named} to tenancy-tenant-admin, which the platform does not grant in this"
        " namespace of tenant acme",
    )
