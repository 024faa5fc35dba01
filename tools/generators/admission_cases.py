"""Attacks and legitimate requests against the dev stack, as data: one list, two judges.

Each case is a request a tenant identity makes (who, where, what object) and the outcome it must
get: stopped by RBAC, denied by a named admission policy, or admitted. The same list is judged
offline by the layered evaluator of the attack tests (tests/admission/test_admission_cases.py:
the RBAC authorizer, then mutating and validating admission with a real CEL engine) and on a real
kind cluster by scripts/e2e/admission.sh, which sends each exported manifest as a server-side
dry-run create impersonating the same identity (`tenancy e2e-manifests --write`). A case
cannot drift between the two: both read it from here.

Only CREATE requests: a dry-run create needs no object to exist first. The objects are the attack
tests' own (tests/admission/test_attacks_*.py), on the tenant `acme` of Pulumi.dev.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ACME_DEV, ACME_PROD, GENOMICS_DEV = "tenant-acme-dev", "tenant-acme-prod", "tenant-genomics-lab-dev"
# The dev environment's own name on the dev stack (components/model/tenant_file/hostnames.py): dev
# never serves prod's names such as shop.acme-corp.example.
OWN_HOST = "acme-dev.tenants.dev.example.com"
FOREIGN_HOST = "genomics-lab.tenants.dev.example.com"
Expect = Literal["admit", "rbac", "deny"]


@dataclass(frozen=True)
class Identity:
    """Who makes the request, as the API server sees an impersonated user: a name and groups."""

    name: str
    groups: tuple[str, ...]


# A member of acme's admin group (Pulumi.dev.yaml: tenants/acme.yaml `access.admin`).
ACME_ADMIN = Identity("acme-admin@example.com", ("acme-admins", "system:authenticated"))
# acme's GitOps deployer in prod, the only writer there.
ACME_PROD_DEPLOYER = Identity(
    f"system:serviceaccount:{ACME_PROD}:deployer",
    ("system:serviceaccounts", f"system:serviceaccounts:{ACME_PROD}", "system:authenticated"),
)


@dataclass(frozen=True)
class Case:
    """One request and the outcome it must get (`policy`: the denying policy's name for `deny`)."""

    id: str
    who: Identity
    namespace: str
    # `group/version/plural` as the RBAC evaluator and admission requests name resources.
    resource: str
    obj: dict[str, Any]
    expect: Expect
    policy: str = ""
    why: str = field(default="", compare=False)


def _container(**extra: Any) -> dict[str, Any]:
    return {
        "name": "app",
        "image": "docker.io/nginxinc/nginx-unprivileged:1.29.4-alpine3.23",
        # Always pulled: a cached image on a shared node is never started unchecked (tenancy-workloads).
        "imagePullPolicy": "Always",
        "resources": {"limits": {"memory": "256Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        **extra,
    }


def pod_spec(pool: str = "customers", **extra: Any) -> dict[str, Any]:
    """A pod spec every rule admits on `pool` (acme's is `customers`): hardened and limited."""
    toleration = {"key": "tenancy.io/pool", "operator": "Equal", "value": pool, "effect": "NoSchedule"}
    return {
        "containers": [_container()],
        "nodeSelector": {"tenancy.io/pool": pool},
        "tolerations": [toleration],
        **extra,
    }


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": pod_spec(**spec)}


def _deployment(name: str, **spec: Any) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": name}
    template = {"metadata": {"labels": labels}, "spec": pod_spec(**spec)}
    body = {"selector": {"matchLabels": labels}, "template": template}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": body}


def _service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def _ingress(name: str, host: str) -> dict[str, Any]:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    rule = {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name},
        "spec": {"rules": [rule]},
    }


def _config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def _claim(name: str, **spec: Any) -> dict[str, Any]:
    # The dev stack's platform StorageClass (tenancy:storage), the only kind of class a claim may name.
    body = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "tenancy-standard",
        "resources": {"requests": {"storage": "1Gi"}},
        **spec,
    }
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": body}


PODS, DEPLOYMENTS, SERVICES = "/v1/pods", "apps/v1/deployments", "/v1/services"
PORT = [{"port": 80, "targetPort": 8080}]
SELECTOR = {"app.kubernetes.io/name": "web"}
TOKEN = {"kubernetes.io/service-account.name": "deployer"}

CASES: list[Case] = [
    # --- denied by admission ---------------------------------------------------------------
    Case(
        "pod-node-name",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _pod("e2e-node-name", nodeName="kind-worker"),
        "deny",
        "tenancy-scheduling-pods",
        "spec.nodeName skips the scheduler and the pool",
    ),
    Case(
        "pod-priority-class",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _pod("e2e-priority", priorityClassName="system-cluster-critical"),
        "deny",
        "tenancy-scheduling-pods",
        "a platform priority class evicts other tenants",
    ),
    Case(
        "deployment-node-name",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        DEPLOYMENTS,
        _deployment("e2e-node-name", nodeName="kind-worker"),
        "deny",
        "tenancy-scheduling-templates",
        "the same through a pod template",
    ),
    Case(
        "pod-foreign-pool",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _pod("e2e-foreign-pool", pool="research"),
        "deny",
        "tenancy-node-pool",
        "another tenant group's nodes",
    ),
    Case(
        "service-node-port",
        ACME_ADMIN,
        ACME_DEV,
        SERVICES,
        _service("e2e-node-port", type="NodePort", selector=SELECTOR, ports=PORT),
        "deny",
        "tenancy-services",
        "a port on every node",
    ),
    Case(
        "service-external-name",
        ACME_ADMIN,
        ACME_DEV,
        SERVICES,
        _service("e2e-external-name", type="ExternalName", externalName=f"web.{GENOMICS_DEV}.svc.cluster.local"),
        "deny",
        "tenancy-services",
        "traffic smuggled to another tenant through the ingress controller",
    ),
    Case(
        "ingress-foreign-host",
        ACME_ADMIN,
        ACME_DEV,
        "networking.k8s.io/v1/ingresses",
        _ingress("e2e-foreign-host", FOREIGN_HOST),
        "deny",
        "tenancy-hostnames-ingress",
        "another tenant's hostname",
    ),
    Case(
        "secret-token",
        ACME_ADMIN,
        ACME_DEV,
        "/v1/secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "e2e-token", "annotations": TOKEN},
            "type": "kubernetes.io/service-account-token",
        },
        "deny",
        "tenancy-service-account-token-secrets",
        "a token that never expires",
    ),
    Case(
        "claim-volume-name",
        ACME_ADMIN,
        ACME_DEV,
        "/v1/persistentvolumeclaims",
        _claim("e2e-volume-name", volumeName="pvc-genomics-lab-data"),
        "deny",
        "tenancy-volume-claims",
        "another tenant's released volume",
    ),
    # --- stopped by RBAC ---------------------------------------------------------------------
    Case(
        "admin-writes-prod",
        ACME_ADMIN,
        ACME_PROD,
        "/v1/configmaps",
        _config_map("e2e-prod"),
        "rbac",
        why="prod is written only by GitOps",
    ),
    Case(
        "admin-writes-other-tenant",
        ACME_ADMIN,
        GENOMICS_DEV,
        "/v1/configmaps",
        _config_map("e2e-other"),
        "rbac",
        why="another tenant's namespace",
    ),
    Case(
        "admin-writes-endpoints",
        ACME_ADMIN,
        ACME_DEV,
        "/v1/endpoints",
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e2e-endpoints"}},
        "rbac",
        why="hand-written endpoints (CVE-2021-25740)",
    ),
    # --- admitted ------------------------------------------------------------------------------
    Case("pod-own-pool", ACME_ADMIN, ACME_DEV, PODS, _pod("e2e-pod"), "admit", why="a hardened pod on its pool"),
    Case(
        "service-cluster-ip",
        ACME_ADMIN,
        ACME_DEV,
        SERVICES,
        _service("e2e-service", selector=SELECTOR, ports=PORT),
        "admit",
        why="a ClusterIP Service",
    ),
    Case(
        "ingress-own-host",
        ACME_ADMIN,
        ACME_DEV,
        "networking.k8s.io/v1/ingresses",
        _ingress("e2e-own-host", OWN_HOST),
        "admit",
        why="a hostname the environment serves",
    ),
    Case("config-map", ACME_ADMIN, ACME_DEV, "/v1/configmaps", _config_map("e2e-config"), "admit"),
    Case(
        "deployer-deploys-prod",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        DEPLOYMENTS,
        _deployment("e2e-deploy"),
        "admit",
        why="GitOps writes prod",
    ),
    Case(
        "claim-dynamic",
        ACME_ADMIN,
        ACME_DEV,
        "/v1/persistentvolumeclaims",
        _claim("e2e-claim"),
        "admit",
        why="a dynamically provisioned volume",
    ),
]

# --- Access: `kubectl auth can-i` for every persona (scripts/e2e/can-i.sh) -----------------------

ACME_OPERATOR = Identity("acme-oncall@example.com", ("acme-oncall", "system:authenticated"))
ACME_VIEWER = Identity("acme-support@example.com", ("acme-support", "system:authenticated"))
ACME_DEV_DEPLOYER = Identity(
    f"system:serviceaccount:{ACME_DEV}:deployer",
    ("system:serviceaccounts", f"system:serviceaccounts:{ACME_DEV}", "system:authenticated"),
)
PERSONAS = {
    "admin": ACME_ADMIN,
    "operator": ACME_OPERATOR,
    "viewer": ACME_VIEWER,
    "deployer-dev": ACME_DEV_DEPLOYER,
    "deployer-prod": ACME_PROD_DEPLOYER,
}


@dataclass(frozen=True)
class Access:
    """Whether `persona` may `verb` the resource (`group`, `plural`, optional subresource) there."""

    persona: str
    verb: str
    group: str
    plural: str
    namespace: str
    allowed: bool
    subresource: str = ""

    @property
    def who(self) -> Identity:
        return PERSONAS[self.persona]

    @property
    def kubectl_resource(self) -> str:
        """The resource as `kubectl auth can-i` names it (`deployments.apps`, `pods`)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _access(persona: str, verb: str, resource: str, namespace: str, allowed: bool, subresource: str = "") -> Access:
    """`resource` is `plural` (core) or `group/plural`."""
    group, _, plural = resource.rpartition("/")
    return Access(persona, verb, group, plural, namespace, allowed, subresource)


def _matrix() -> list[Access]:
    """Per persona: what its role grants in its own namespaces, and what it never may."""
    deployments, policies = "apps/deployments", "networking.k8s.io/networkpolicies"
    return [
        # admin: read-write in dev, read-only in prod (humans never write prod), nothing elsewhere.
        _access("admin", "create", deployments, ACME_DEV, True),
        _access("admin", "get", "secrets", ACME_DEV, True),
        _access("admin", "create", "pods", ACME_DEV, True, "exec"),
        _access("admin", "create", deployments, ACME_PROD, False),
        _access("admin", "get", "secrets", ACME_PROD, False),
        _access("admin", "list", "pods", ACME_PROD, True),
        # Its own NetworkPolicies: RBAC lets it, admission keeps them inside the namespace (rule 7).
        _access("admin", "update", policies, ACME_DEV, True),
        _access("admin", "delete", "resourcequotas", ACME_DEV, False),
        _access("admin", "list", "pods", GENOMICS_DEV, False),
        _access("admin", "create", "rbac.authorization.k8s.io/rolebindings", GENOMICS_DEV, False),
        # operator: read everything but secrets, restart and scale.
        _access("operator", "get", "secrets", ACME_DEV, False),
        _access("operator", "delete", "pods", ACME_DEV, True),
        _access("operator", "update", deployments, ACME_DEV, True, "scale"),
        _access("operator", "create", deployments, ACME_DEV, False),
        # viewer: read everything but secrets.
        _access("viewer", "list", "pods", ACME_DEV, True),
        _access("viewer", "get", "secrets", ACME_DEV, False),
        _access("viewer", "create", "configmaps", ACME_DEV, False),
        # deployers: write their own namespace, no exec, never the other environment.
        _access("deployer-prod", "create", deployments, ACME_PROD, True),
        _access("deployer-prod", "create", "pods", ACME_PROD, False, "exec"),
        _access("deployer-prod", "create", deployments, ACME_DEV, False),
        _access("deployer-dev", "create", deployments, ACME_DEV, True),
        _access("deployer-dev", "get", "secrets", ACME_PROD, False),
    ]


ACCESS: list[Access] = _matrix()
