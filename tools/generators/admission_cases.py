"""Attacks and legitimate requests against the dev stack, as data: one list, two judges.

Each case is a request a tenant identity makes (who, where, what object) and the outcome it must
get: stopped by RBAC, denied by a named admission policy, or admitted. The same list is judged
offline by the layered evaluator of the attack tests (tests/admission/test_admission_cases.py:
the RBAC authorizer, then mutating and validating admission with a real CEL engine) and on a real
kind cluster by scripts/e2e/admission.sh, which sends each exported manifest as a server-side
dry-run create impersonating the same identity (`tenancy e2e-manifests --write`). A case
cannot drift between the two: both read it from here.

Most are CREATE requests: a dry-run create needs no object to exist first. Issue 43 adds requests
against objects that exist after `up` (`verb` `patch`, a JSON merge patch sent as a server-side dry
run, to the object or a subresource; `replace`, a PUT of the live object with the patch merged in,
for the subresources only a PUT reaches (`namespaces/finalize`) and the identities RBAC gives
`update` but not `patch`, as kube-controller-manager's), by every identity of the threat model,
including a stray identity the run grants subresource writes (`STRAY_GRANT`). The objects are the attack
tests' own (tests/admission/test_attacks_*.py), on the tenants `acme` and `operator-lab` (its
virtual-cluster namespace) of Pulumi.dev.yaml, and only of kinds the real run serves (built-in
kinds and the CRDs it installs). `LIVE_CLASSES` names the attack class of
docs/admission-attacks.md each case replays; docs/real-run.md lists the classes that stay offline.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from components.model.core.labels import DISRUPTION_BUDGET_KEY

ACME_DEV, ACME_PROD, GENOMICS_DEV = "tenant-acme-dev", "tenant-acme-prod", "tenant-genomics-lab-dev"
# The dev environment's own name on the dev stack (components/model/tenant_file/hostnames.py): dev
# never serves prod's names such as shop.acme-corp.example.
OWN_HOST = "acme-dev.tenants.dev.example.com"
# prod's own name, and a name under its `*.api.acme-corp.example` domain (prod serves the domains).
PROD_HOST = "acme-prod.tenants.dev.example.com"
PROD_DOMAIN_HOST = "v1.api.acme-corp.example"
FOREIGN_HOST = "genomics-lab.tenants.dev.example.com"
Expect = Literal["admit", "rbac", "deny"]
Verb = Literal["create", "patch", "replace"]


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

# A member of acme's operator group: reads all but Secrets, restarts and scales.
ACME_OPERATOR = Identity("acme-oncall@example.com", ("acme-oncall", "system:authenticated"))


@dataclass(frozen=True)
class Case:
    """One request and the outcome it must get (`policy`: the denying policy's name for `deny`; where
    several policies deny it, all of them joined by `|`: the API server reports one of them, which
    one depends on its map order (k8s.io/apiserver v0.36 policy/generic/policy_source.go
    `policiesToBindings`), so the live replay accepts any and the offline judge requires every one)."""

    id: str
    who: Identity
    namespace: str
    # `group/version/plural` as the RBAC evaluator and admission requests name resources.
    resource: str
    # create: the object; patch and replace: the JSON merge patch applied to the live `target`.
    obj: dict[str, Any]
    expect: Expect
    policy: str = ""
    why: str = field(default="", compare=False)
    verb: Verb = "create"
    # patch and replace: the existing object's kind and name (in `namespace`, '' for a Namespace);
    # replace reaches core-group objects only (scripts/e2e/admission.sh builds an /api/v1 path).
    kind: str = ""
    target: str = ""
    subresource: str = ""


def manifest(case: Case) -> dict[str, Any]:
    """The case's object as sent to the API server (in its namespace), or its merge patch."""
    obj = copy.deepcopy(case.obj)
    if case.verb == "create":
        obj["metadata"]["namespace"] = case.namespace
    return obj


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


def _cron_job(name: str, **spec: Any) -> dict[str, Any]:
    job = {"template": {"spec": {**pod_spec(**spec), "restartPolicy": "Never"}}}
    body = {"schedule": "0 * * * *", "jobTemplate": {"spec": job}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": body}


def _job(name: str, **spec: Any) -> dict[str, Any]:
    body = {"template": {"spec": {**pod_spec(**spec), "restartPolicy": "Never"}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": body}


def _annotated_ingress(name: str, annotations: dict[str, str], path: str = "/", host: str = OWN_HOST) -> dict[str, Any]:
    obj = _ingress(name, host)
    obj["metadata"]["annotations"] = annotations
    if path != "/":
        obj["spec"]["rules"][0]["http"]["paths"][0].update({"path": path, "pathType": "ImplementationSpecific"})
    return obj


def _listener_set(name: str, *hostnames: str | None) -> dict[str, Any]:
    listeners = [
        {"name": f"l{i}", "port": 443, "protocol": "HTTPS", **({"hostname": h} if h else {})}
        for i, h in enumerate(hostnames)
    ]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "ListenerSet",
        "metadata": {"name": name},
        "spec": {"parentRef": {"name": "platform", "namespace": "tenancy-gateway"}, "listeners": listeners},
    }


def _route(name: str, *hostnames: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **({"annotations": annotations} if annotations else {})}
    parent = {"name": "platform", "namespace": "tenancy-gateway", "sectionName": "https"}
    rule = {"backendRefs": [{"name": "web", "port": 80}]}
    spec = {"parentRefs": [parent], "hostnames": list(hostnames), "rules": [rule]}
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": metadata, "spec": spec}


def _certificate(name: str, **spec: Any) -> dict[str, Any]:
    issuer = {"name": "letsencrypt", "kind": "ClusterIssuer"}
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": name},
        "spec": {"secretName": f"{name}-tls", "issuerRef": issuer, **spec},
    }


def _secret(name: str, type_: str = "Opaque", **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, **metadata}, "type": type_}


def _budget(name: str, selector: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A budget selecting `tenancy.io/disruption-budget: <name>`, the one shape tenants write, unless told."""
    labels = {DISRUPTION_BUDGET_KEY: name} if selector is None else selector
    body = {"selector": {"matchLabels": labels}, **spec}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": body}


def _memory_pod(name: str, limit: str) -> dict[str, Any]:
    # The request is stated (0): LimitRanger would otherwise default it above a small limit.
    obj = _pod(name)
    obj["spec"]["containers"][0]["resources"] = {"limits": {"memory": limit}, "requests": {"memory": "0"}}
    return obj


def _pulling_pod(name: str, policy: str) -> dict[str, Any]:
    obj = _pod(name)
    obj["spec"]["containers"][0]["imagePullPolicy"] = policy
    return obj


def _network_policy(name: str, **rules: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": SELECTOR}, "policyTypes": [k.title() for k in rules]}
    spec.update(rules)
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name}, "spec": spec}


def _flux(resource: str, kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": resource.rpartition("/")[0], "kind": kind, "metadata": {"name": name}, "spec": spec}


def _release(name: str, **changes: Any) -> dict[str, Any]:
    spec = {"interval": "10m", "serviceAccountName": "deployer", "chartRef": {"kind": "OCIRepository", "name": "web"}}
    return _flux(HELM_RELEASES, "HelmRelease", name, **{**spec, **changes})


def _kubeconfig_secret(name: str, server: str = "https://169.254.169.254") -> dict[str, Any]:
    config = f"apiVersion: v1\nkind: Config\nclusters: [{{name: x, cluster: {{server: '{server}'}}}}]\n"
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"config": config}}


def _role_binding(name: str, role: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group}],
    }


PODS, DEPLOYMENTS, SERVICES = "/v1/pods", "apps/v1/deployments", "/v1/services"
INGRESSES, SECRETS, CLAIMS = "networking.k8s.io/v1/ingresses", "/v1/secrets", "/v1/persistentvolumeclaims"
POLICIES, BUDGETS = "networking.k8s.io/v1/networkpolicies", "policy/v1/poddisruptionbudgets"
ROUTES = "gateway.networking.k8s.io/v1/httproutes"
# The Gateway's proxies in their namespace (Envoy Gateway's labels, components/guardrails/network.py
# `edge_peers`): the only edge peer a tenant policy may admit; the namespace alone holds the controller.
EDGE_NAMESPACE = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "envoy-gateway-system"}}}
EDGE_PROXIES = {
    **EDGE_NAMESPACE,
    "podSelector": {
        "matchLabels": {"app.kubernetes.io/component": "proxy", "app.kubernetes.io/managed-by": "envoy-gateway"}
    },
}
HELM_RELEASES = "helm.toolkit.fluxcd.io/v2/helmreleases"
OCI_REPOSITORIES = "source.toolkit.fluxcd.io/v1/ocirepositories"
OCI_URL = "oci://ghcr.io/acme/charts/web"
PORT = [{"port": 80, "targetPort": 8080}]
SELECTOR = {"app.kubernetes.io/name": "web"}
TOKEN = {"kubernetes.io/service-account.name": "deployer"}
# Harmless Ingress annotations of every governed prefix (tests/admission/test_attacks_traffic.py HARMLESS).
HARMLESS = {
    "nginx.ingress.kubernetes.io/rewrite-target": "/$2",
    "nginx.ingress.kubernetes.io/use-regex": "true",
    "nginx.ingress.kubernetes.io/proxy-body-size": "8m",
    "nginx.ingress.kubernetes.io/whitelist-source-range": "10.0.0.0/8,192.0.2.0/24",
    "cert-manager.io/cluster-issuer": "letsencrypt",
    "external-dns.alpha.kubernetes.io/ttl": "60",
    "meta.helm.sh/release-name": "web",
}
DNS_PEER = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
}
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
# A mounted Secret, under the default account: the local cloud has no `workload` account (no
# External Secrets), and the ServiceAccount admission plugin refuses a pod naming a missing one.
SECRET_VOLUME = [{"name": "db", "secret": {"secretName": "db"}}]
OPERATOR_LAB_DEV = "tenant-operator-lab-dev"
OPERATOR_LAB_DEV_DEPLOYER = Identity(
    f"system:serviceaccount:{OPERATOR_LAB_DEV}:deployer",
    ("system:serviceaccounts", f"system:serviceaccounts:{OPERATOR_LAB_DEV}", "system:authenticated"),
)
# The virtual cluster's syncer in operator-lab's dev namespace (components/vcluster/values.py SYNCER_ACCOUNT).
OPERATOR_LAB_DEV_SYNCER = Identity(
    f"system:serviceaccount:{OPERATOR_LAB_DEV}:vcluster",
    ("system:serviceaccounts", f"system:serviceaccounts:{OPERATOR_LAB_DEV}", "system:authenticated"),
)

# Issue 43 (2b): the account helm-controller applies operator-lab dev's vCluster release as
# (components/vcluster/values.py INSTALLER_ACCOUNT), impersonated by the replay as helm-controller does.
OPERATOR_LAB_DEV_INSTALLER = Identity(
    f"system:serviceaccount:{OPERATOR_LAB_DEV}:vcluster-installer",
    ("system:serviceaccounts", f"system:serviceaccounts:{OPERATOR_LAB_DEV}", "system:authenticated"),
)

# Issue 43: an identity granted more than it should have (an operator's account, a future role),
# the attacker of every "second lock". The real run grants it STRAY_GRANT for the replay and takes
# the grant away afterwards (scripts/e2e/admission.sh); no tenant identity holds any of it.
STRAY = Identity("tenancy-e2e-stray@example.com", ("tenancy-e2e-strays", "system:authenticated"))
STRAY_GRANT: list[dict[str, Any]] = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "tenancy-e2e-stray"},
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["namespaces", "namespaces/status", "namespaces/finalize", "resourcequotas/status"],
                "verbs": ["get", "update", "patch"],
            },
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"], "verbs": ["create"]},
            # Issue 43 (2b): what the StatefulSet controller builds the control plane pod from.
            {"apiGroups": ["apps"], "resources": ["controllerrevisions"], "verbs": ["create"]},
            # RBAC's escalation check: who binds a role must hold what it grants (or `bind`).
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"]},
        ],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "tenancy-e2e-stray"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "tenancy-e2e-stray"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "tenancy-e2e-strays"}],
    },
]
# kube-controller-manager's controllers, as the real run starts it (one service account per controller).
NAMESPACE_CONTROLLER = Identity(
    "system:serviceaccount:kube-system:namespace-controller",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
)
QUOTA_CONTROLLER = Identity(
    "system:serviceaccount:kube-system:resourcequota-controller",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
)
STATEFULSET_CONTROLLER = Identity(
    "system:serviceaccount:kube-system:statefulset-controller",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
)
NAMESPACES, QUOTAS = "/v1/namespaces", "/v1/resourcequotas"
# The platform's quota in every tenant namespace (components/guardrails/quota.py).
QUOTA = "tenancy-quota"
# CloudNativePG's primary budget selects these (components/admission/rules/scheduling.py OPERATOR_BUDGET_LABELS).
CNPG_PRIMARY = {"cnpg.io/cluster": "db", "cnpg.io/instanceRole": "primary"}


def _labelled_pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    obj = _pod(name)
    obj["metadata"]["labels"] = labels
    return obj


def _image_volume_pod(name: str, pull: str) -> dict[str, Any]:
    obj = _pod(name)
    source = {"reference": "docker.io/library/busybox:1.37.0", "pullPolicy": pull}
    obj["spec"]["volumes"] = [{"name": "tools", "image": source}]
    obj["spec"]["containers"][0]["volumeMounts"] = [{"name": "tools", "mountPath": "/tools", "readOnly": True}]
    return obj


def _statefulset(name: str, labels: dict[str, str]) -> dict[str, Any]:
    """A StatefulSet on operator-lab's pool; `vcluster` is the virtual cluster's control plane's name."""
    template = {"metadata": {"labels": labels}, "spec": pod_spec(pool="research")}
    spec = {"serviceName": f"{name}-headless", "selector": {"matchLabels": labels}, "template": template}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": spec}


# The control plane StatefulSet's selector (chart 0.20.0; components/vcluster/values.py CONTROL_PLANE_SELECTOR).
VCLUSTER_SELECTOR = {"app": "vcluster", "release": "vcluster"}


def _revision(name: str, labels: dict[str, str]) -> dict[str, Any]:
    """A ControllerRevision as the StatefulSet controller writes it: the set's template as a patch."""
    template = {"metadata": {"labels": labels}, "spec": pod_spec(pool="research")}
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "labels": labels},
        "data": {"spec": {"template": {"$patch": "replace", **template}}},
        "revision": 1,
    }


def _release_record(name: str, release: str = "vcluster") -> dict[str, Any]:
    """One of Helm's release records (helm v3 pkg/storage/driver/secrets.go): found by name and by labels."""
    labels = {"owner": "helm", "name": release, "status": "deployed", "version": "9"}
    return {**_secret(name, "helm.sh/release.v1", labels=labels), "data": {"release": "SDRzSUFBQUFBQUFB"}}


# A kubeconfig whose user runs a command (`users[].user.exec`): written into the control plane's
# /data/pki by the Secret vcluster-certs, it would run there with the syncer's token.
_EXEC_KUBECONFIG = "users: [{name: x, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}}]"
# An owner that does not exist: the garbage collector deletes what names only such owners.
_DANGLING_OWNER = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "name": "e2e-gone",
    "uid": "00000000-0000-0000-0000-0000000e2e00",
}


def _claim_pod(name: str, claim: str) -> dict[str, Any]:
    """A pod on operator-lab's pool mounting the claim `claim`."""
    obj = _pod(name, pool="research", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}])
    obj["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return obj


def _synced_pod(name: str, account: str) -> dict[str, Any]:
    """A pod as the virtual cluster's syncer writes it to the host (operator-lab's pool, no token)."""
    return _pod(name, pool="research", serviceAccountName=account, automountServiceAccountToken=False)


CASES: list[Case] = [
    # --- Hole 5: scheduling and priority --------------------------------------------------------
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
        "cronjob-node-name",
        ACME_ADMIN,
        ACME_DEV,
        "batch/v1/cronjobs",
        _cron_job("e2e-node-name", nodeName="kind-worker"),
        "deny",
        "tenancy-scheduling-cronjobs",
        "the same through a CronJob's job template",
    ),
    Case(
        "cronjob-scheduled",
        ACME_ADMIN,
        ACME_DEV,
        "batch/v1/cronjobs",
        _cron_job("e2e-cronjob"),
        "admit",
        why="a CronJob left to the scheduler",
    ),
    Case(
        "budget-no-disruption",
        ACME_ADMIN,
        ACME_DEV,
        BUDGETS,
        _budget("e2e-no-disruption", maxUnavailable=0),
        "deny",
        "tenancy-scheduling-disruption-budgets",
        "drains of a shared pool's nodes would wait forever",
    ),
    Case(
        "budget-one-at-a-time",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        BUDGETS,
        _budget("e2e-one-at-a-time", maxUnavailable=1),
        "admit",
        why="a budget of the one shape, letting drains proceed",
    ),
    # --- Issue 33: budgets over the same pods, minAvailable equal to the replica count ----------
    Case(
        "budget-overlapping-selector",
        ACME_ADMIN,
        ACME_DEV,
        BUDGETS,
        _budget("e2e-overlapping", SELECTOR, maxUnavailable=1),
        "deny",
        "tenancy-scheduling-disruption-budgets",
        "a selector another budget may share: the eviction API evicts no pod under two budgets",
    ),
    Case(
        "budget-other-budgets-value",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        BUDGETS,
        _budget("e2e-second-budget", {DISRUPTION_BUDGET_KEY: "e2e-one-at-a-time"}, maxUnavailable=1),
        "deny",
        "tenancy-scheduling-disruption-budgets",
        "the label value of another budget's name: two budgets over the same pods",
    ),
    Case(
        "budget-min-available",
        ACME_ADMIN,
        ACME_DEV,
        BUDGETS,
        _budget("e2e-min-available", minAvailable=1),
        "deny",
        "tenancy-scheduling-disruption-budgets",
        "minAvailable 1 equals the replica count of a one-replica workload: no pod may go",
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
    Case("pod-own-pool", ACME_ADMIN, ACME_DEV, PODS, _pod("e2e-pod"), "admit", why="a hardened pod on its pool"),
    Case(
        "deployer-deploys-prod",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        DEPLOYMENTS,
        _deployment("e2e-deploy"),
        "admit",
        why="GitOps writes prod",
    ),
    # --- Issue 26: values as the API server parses them -----------------------------------------
    Case(
        "budget-zero-percent-spelled-long",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        BUDGETS,
        _budget("e2e-zero-percent", maxUnavailable="00%"),
        "deny",
        "tenancy-scheduling-disruption-budgets",
        "0% spelled with two digits still allows no disruption",
    ),
    Case(
        "budget-one-percent-spelled-long",
        ACME_ADMIN,
        ACME_DEV,
        BUDGETS,
        _budget("e2e-one-percent", maxUnavailable="01%"),
        "admit",
        why="1% with a leading zero allows disruption",
    ),
    Case(
        "pod-zero-memory-limit",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _memory_pod("e2e-zero-memory", "0Mi"),
        "deny",
        "tenancy-workloads",
        "a zero memory limit is no cgroup limit at all",
    ),
    Case(
        "pod-half-gibibyte-limit",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _memory_pod("e2e-half-gibibyte", "0.5Gi"),
        "admit",
        why="a fractional quantity that is not zero",
    ),
    # --- Hole 3: traffic smuggling through the shared ingress controller ------------------------
    Case(
        "admin-writes-endpoints",
        ACME_ADMIN,
        ACME_DEV,
        "/v1/endpoints",
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e2e-endpoints"}},
        "rbac",
        why="hand-written endpoints (CVE-2021-25740)",
    ),
    Case(
        "deployer-writes-endpoint-slice",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        "discovery.k8s.io/v1/endpointslices",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "e2e-endpoint-slice"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.244.1.5"]}],
        },
        "rbac",
        why="the same through an EndpointSlice",
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
        "service-cluster-ip",
        ACME_ADMIN,
        ACME_DEV,
        SERVICES,
        _service("e2e-service", selector=SELECTOR, ports=PORT),
        "admit",
        why="a ClusterIP Service with a selector (the control plane writes its endpoints)",
    ),
    # --- Hole 4: hostname hijack ------------------------------------------------------------------
    Case(
        "ingress-foreign-host",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _ingress("e2e-foreign-host", FOREIGN_HOST),
        "deny",
        "tenancy-hostnames-ingress",
        "another tenant's hostname",
    ),
    Case(
        "ingress-default-backend",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        INGRESSES,
        {
            **_ingress("e2e-default-backend", OWN_HOST),
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
        },
        "deny",
        "tenancy-hostnames-ingress",
        "the controller's catch-all for every unclaimed host",
    ),
    Case(
        "ingress-own-host",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _ingress("e2e-own-host", OWN_HOST),
        "admit",
        why="a hostname the environment serves",
    ),
    Case(
        "ingress-server-snippet",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _annotated_ingress(
            "e2e-server-snippet", {"nginx.ingress.kubernetes.io/server-snippet": "location / { proxy_pass http://x; }"}
        ),
        "deny",
        "tenancy-ingress-annotations",
        "controller configuration written by a tenant",
    ),
    Case(
        "ingress-harmless-annotations",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        INGRESSES,
        _annotated_ingress("e2e-harmless-annotations", HARMLESS, host=PROD_HOST),
        "admit",
        why="rewrites, sizes, source ranges, issuer choice, DNS TTL, Helm's own",
    ),
    Case(
        "ingress-annotation-injection",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _annotated_ingress("e2e-annotation-injection", {"nginx.ingress.kubernetes.io/rewrite-target": "/$1;\n}"}),
        "deny",
        "tenancy-ingress-annotations",
        "configuration injected through an allowed annotation's value",
    ),
    Case(
        "ingress-path-injection",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _annotated_ingress(
            "e2e-path-injection", {"nginx.ingress.kubernetes.io/use-regex": "true"}, "/x;\n}\nlocation /y {"
        ),
        "deny",
        "tenancy-ingress-annotations",
        "configuration injected through a path",
    ),
    Case(
        "ingress-regex-path",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _annotated_ingress("e2e-regex-path", {"nginx.ingress.kubernetes.io/use-regex": "true"}, "/api(/|$)(.*)"),
        "admit",
        why="a regular-expression path",
    ),
    Case(
        "ingress-acme-solver-class",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _annotated_ingress("e2e-solver-class", {"acme.cert-manager.io/http01-ingress-class": "internal-nginx"}),
        "deny",
        "tenancy-ingress-annotations",
        "cert-manager's challenge Ingress served by another controller's class",
    ),
    Case(
        "ingress-acme-edit-in-place",
        ACME_ADMIN,
        ACME_DEV,
        INGRESSES,
        _annotated_ingress("e2e-edit-in-place", {"acme.cert-manager.io/http01-edit-in-place": "true"}),
        "admit",
        why="the solver edits the tenant's own Ingress",
    ),
    Case(
        "listener-set-catch-all",
        ACME_ADMIN,
        ACME_DEV,
        "gateway.networking.k8s.io/v1/listenersets",
        _listener_set("e2e-catch-all", None),
        "deny",
        "tenancy-hostnames-listenersets",
        "a listener without a hostname takes every name on its port",
    ),
    Case(
        "listener-set-foreign-host",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        "gateway.networking.k8s.io/v1/listenersets",
        _listener_set("e2e-foreign-host", PROD_HOST, FOREIGN_HOST),
        "deny",
        "tenancy-hostnames-listenersets",
        "another tenant's hostname on the platform Gateway",
    ),
    Case(
        "listener-set-own-hosts",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        "gateway.networking.k8s.io/v1/listenersets",
        _listener_set("e2e-own-hosts", PROD_HOST, PROD_DOMAIN_HOST),
        "admit",
        why="listeners for names the environment serves",
    ),
    Case(
        "certificate-foreign-name",
        ACME_ADMIN,
        ACME_DEV,
        "cert-manager.io/v1/certificates",
        _certificate("e2e-foreign-name", dnsNames=[OWN_HOST, "bank.example.com"]),
        "deny",
        "tenancy-hostnames-certificates",
        "a shared issuer signing another party's name",
    ),
    Case(
        "certificate-ca",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        "cert-manager.io/v1/certificates",
        _certificate("e2e-ca", isCA=True, dnsNames=[PROD_HOST]),
        "deny",
        "tenancy-hostnames-certificates",
        "a CA certificate signs any name",
    ),
    Case(
        "certificate-own-names",
        ACME_ADMIN,
        ACME_DEV,
        "cert-manager.io/v1/certificates",
        _certificate("e2e-own-names", dnsNames=[OWN_HOST], commonName=OWN_HOST, emailAddresses=[f"ops@{OWN_HOST}"]),
        "admit",
        why="every name field inside the names the environment serves",
    ),
    # --- Hole 6: secrets by the side door -----------------------------------------------------------
    Case(
        "operator-runs-secret-pod",
        ACME_OPERATOR,
        ACME_DEV,
        PODS,
        _pod("e2e-secret-pod", volumes=SECRET_VOLUME),
        "rbac",
        why="the operator, who may not read Secrets, would mount one",
    ),
    Case(
        "operator-runs-secret-job",
        ACME_OPERATOR,
        ACME_DEV,
        "batch/v1/jobs",
        _job("e2e-secret-job", volumes=SECRET_VOLUME),
        "rbac",
        why="the same through a Job",
    ),
    Case(
        "admin-runs-secret-pod",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _pod(
            "e2e-admin-secret-pod",
            volumes=SECRET_VOLUME,
        ),
        "admit",
        why="the admin, who reads Secrets anyway, runs the same pod",
    ),
    Case(
        "secret-token",
        ACME_ADMIN,
        ACME_DEV,
        SECRETS,
        _secret("e2e-token", "kubernetes.io/service-account-token", annotations=TOKEN),
        "deny",
        "tenancy-service-account-token-secrets",
        "a token that never expires",
    ),
    Case(
        "secret-opaque",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        SECRETS,
        _secret("e2e-opaque"),
        "admit",
        why="an ordinary Secret",
    ),
    Case(
        "claim-volume-name",
        ACME_ADMIN,
        ACME_DEV,
        CLAIMS,
        _claim("e2e-volume-name", volumeName="pvc-genomics-lab-data"),
        "deny",
        "tenancy-volume-claims",
        "another tenant's released volume",
    ),
    Case(
        "claim-other-class",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        CLAIMS,
        _claim("e2e-other-class", storageClassName="standard"),
        "deny",
        "tenancy-volume-claims",
        "a class whose released volumes may keep their data",
    ),
    Case(
        "claim-dynamic",
        ACME_ADMIN,
        ACME_DEV,
        CLAIMS,
        _claim("e2e-claim"),
        "admit",
        why="a dynamically provisioned volume on the platform class",
    ),
    Case(
        "pod-cached-image",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _pulling_pod("e2e-cached-image", "IfNotPresent"),
        "deny",
        "tenancy-workloads",
        "another tenant's private image from a shared node's cache",
    ),
    Case(
        "deployer-pod-always-pulls",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        PODS,
        _pulling_pod("e2e-always-pulls", "Always"),
        "admit",
        why="a container that always pulls",
    ),
    # --- Flux objects: the controller's own identity ------------------------------------------------
    Case(
        "release-kubeconfig",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        HELM_RELEASES,
        _release("e2e-kubeconfig", kubeConfig={"secretRef": {"name": "stolen", "key": "value"}}),
        "deny",
        "tenancy-flux",
        "helm-controller applying to a cluster of the tenant's choosing",
    ),
    Case(
        "release-other-account",
        ACME_ADMIN,
        ACME_DEV,
        HELM_RELEASES,
        _release("e2e-other-account", serviceAccountName="vcluster"),
        "deny",
        "tenancy-flux",
        "a release run as another account of the namespace",
    ),
    Case(
        "release-foreign-source",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        HELM_RELEASES,
        _release("e2e-foreign-source", chartRef={"kind": "OCIRepository", "name": "web", "namespace": GENOMICS_DEV}),
        "deny",
        "tenancy-flux",
        "another tenant's source",
    ),
    Case(
        "release-as-deployer",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        HELM_RELEASES,
        _release("e2e-release", chartRef={"kind": "OCIRepository", "name": "web", "namespace": ACME_PROD}),
        "admit",
        why="a release from its own namespace's source, run as the deployer",
    ),
    Case(
        "oci-cloud-provider",
        ACME_ADMIN,
        ACME_DEV,
        OCI_REPOSITORIES,
        _flux(OCI_REPOSITORIES, "OCIRepository", "e2e-cloud", interval="10m", url=OCI_URL, provider="aws"),
        "deny",
        "tenancy-flux",
        "source-controller logging in with its own cloud identity",
    ),
    Case(
        "oci-generic",
        ACME_ADMIN,
        ACME_DEV,
        OCI_REPOSITORIES,
        _flux(OCI_REPOSITORIES, "OCIRepository", "e2e-generic", interval="10m", url=OCI_URL, provider="generic"),
        "admit",
        why="a source with no cloud identity",
    ),
    Case(
        "deployer-writes-kustomization",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        "kustomize.toolkit.fluxcd.io/v1/kustomizations",
        _flux(
            "kustomize.toolkit.fluxcd.io/v1/kustomizations",
            "Kustomization",
            "e2e-kustomization",
            interval="10m",
            path="./deploy",
            prune=True,
            serviceAccountName="deployer",
            sourceRef={"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"},
        ),
        "rbac",
        why="tenant roles only read Kustomizations",
    ),
    Case(
        "deployer-writes-git-repository",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        "source.toolkit.fluxcd.io/v1/gitrepositories",
        _flux(
            "source.toolkit.fluxcd.io/v1/gitrepositories",
            "GitRepository",
            "e2e-git",
            interval="10m",
            url="https://git.example.org/acme/app.git",
            ref={"branch": "main"},
        ),
        "rbac",
        why="prod's Git ref is the tenant file's, not the deployer's",
    ),
    # --- Issue 26: the second lock, chart NetworkPolicies, the virtual cluster's kubeconfig ---------
    Case(
        "admin-writes-role-binding",
        ACME_ADMIN,
        ACME_DEV,
        "rbac.authorization.k8s.io/v1/rolebindings",
        _role_binding("e2e-binding", "tenancy-tenant-admin", "acme-support"),
        "rbac",
        why="a viewer group made admin",
    ),
    Case(
        "policy-dns-every-namespace",
        ACME_ADMIN,
        ACME_DEV,
        POLICIES,
        _network_policy(
            "e2e-dns-everywhere",
            egress=[{"to": [{"namespaceSelector": {}, "podSelector": DNS_PEER["podSelector"]}], "ports": DNS_PORTS}],
        ),
        "deny",
        "tenancy-network-policies",
        "DNS pod labels in every namespace reach any pod that copies them",
    ),
    Case(
        "policy-another-tenant",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        POLICIES,
        _network_policy(
            "e2e-another-tenant",
            egress=[{"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": GENOMICS_DEV}}}]}],
        ),
        "deny",
        "tenancy-network-policies",
        "a path to another tenant's namespace",
    ),
    Case(
        "policy-chart-dns",
        ACME_ADMIN,
        ACME_DEV,
        POLICIES,
        _network_policy("e2e-chart-dns", egress=[{"to": [DNS_PEER], "ports": DNS_PORTS}]),
        "admit",
        why="the DNS egress charts ship, inside the platform's path",
    ),
    Case(
        "policy-own-pods",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        POLICIES,
        _network_policy(
            "e2e-own-pods",
            ingress=[{"from": [{"podSelector": {"matchLabels": {"app": "api"}}}], "ports": [{"port": 8080}]}],
        ),
        "admit",
        why="a policy between the namespace's own pods",
    ),
    Case(
        "deployer-forges-vcluster-kubeconfig",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        SECRETS,
        _kubeconfig_secret("vcluster-kubeconfig"),
        "deny",
        "tenancy-vcluster-kubeconfig",
        "the platform's Kustomization would connect where the deployer says",
    ),
    Case(
        "syncer-writes-other-namespace",
        OPERATOR_LAB_DEV_SYNCER,
        "tenant-operator-lab-prod",
        SECRETS,
        _kubeconfig_secret("vcluster-kubeconfig"),
        "rbac",
        why="the dev syncer's Role is its own namespace's",
    ),
    Case(
        "syncer-writes-kubeconfig",
        OPERATOR_LAB_DEV_SYNCER,
        OPERATOR_LAB_DEV,
        SECRETS,
        _kubeconfig_secret("vcluster-kubeconfig", f"https://vcluster.{OPERATOR_LAB_DEV}:443"),
        "admit",
        why="the namespace's own syncer writes the virtual cluster's kubeconfig",
    ),
    Case(
        "deployer-writes-app-secret",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        SECRETS,
        _kubeconfig_secret("app-config"),
        "admit",
        why="any other Secret of the virtual cluster's namespace",
    ),
    # --- Tenancy itself: other environments and tenants, the platform's objects --------------------
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
        "admin-writes-quota",
        ACME_ADMIN,
        ACME_DEV,
        "/v1/resourcequotas",
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "e2e-quota"},
            "spec": {"hard": {"pods": "1000"}},
        },
        "rbac",
        why="a dry run is no exemption: quotas are the platform's",
    ),
    Case("config-map", ACME_ADMIN, ACME_DEV, "/v1/configmaps", _config_map("e2e-config"), "admit"),
    # --- Issue 33: hostnames per environment, route annotations, the edge path, the syncer's account ---
    Case(
        "route-prod-domain-from-dev",
        ACME_ADMIN,
        ACME_DEV,
        ROUTES,
        _route("e2e-prod-domain", "shop.acme-corp.example"),
        "deny",
        "tenancy-hostnames-routes",
        "a dev admin (a viewer in prod) taking a name prod serves",
    ),
    Case(
        "route-under-prod-wildcard-from-dev",
        ACME_ADMIN,
        ACME_DEV,
        ROUTES,
        _route("e2e-under-prod-wildcard", "v2.api.acme-corp.example"),
        "deny",
        "tenancy-hostnames-routes",
        "a more specific name under prod's wildcard wins over prod's listener",
    ),
    Case(
        "listener-set-prod-domain-from-dev",
        ACME_ADMIN,
        ACME_DEV,
        "gateway.networking.k8s.io/v1/listenersets",
        _listener_set("e2e-prod-domain", "v2.api.acme-corp.example"),
        "deny",
        "tenancy-hostnames-listenersets",
        "a dev listener under prod's wildcard",
    ),
    Case(
        "route-own-name", ACME_ADMIN, ACME_DEV, ROUTES, _route("e2e-own-name", OWN_HOST), "admit", why="dev's own name"
    ),
    Case(
        "route-prod-domain-in-prod",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        ROUTES,
        _route("e2e-prod-domain", PROD_DOMAIN_HOST, PROD_HOST),
        "admit",
        why="prod's names in prod",
    ),
    Case(
        "route-external-dns-hostname",
        ACME_ADMIN,
        ACME_DEV,
        ROUTES,
        _route("e2e-dns-hostname", OWN_HOST, annotations={"external-dns.alpha.kubernetes.io/hostname": FOREIGN_HOST}),
        "deny",
        "tenancy-route-annotations",
        "external-dns would publish another tenant's name",
    ),
    Case(
        "route-external-dns-target",
        ACME_ADMIN,
        ACME_DEV,
        ROUTES,
        _route("e2e-dns-target", OWN_HOST, annotations={"external-dns.alpha.kubernetes.io/target": "203.0.113.7"}),
        "deny",
        "tenancy-route-annotations",
        "external-dns would point the name anywhere",
    ),
    Case(
        "route-harmless-annotations",
        ACME_ADMIN,
        ACME_DEV,
        ROUTES,
        _route(
            "e2e-route-annotations",
            OWN_HOST,
            annotations={"external-dns.alpha.kubernetes.io/ttl": "60", "meta.helm.sh/release-name": "web"},
        ),
        "admit",
        why="DNS TTL and Helm's own annotations",
    ),
    Case(
        "policy-edge-namespace-only",
        ACME_ADMIN,
        ACME_DEV,
        POLICIES,
        _network_policy("e2e-edge-namespace", ingress=[{"from": [EDGE_NAMESPACE], "ports": [{"port": 8080}]}]),
        "deny",
        "tenancy-network-policies",
        "the proxies' namespace alone also admits the Gateway controller beside them",
    ),
    Case(
        "policy-edge-proxies",
        ACME_ADMIN,
        ACME_DEV,
        POLICIES,
        _network_policy("e2e-edge-proxies", ingress=[{"from": [EDGE_PROXIES], "ports": [{"port": 8080}]}]),
        "admit",
        why="the Gateway's proxies by their labels, on a route port",
    ),
    Case(
        "deployer-runs-pod-as-syncer",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        PODS,
        _pod("e2e-as-syncer", pool="research", serviceAccountName="vcluster"),
        "deny",
        "tenancy-syncer-account",
        "the pod would hold the syncer's token and write as the syncer",
    ),
    Case(
        "deployer-runs-pod",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        PODS,
        _pod("e2e-own-account", pool="research"),
        "admit",
        why="a pod under the namespace's default account",
    ),
]

CASES += [
    # --- Issue 43: subresource side doors, by a stray identity the run grants them ---------------
    Case(
        "stray-drops-tenant-label-via-status",
        STRAY,
        "",
        NAMESPACES,
        {"metadata": {"labels": {"tenancy.io/tenant": None}}},
        "deny",
        "tenancy-platform-owned-namespaces",
        "namespaces/status keeps the labels a request carries: no policy would match the namespace after",
        verb="patch",
        kind="Namespace",
        target=ACME_DEV,
        subresource="status",
    ),
    Case(
        "stray-grants-admin-via-finalize",
        STRAY,
        "",
        NAMESPACES,
        {"metadata": {"annotations": {"tenancy.io/group-roles": "tenancy-tenant-admin=acme-admins"}}},
        "deny",
        "tenancy-platform-owned-namespaces",
        "namespaces/finalize keeps the annotations: tenancy-rbac would then admit an admin binding in prod",
        verb="replace",
        kind="Namespace",
        target=ACME_PROD,
        subresource="finalize",
    ),
    Case(
        "stray-drops-tenant-label",
        STRAY,
        "",
        NAMESPACES,
        {"metadata": {"labels": {"tenancy.io/tenant": None}}},
        "deny",
        "tenancy-platform-owned-namespaces",
        "the Namespace lock matches the old object's label too (objectSelector)",
        verb="patch",
        kind="Namespace",
        target=ACME_DEV,
    ),
    Case(
        "namespace-controller-finalizes",
        NAMESPACE_CONTROLLER,
        "",
        NAMESPACES,
        {},
        "admit",
        why="the namespace controller's finalize, the subresource's one legitimate writer",
        verb="replace",
        kind="Namespace",
        target=ACME_DEV,
        subresource="finalize",
    ),
    Case(
        "stray-unlabels-quota-via-status",
        STRAY,
        ACME_DEV,
        QUOTAS,
        {"metadata": {"labels": {"tenancy.io/platform-owned": None}}},
        "deny",
        "tenancy-platform-owned",
        "resourcequotas/status keeps the labels: the next ordinary update would raise spec.hard unchecked",
        verb="patch",
        kind="ResourceQuota",
        target=QUOTA,
        subresource="status",
    ),
    Case(
        "stray-raises-quota-status",
        STRAY,
        ACME_DEV,
        QUOTAS,
        {"status": {"hard": {"pods": "100000"}}},
        "deny",
        "tenancy-platform-owned",
        "quota admission enforces status.hard until the controller's next resync",
        verb="patch",
        kind="ResourceQuota",
        target=QUOTA,
        subresource="status",
    ),
    Case(
        "quota-controller-counts",
        QUOTA_CONTROLLER,
        ACME_DEV,
        QUOTAS,
        {"status": {"used": {"pods": "0"}}},
        "admit",
        why="the quota controller writes the status it computes (RBAC gives it update, not patch)",
        verb="replace",
        kind="ResourceQuota",
        target=QUOTA,
        subresource="status",
    ),
    Case(
        "stray-binds-admin-in-prod",
        STRAY,
        ACME_PROD,
        "rbac.authorization.k8s.io/v1/rolebindings",
        _role_binding("e2e-stray-admin", "tenancy-tenant-admin", "acme-admins"),
        "deny",
        "tenancy-rbac",
        "the second lock on RoleBindings: people are viewers in prod, whoever writes the binding",
    ),
    Case(
        "stray-binds-viewers-in-prod",
        STRAY,
        ACME_PROD,
        "rbac.authorization.k8s.io/v1/rolebindings",
        _role_binding("e2e-stray-viewers", "tenancy-tenant-viewer", "acme-admins"),
        "admit",
        why="the binding the platform itself renders there",
    ),
    # --- Issue 43: the syncer's reach ------------------------------------------------------------
    Case(
        "syncer-runs-pod-as-deployer",
        OPERATOR_LAB_DEV_SYNCER,
        OPERATOR_LAB_DEV,
        PODS,
        _pod("e2e-syncer-as-deployer", pool="research", serviceAccountName="deployer"),
        "deny",
        "tenancy-syncer-account",
        "a pod of the syncer running as the deployer (token automounted) would hold the deployer's role",
    ),
    Case(
        "syncer-runs-synced-pod",
        OPERATOR_LAB_DEV_SYNCER,
        OPERATOR_LAB_DEV,
        PODS,
        _synced_pod("e2e-synced", "vc-workload-vcluster"),
        "admit",
        why="a synced pod under the virtual cluster's workload account",
    ),
    # --- Issue 43: a tenant pod under an operator's budget and its own ---------------------------
    Case(
        "pod-operator-budget-labels",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _labelled_pod("e2e-operator-labels", {**CNPG_PRIMARY, DISRUPTION_BUDGET_KEY: "web"}),
        "deny",
        "tenancy-scheduling-operator-labels",
        "under CloudNativePG's primary budget and its own: the eviction API evicts no such pod",
    ),
    Case(
        "deployment-operator-budget-labels",
        ACME_PROD_DEPLOYER,
        ACME_PROD,
        DEPLOYMENTS,
        {
            **_deployment("e2e-operator-labels"),
            "spec": {
                **_deployment("e2e-operator-labels")["spec"],
                "template": {
                    "metadata": {"labels": {"app.kubernetes.io/name": "e2e-operator-labels", **CNPG_PRIMARY}},
                    "spec": pod_spec(),
                },
            },
        },
        "deny",
        "tenancy-scheduling-operator-labels",
        "the same through a pod template",
    ),
    Case(
        "pod-own-budget-label",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _labelled_pod("e2e-own-budget-label", {DISRUPTION_BUDGET_KEY: "web"}),
        "admit",
        why="a pod under the tenant's own budget only",
    ),
    # --- Issue 43: image volumes ------------------------------------------------------------------
    Case(
        "pod-image-volume-cached",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _image_volume_pod("e2e-image-volume-cached", "IfNotPresent"),
        "deny",
        "tenancy-workloads",
        "an image volume started from a shared node's cache without the registry checking credentials",
    ),
    Case(
        "pod-image-volume-always",
        ACME_ADMIN,
        ACME_DEV,
        PODS,
        _image_volume_pod("e2e-image-volume", "Always"),
        "admit",
        why="an image volume pulled like a container image (Pod Security restricted admits it)",
    ),
    # --- Issue 43: external-dns's newer annotation prefix ------------------------------------------
    Case(
        "route-ga-external-dns-hostname",
        ACME_ADMIN,
        ACME_DEV,
        ROUTES,
        _route("e2e-ga-dns-hostname", OWN_HOST, annotations={"external-dns.kubernetes.io/hostname": FOREIGN_HOST}),
        "deny",
        "tenancy-route-annotations",
        "external-dns v0.22+ would publish another tenant's name",
    ),
    Case(
        "route-ga-external-dns-ttl",
        ACME_ADMIN,
        ACME_DEV,
        ROUTES,
        _route("e2e-ga-dns-ttl", OWN_HOST, annotations={"external-dns.kubernetes.io/ttl": "60"}),
        "admit",
        why="its TTL, as under the alpha prefix",
    ),
]

CASES += [
    # --- Issue 43 (2b): the control plane's template is the platform's ----------------------------
    Case(
        "deployer-creates-control-plane-statefulset",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        "apps/v1/statefulsets",
        _statefulset("vcluster", VCLUSTER_SELECTOR),
        "deny",
        "tenancy-vcluster-control-plane",
        "its pod runs as the syncer: the StatefulSet vcluster is written only through the platform's release",
    ),
    # The installer's writes go to the objects the replay plants (FIXTURES): a create of one would
    # be refused as AlreadyExists after admission admitted it.
    Case(
        "installer-upgrades-control-plane-statefulset",
        OPERATOR_LAB_DEV_INSTALLER,
        OPERATOR_LAB_DEV,
        "apps/v1/statefulsets",
        {"spec": {"template": {"metadata": {"annotations": {"e2e.tenancy.io/upgrade": "0.20.1"}}}}},
        "admit",
        why="helm-controller upgrading the release as the installer",
        verb="patch",
        kind="StatefulSet",
        target="vcluster",
    ),
    Case(
        "deployer-creates-statefulset",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        "apps/v1/statefulsets",
        _statefulset("e2e-web", {"app.kubernetes.io/name": "e2e-web"}),
        "admit",
        why="the tenant's own StatefulSets are not the control plane's",
    ),
    Case(
        "stray-plants-control-plane-revision",
        STRAY,
        OPERATOR_LAB_DEV,
        "apps/v1/controllerrevisions",
        _revision("vcluster-e2e", VCLUSTER_SELECTOR),
        "deny",
        "tenancy-vcluster-control-plane",
        "the StatefulSet controller adopts a revision with its selector and builds pods from the current one",
    ),
    Case(
        "statefulset-controller-writes-revision",
        STATEFULSET_CONTROLLER,
        OPERATOR_LAB_DEV,
        "apps/v1/controllerrevisions",
        _revision("vcluster-e2e", VCLUSTER_SELECTOR),
        "admit",
        why="the StatefulSet controller records the set's template",
    ),
    Case(
        "deployer-writes-vcluster-config",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        SECRETS,
        {
            **_secret("vc-config-vcluster"),
            "stringData": {"config.yaml": "exportKubeConfig: {server: https://169.254.169.254}"},
        },
        "deny",
        "tenancy-vcluster-control-plane",
        "the syncer starts with this configuration (the release's values)",
    ),
    Case(
        "syncer-writes-vcluster-config",
        OPERATOR_LAB_DEV_SYNCER,
        OPERATOR_LAB_DEV,
        SECRETS,
        {
            **_secret("vc-config-vcluster"),
            "stringData": {"config.yaml": "exportKubeConfig: {server: https://169.254.169.254}"},
        },
        "deny",
        "tenancy-vcluster-control-plane",
        "the syncer may note its distro and store on its configuration, never write it",
    ),
    Case(
        "installer-writes-vcluster-config",
        OPERATOR_LAB_DEV_INSTALLER,
        OPERATOR_LAB_DEV,
        SECRETS,
        # base64 of `controlPlane: {distro: {k8s: {enabled: true}}}`
        {"data": {"config.yaml": "Y29udHJvbFBsYW5lOiB7ZGlzdHJvOiB7azhzOiB7ZW5hYmxlZDogdHJ1ZX19fQ=="}},
        "admit",
        why="the chart's config Secret, applied by the release",
        verb="patch",
        kind="Secret",
        target="vc-config-vcluster",
    ),
    Case(
        "deployer-plants-release-record",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        SECRETS,
        _release_record("e2e-release-record"),
        "deny",
        "tenancy-vcluster-control-plane",
        "Helm finds the last release by these labels; drift correction would apply its manifest as the installer",
    ),
    Case(
        "deployer-writes-release-record",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        SECRETS,
        _release_record("sh.helm.release.v1.vcluster.v9"),
        "deny",
        "tenancy-vcluster-control-plane",
        "a rollback reads the record by this name",
    ),
    Case(
        "installer-writes-release-record",
        OPERATOR_LAB_DEV_INSTALLER,
        OPERATOR_LAB_DEV,
        SECRETS,
        _release_record("sh.helm.release.v1.vcluster.v9"),
        "admit",
        why="helm-controller storing the release as the installer",
    ),
    Case(
        "deployer-writes-own-release-record",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        SECRETS,
        _release_record("sh.helm.release.v1.e2e-web.v9", "e2e-web"),
        "admit",
        why="a release of the tenant's own, under its own name",
    ),
    Case(
        "deployer-repoints-vcluster-release",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        HELM_RELEASES,
        {"spec": {"serviceAccountName": "deployer", "values": {"telemetry": {"enabled": True}}}},
        "deny",
        "tenancy-vcluster-release",
        "back to the deployer with the tenant's values: the release would be applied as the tenant",
        verb="patch",
        kind="HelmRelease",
        target="vcluster",
    ),
    Case(
        "deployer-requests-vcluster-reconcile",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        HELM_RELEASES,
        {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": "e2e"}}},
        "admit",
        why="`flux reconcile helmrelease vcluster`: an annotation, the spec as it was",
        verb="patch",
        kind="HelmRelease",
        target="vcluster",
    ),
    Case(
        "deployer-repoints-vcluster-chart-source",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        "source.toolkit.fluxcd.io/v1/helmrepositories",
        {"spec": {"url": "https://charts.attacker.example"}},
        "deny",
        "tenancy-vcluster-release",
        "the installer would apply the chart of the tenant's choosing",
        verb="patch",
        kind="HelmRepository",
        target="vcluster-charts",
    ),
    Case(
        "deployer-runs-pod-as-installer",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        PODS,
        _pod("e2e-as-installer", pool="research", serviceAccountName="vcluster-installer"),
        "deny",
        "tenancy-syncer-account",
        "the pod would hold the installer's token, the name the release's locks trust",
    ),
    # --- Issue 43 (2b), the outside review's doors: the certificates, the volume, owners -----------
    Case(
        "deployer-writes-vcluster-certs",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        SECRETS,
        {**_secret("vcluster-certs"), "stringData": {"controller-manager.conf": _EXEC_KUBECONFIG}},
        "deny",
        "tenancy-vcluster-control-plane",
        "every key is written into /data/pki at each start: an exec user would run with the syncer's token",
    ),
    Case(
        "installer-writes-vcluster-certs",
        OPERATOR_LAB_DEV_INSTALLER,
        OPERATOR_LAB_DEV,
        SECRETS,
        {**_secret("vcluster-certs"), "stringData": {"ca.key": "e2e"}},
        "deny",
        "tenancy-vcluster-control-plane",
        "the release does not render the certificates: only the syncer writes them",
    ),
    Case(
        "syncer-creates-vcluster-certs",
        OPERATOR_LAB_DEV_SYNCER,
        OPERATOR_LAB_DEV,
        SECRETS,
        {**_secret("vcluster-certs"), "stringData": {"ca.crt": "e2e", "ca.key": "e2e"}},
        "admit",
        why="the control plane's first start (vCluster v0.20.0 pkg/certs/ensure.go)",
    ),
    Case(
        "deployer-plants-vcluster-volume",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        CLAIMS,
        _claim("data-vcluster-0"),
        "deny",
        "tenancy-vcluster-control-plane",
        "the StatefulSet controller uses an existing claim as it is: its /data/pki would be the control plane's",
    ),
    Case(
        "syncer-plants-vcluster-volume",
        OPERATOR_LAB_DEV_SYNCER,
        OPERATOR_LAB_DEV,
        CLAIMS,
        _claim("data-vcluster-1"),
        "deny",
        "tenancy-vcluster-control-plane",
        "the syncer writes the virtual cluster's claims under translated names, never the control plane's",
    ),
    Case(
        "statefulset-controller-makes-vcluster-volume",
        STATEFULSET_CONTROLLER,
        OPERATOR_LAB_DEV,
        CLAIMS,
        _claim("data-vcluster-0"),
        "admit",
        why="the StatefulSet controller creating the claim from the template",
    ),
    Case(
        "deployer-makes-own-claim",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        CLAIMS,
        _claim("data-e2e-web-0"),
        "admit",
        why="the tenant's own claims",
    ),
    Case(
        "deployer-mounts-vcluster-volume",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        PODS,
        _claim_pod("e2e-reads-vcluster-volume", "data-vcluster-0"),
        "deny",
        "tenancy-syncer-account",
        "the control plane's datastore and the keys it reads at each start are its own pods' alone",
    ),
    Case(
        "deployer-mounts-own-claim",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        PODS,
        _claim_pod("e2e-reads-own-volume", "data-e2e-web-0"),
        "admit",
        why="a claim of the tenant's own",
    ),
    Case(
        "deployer-gives-vcluster-release-an-owner",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        HELM_RELEASES,
        {"metadata": {"ownerReferences": [_DANGLING_OWNER]}},
        "deny",
        "tenancy-vcluster-release",
        "the spec is unchanged, but the garbage collector would delete the release (helm-controller uninstalls)",
        verb="patch",
        kind="HelmRelease",
        target="vcluster",
    ),
    Case(
        "deployer-gives-vcluster-chart-source-an-owner",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        "source.toolkit.fluxcd.io/v1/helmrepositories",
        {"metadata": {"ownerReferences": [_DANGLING_OWNER]}},
        "deny",
        "tenancy-vcluster-release",
        "the garbage collector would delete the release's chart source",
        verb="patch",
        kind="HelmRepository",
        target="vcluster-charts",
    ),
    Case(
        "deployer-annotates-installer-account",
        OPERATOR_LAB_DEV_DEPLOYER,
        OPERATOR_LAB_DEV,
        "/v1/serviceaccounts",
        {"metadata": {"annotations": {"e2e.tenancy.io/note": "mine"}}},
        "deny",
        "tenancy-platform-owned",
        "the installer's account is the platform's",
        verb="patch",
        kind="ServiceAccount",
        target="vcluster-installer",
    ),
]

# --- Red team round 7: the objects a running release would leave, planted for the replay -------------

# The run installs no release (helm-controller is not served), so the replay plants what the chart
# would render and the cases need (FIXTURES, applied by scripts/e2e/admission.sh as the run's admin,
# a platform identity, and deleted with their dependents when it ends): the control plane
# StatefulSet (its StatefulSet controller then makes `vcluster-0` as it would for the release), the
# Service `vcluster` and the config Secret. Their shape follows chart 0.20.0 where the locks read it
# (the selector, the pod's account, the Service's selector, the Secret's key).
VCLUSTER_TEMPLATE = {
    "metadata": {"labels": dict(VCLUSTER_SELECTOR)},
    "spec": pod_spec(pool="research", serviceAccountName="vcluster", automountServiceAccountToken=False),
}
FIXTURES: list[dict[str, Any]] = [
    {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "vcluster", "namespace": OPERATOR_LAB_DEV},
        "spec": {
            "replicas": 1,
            "serviceName": "vcluster-headless",
            "selector": {"matchLabels": dict(VCLUSTER_SELECTOR)},
            "template": VCLUSTER_TEMPLATE,
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "vcluster", "namespace": OPERATOR_LAB_DEV},
        "spec": {
            "selector": dict(VCLUSTER_SELECTOR),
            "ports": [{"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}],
        },
    },
    {
        **_secret("vc-config-vcluster"),
        "metadata": {"name": "vc-config-vcluster", "namespace": OPERATOR_LAB_DEV},
        # base64 of `controlPlane: {}`
        "data": {"config.yaml": "Y29udHJvbFBsYW5lOiB7fQ=="},
    },
]
# What the controllers make of FIXTURES, for the offline judge of the cases sent to it: `vcluster-0`
# as the StatefulSet controller creates it (k8s.io/kubernetes v1.36.3 pkg/controller/statefulset
# stateful_set_utils.go newStatefulSetPod: the template, its identity labels, the set as controller).
# The live one also carries `controller-revision-hash`, which no case touches.
CONTROL_PLANE_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "vcluster-0",
        "namespace": OPERATOR_LAB_DEV,
        "labels": {
            **VCLUSTER_SELECTOR,
            "statefulset.kubernetes.io/pod-name": "vcluster-0",
            "apps.kubernetes.io/pod-index": "0",
        },
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": "vcluster",
                "uid": "00000000-0000-0000-0000-0000000e2e01",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    },
    "spec": {**VCLUSTER_TEMPLATE["spec"], "hostname": "vcluster-0", "subdomain": "vcluster-headless"},
}
# The run's admin as a request names it: a member of system:masters, a platform identity of the dev
# stack (components/model/settings/admission.py PlatformIdentities).
PLATFORM = Identity("tenancy-e2e-platform", ("system:masters", "system:authenticated"))
STATEFULSETS, AUTOSCALERS = "apps/v1/statefulsets", "autoscaling/v2/horizontalpodautoscalers"
# A debug container as `kubectl debug --profile=restricted` adds it (ephemeral containers take no resources).
_DEBUG_CONTAINER = {
    key: value
    for key, value in {**_container(), "name": "debug", "targetContainerName": "app"}.items()
    if key != "resources"
}


def _autoscaler(name: str, kind: str, target: str) -> dict[str, Any]:
    """A HorizontalPodAutoscaler of `kind` `target` on its CPU use."""
    metric = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
    }
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
        "minReplicas": 1,
        "maxReplicas": 3,
        "metrics": [metric],
    }
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name}, "spec": spec}


def _ephemeral_pod(name: str, volume: str) -> dict[str, Any]:
    """A pod with a generic ephemeral volume `volume`: the controller makes the claim `<name>-<volume>`."""
    claim = {"spec": _claim("unused")["spec"]}
    obj = _pod(name, pool="research", volumes=[{"name": volume, "ephemeral": {"volumeClaimTemplate": claim}}])
    obj["spec"]["containers"][0]["volumeMounts"] = [{"name": volume, "mountPath": "/scratch"}]
    return obj


def _sent_to(
    case_id: str,
    who: Identity,
    resource: str,
    patch: dict[str, Any],
    outcome: tuple[Expect, str, str],
    live: tuple[str, str, str],
    verb: Verb = "patch",
) -> Case:
    """A request to an object of operator-lab's dev namespace the replay finds live: `outcome` is
    (expect, policy, why), `live` (kind, name, subresource)."""
    expect, policy, why = outcome
    kind, target, subresource = live
    return Case(
        case_id,
        who,
        OPERATOR_LAB_DEV,
        resource,
        patch,
        expect,
        policy,
        why,
        verb=verb,
        kind=kind,
        target=target,
        subresource=subresource,
    )


def _round7_cases() -> list[Case]:
    """Red team round 7, live: M1 (vcluster-0's labels and owner), M2 (the replica count, autoscalers),
    M3 (ephemeral claims), L1 (the Service), L2 (the config Secret's owners), L3 (reserved names),
    FR2 (the platform's debug container), each attack with its legitimate twin."""
    deployer, syncer = OPERATOR_LAB_DEV_DEPLOYER, OPERATOR_LAB_DEV_SYNCER
    pod, scale = ("Pod", "vcluster-0", ""), ("StatefulSet", "vcluster", "scale")
    service, config = ("Service", "vcluster", ""), ("Secret", "vc-config-vcluster", "")
    debug = ("Pod", "vcluster-0", "ephemeralcontainers")
    control_plane, syncer_account = "tenancy-vcluster-control-plane", "tenancy-syncer-account"
    note = {"metadata": {"annotations": {"e2e.tenancy.io/note": "mine"}}}
    debugger = {"spec": {"ephemeralContainers": [_DEBUG_CONTAINER]}}
    distro = {"vcluster.loft.sh/distro": "k8s"}
    reserved = [
        Case(
            f"deployer-creates-account-{name}",
            ACME_PROD_DEPLOYER,
            ACME_PROD,
            "/v1/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
            "deny",
            control_plane,
            f"{name} is a virtual cluster's host account: reserved in every tenant namespace",
        )
        for name in ("vcluster", "vcluster-installer", "vc-workload-vcluster")
    ]
    own_release = _release("vcluster", chartRef={"kind": "OCIRepository", "name": "web", "namespace": ACME_PROD})
    return [
        # M1: what the StatefulSet owns vcluster-0 by.
        _sent_to(
            "deployer-drops-control-plane-pod-label",
            deployer,
            PODS,
            {"metadata": {"labels": {"release": None}}},
            ("deny", syncer_account, "the StatefulSet would release vcluster-0 and start another beside it"),
            pod,
        ),
        _sent_to(
            "deployer-orphans-control-plane-pod",
            deployer,
            PODS,
            {"metadata": {"ownerReferences": None}},
            ("deny", syncer_account, "without its controller the pod keeps running as the syncer, beside a new one"),
            pod,
        ),
        # A PUT: `kubectl patch --subresource=status` reads pods/status first, which the syncer may
        # not `get` (its Role: patch and update); the syncer's own client writes without reading.
        _sent_to(
            "syncer-drops-control-plane-pod-label-by-status",
            syncer,
            PODS,
            {"metadata": {"labels": {"app": None}}},
            ("deny", syncer_account, "pods/status keeps the request's labels (podStatusStrategy)"),
            ("Pod", "vcluster-0", "status"),
            verb="replace",
        ),
        _sent_to(
            "deployer-annotates-control-plane-pod",
            deployer,
            PODS,
            note,
            ("admit", "", "an annotation leaves the spec, the selector labels and the owner as they are"),
            pod,
        ),
        # M2: one syncer, with no leader election.
        _sent_to(
            "deployer-scales-control-plane-to-two",
            deployer,
            STATEFULSETS,
            {"spec": {"replicas": 2}},
            ("deny", control_plane, "two syncers with no leader election delete each other's objects"),
            scale,
        ),
        _sent_to(
            "deployer-stops-control-plane",
            deployer,
            STATEFULSETS,
            {"spec": {"replicas": 0}},
            ("admit", "", "`kubectl scale --replicas=0`: the tenant may stop its virtual cluster"),
            scale,
        ),
        _sent_to(
            "deployer-sets-control-plane-replicas",
            deployer,
            STATEFULSETS,
            {"spec": {"replicas": 2}},
            ("deny", control_plane, "the replica count through the StatefulSet itself"),
            ("StatefulSet", "vcluster", ""),
        ),
        Case(
            "deployer-autoscales-control-plane",
            deployer,
            OPERATOR_LAB_DEV,
            AUTOSCALERS,
            _autoscaler("e2e-vcluster", "StatefulSet", "vcluster"),
            "deny",
            control_plane,
            "the HorizontalPodAutoscaler would scale the control plane past one",
        ),
        Case(
            "deployer-autoscales-own-statefulset",
            deployer,
            OPERATOR_LAB_DEV,
            AUTOSCALERS,
            _autoscaler("e2e-web", "StatefulSet", "e2e-web"),
            "admit",
            why="autoscaling the tenant's own workloads",
        ),
        Case(
            "deployer-autoscales-deployment-named-vcluster",
            deployer,
            OPERATOR_LAB_DEV,
            AUTOSCALERS,
            _autoscaler("e2e-vcluster-web", "Deployment", "vcluster"),
            "admit",
            why="the lock is the StatefulSet's: a Deployment of the tenant's that happens to be named vcluster",
        ),
        # M3: an ephemeral volume named into the control plane's claim.
        Case(
            "deployer-names-ephemeral-claim-data-vcluster-0",
            deployer,
            OPERATOR_LAB_DEV,
            PODS,
            _ephemeral_pod("data", "vcluster-0"),
            "deny",
            syncer_account,
            "the ephemeral volume controller would create data-vcluster-0 with the tenant's spec",
        ),
        Case(
            "deployer-uses-ephemeral-volume",
            deployer,
            OPERATOR_LAB_DEV,
            PODS,
            _ephemeral_pod("data", "scratch"),
            "admit",
            why="a generic ephemeral volume of the tenant's own (claim data-scratch)",
        ),
        # L1: the virtual cluster's address.
        _sent_to(
            "deployer-repoints-control-plane-service",
            deployer,
            SERVICES,
            {"spec": {"selector": {"app.kubernetes.io/name": "e2e-web"}}},
            ("deny", control_plane, "the virtual cluster's clients would reach the tenant's pod"),
            service,
        ),
        _sent_to(
            "deployer-labels-control-plane-service",
            deployer,
            SERVICES,
            {"metadata": {"labels": {"e2e.tenancy.io/note": "mine"}}},
            ("admit", "", "labels and annotations of the Service pass; its spec and owners do not"),
            service,
        ),
        Case(
            "deployer-creates-service-vcluster",
            ACME_PROD_DEPLOYER,
            ACME_PROD,
            SERVICES,
            _service("vcluster", ports=[{"port": 443, "targetPort": 8443}]),
            "deny",
            control_plane,
            "the name is reserved in every tenant namespace",
        ),
        # L2: the syncer's own annotations on its config Secret, and nothing more.
        _sent_to(
            "syncer-notes-distro-on-config",
            syncer,
            SECRETS,
            {"metadata": {"annotations": distro}},
            ("admit", "", "the syncer notes its distro at every start (vCluster v0.20.0 pkg/setup/config.go)"),
            config,
        ),
        _sent_to(
            "syncer-gives-config-an-owner",
            syncer,
            SECRETS,
            {"metadata": {"annotations": distro, "ownerReferences": [_DANGLING_OWNER]}},
            ("deny", control_plane, "the garbage collector would delete the configuration the control plane reads"),
            config,
        ),
        # L3: the names a release's locks trust, reserved where no release runs.
        *reserved,
        Case(
            "deployer-creates-own-account",
            ACME_PROD_DEPLOYER,
            ACME_PROD,
            "/v1/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "e2e-web"}},
            "admit",
            why="an account of the tenant's own",
        ),
        Case(
            "deployer-creates-release-vcluster",
            ACME_PROD_DEPLOYER,
            ACME_PROD,
            HELM_RELEASES,
            own_release,
            "deny",
            "tenancy-vcluster-release",
            "the name the virtual cluster's locks trust, reserved in every tenant namespace",
        ),
        # FR2: the platform's debug container on the control plane, no one else's (a PUT: kubectl
        # patch does not reach pods/ephemeralcontainers).
        _sent_to(
            "platform-debugs-control-plane",
            PLATFORM,
            PODS,
            debugger,
            ("admit", "", "`kubectl debug vcluster-0` by the platform"),
            debug,
            verb="replace",
        ),
        _sent_to(
            "syncer-debugs-control-plane",
            syncer,
            PODS,
            debugger,
            ("deny", syncer_account, "a debug container in vcluster-0 may mount its token: its spec is the platform's"),
            debug,
            verb="replace",
        ),
    ]


CASES += _round7_cases()


def _round8_pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A pod of operator-lab dev's (its pool) with `labels`."""
    obj = _pod(name, pool="research", **spec)
    if labels:
        obj["metadata"]["labels"] = labels
    return obj


def _round8_cases() -> list[Case]:
    """Red team round 8, live: the creates (a clone of the control plane's volume by the deployer and by
    the syncer, a pod as `deployer`, an impostor pod behind the Service `vcluster`), each with its twin."""
    source = {"kind": "PersistentVolumeClaim", "name": "data-vcluster-0"}
    stolen = _claim("e2e-stolen-x-team-x-vcluster", dataSourceRef={"apiGroup": "", **source})
    stolen["metadata"]["annotations"] = {"vcluster.loft.sh/skip-translate": "true"}
    synced_source = {"kind": "PersistentVolumeClaim", "name": "db-x-team-x-vcluster"}
    return [
        Case(
            "deployer-clones-vcluster-volume",
            OPERATOR_LAB_DEV_DEPLOYER,
            OPERATOR_LAB_DEV,
            CLAIMS,
            _claim("e2e-copy", dataSource=source),
            "deny",
            "tenancy-vcluster-control-plane",
            "a copy of the control plane's datastore and of the keys it signs with",
        ),
        Case(
            "syncer-clones-vcluster-volume",
            OPERATOR_LAB_DEV_SYNCER,
            OPERATOR_LAB_DEV,
            CLAIMS,
            stolen,
            "deny",
            "tenancy-vcluster-control-plane",
            "a virtual claim with skip-translate keeps its source on the host: the same copy, through the syncer",
        ),
        Case(
            "syncer-clones-synced-claim",
            OPERATOR_LAB_DEV_SYNCER,
            OPERATOR_LAB_DEV,
            CLAIMS,
            _claim("e2e-copy-x-team-x-vcluster", dataSource=synced_source),
            "admit",
            why="the virtual cluster cloning one of its own claims",
        ),
        Case(
            "deployer-runs-pod-as-deployer",
            OPERATOR_LAB_DEV_DEPLOYER,
            OPERATOR_LAB_DEV,
            PODS,
            _round8_pod("e2e-as-deployer", serviceAccountName="deployer", automountServiceAccountToken=True),
            "deny",
            "tenancy-syncer-account",
            "the syncer may exec into, debug or update any pod: one running as the deployer is its role",
        ),
        Case(
            "deployer-runs-pod-as-default",
            OPERATOR_LAB_DEV_DEPLOYER,
            OPERATOR_LAB_DEV,
            PODS,
            _round8_pod("e2e-as-default", serviceAccountName="default"),
            "admit",
            why="the tenant's pods under its other accounts",
        ),
        Case(
            "deployer-runs-impostor-behind-vcluster-service",
            OPERATOR_LAB_DEV_DEPLOYER,
            OPERATOR_LAB_DEV,
            PODS,
            _round8_pod("e2e-impostor", dict(VCLUSTER_SELECTOR)),
            "deny",
            "tenancy-vcluster-selector",
            "the Service vcluster would send a share of the virtual cluster's clients, tokens included, to it",
        ),
        Case(
            "deployer-runs-pod-labelled-app-vcluster",
            OPERATOR_LAB_DEV_DEPLOYER,
            OPERATOR_LAB_DEV,
            PODS,
            _round8_pod("e2e-app-vcluster", {"app": "vcluster"}),
            "admit",
            why="one of the two labels the Service selects by is not the control plane's",
        ),
    ]


CASES += _round8_cases()

# --- Which attack class of docs/admission-attacks.md each case replays ---------------------------

# Every class that can be expressed against the live server (a create, or a patch or PUT of an
# object `up` leaves): its attacks (refused) and legitimate uses (admitted), by case id.
# tests/admission/test_admission_cases.py checks each has both.
LIVE_CLASSES: dict[str, tuple[str, ...]] = {
    "Hole 3: hand-written Endpoints or EndpointSlices": (
        "admin-writes-endpoints",
        "deployer-writes-endpoint-slice",
        "service-cluster-ip",
    ),
    "Hole 3: ExternalName Service": ("service-external-name", "service-cluster-ip"),
    "Hole 4: Ingress defaultBackend": ("ingress-default-backend", "ingress-foreign-host", "ingress-own-host"),
    "Hole 4: controller annotations": ("ingress-server-snippet", "ingress-harmless-annotations"),
    "Hole 4: injection through an allowed annotation's value": (
        "ingress-annotation-injection",
        "ingress-harmless-annotations",
    ),
    "Hole 4: injection through an Ingress path": ("ingress-path-injection", "ingress-regex-path"),
    "Hole 4: cert-manager ACME solver annotations": ("ingress-acme-solver-class", "ingress-acme-edit-in-place"),
    "Hole 4: ListenerSet listeners": ("listener-set-catch-all", "listener-set-foreign-host", "listener-set-own-hosts"),
    "Hole 4: Certificate name fields": ("certificate-foreign-name", "certificate-ca", "certificate-own-names"),
    "Hole 5: spec.nodeName": (
        "pod-node-name",
        "deployment-node-name",
        "cronjob-node-name",
        "pod-own-pool",
        "deployer-deploys-prod",
        "cronjob-scheduled",
    ),
    # The dev stack lists no priority class, so the legitimate use is a pod naming none.
    "Hole 5: priority classes": ("pod-priority-class", "pod-own-pool"),
    "Hole 5: PodDisruptionBudget allowing no disruption": ("budget-no-disruption", "budget-one-at-a-time"),
    "Issue 33: PodDisruptionBudgets over the same pods": (
        "budget-overlapping-selector",
        "budget-other-budgets-value",
        "budget-one-at-a-time",
    ),
    "Issue 33: minAvailable equal to the replica count": ("budget-min-available", "budget-one-at-a-time"),
    "Node pools (docs/admission.md)": ("pod-foreign-pool", "pod-own-pool"),
    "NodePort Services (docs/admission.md)": ("service-node-port", "service-cluster-ip"),
    "Hole 6: the operator's pod-spec side door": (
        "operator-runs-secret-pod",
        "operator-runs-secret-job",
        "admin-runs-secret-pod",
    ),
    "Hole 6: service-account token Secrets": ("secret-token", "secret-opaque"),
    "Hole 6: PVC spec.volumeName": ("claim-volume-name", "claim-dynamic"),
    "Hole 6: PVC StorageClass": ("claim-other-class", "claim-dynamic"),
    "Hole 6: cached private images": ("pod-cached-image", "deployer-pod-always-pulls", "pod-own-pool"),
    "Flux: HelmRelease kubeConfig": ("release-kubeconfig", "release-as-deployer"),
    "Flux: sources with the controller's cloud identity": ("oci-cloud-provider", "oci-generic"),
    "Flux: HelmRelease service account": ("release-other-account", "release-as-deployer"),
    "Flux: sources of another namespace": ("release-foreign-source", "release-as-deployer"),
    # Tenants write neither kind; their legitimate use is reading them (scripts/e2e/can-i.sh).
    "Flux: Kustomizations and GitRepositories (and the Git ref of prod)": (
        "deployer-writes-kustomization",
        "deployer-writes-git-repository",
        "release-as-deployer",
    ),
    "Issue 26: values compared as text": (
        "budget-zero-percent-spelled-long",
        "budget-one-percent-spelled-long",
        "pod-zero-memory-limit",
        "pod-half-gibibyte-limit",
    ),
    "Issue 26: tenant identities write RoleBindings": ("admin-writes-role-binding", "config-map"),
    "Issue 26: chart NetworkPolicies inside platform paths": (
        "policy-dns-every-namespace",
        "policy-another-tenant",
        "policy-chart-dns",
        "policy-own-pods",
    ),
    "Issue 26: the virtual cluster's kubeconfig": (
        "deployer-forges-vcluster-kubeconfig",
        "syncer-writes-other-namespace",
        "syncer-writes-kubeconfig",
        "deployer-writes-app-secret",
    ),
    "Issue 28: a tenant's dry run is no exemption": ("admin-writes-quota", "config-map"),
    "Issue 33: hostnames across environments": (
        "route-prod-domain-from-dev",
        "route-under-prod-wildcard-from-dev",
        "listener-set-prod-domain-from-dev",
        "route-own-name",
        "route-prod-domain-in-prod",
    ),
    "Issue 33: route annotations that name hosts or addresses": (
        "route-external-dns-hostname",
        "route-external-dns-target",
        "route-harmless-annotations",
    ),
    "Issue 33: the edge path by namespace alone": ("policy-edge-namespace-only", "policy-edge-proxies"),
    "Issue 33: pods as the virtual cluster's syncer": ("deployer-runs-pod-as-syncer", "deployer-runs-pod"),
    "Hole 7: the Namespace lock (a stray identity)": ("stray-drops-tenant-label", "namespace-controller-finalizes"),
    "Issue 43: tenant Namespace labels and annotations through namespaces/status and /finalize": (
        "stray-drops-tenant-label-via-status",
        "stray-grants-admin-via-finalize",
        "namespace-controller-finalizes",
    ),
    "Issue 43: a platform-owned ResourceQuota through resourcequotas/status": (
        "stray-unlabels-quota-via-status",
        "stray-raises-quota-status",
        "quota-controller-counts",
    ),
    "Issue 26: tenancy-rbac, the second lock on RoleBindings (a stray identity)": (
        "stray-binds-admin-in-prod",
        "stray-binds-viewers-in-prod",
    ),
    "Issue 43: the syncer's pods under other accounts": ("syncer-runs-pod-as-deployer", "syncer-runs-synced-pod"),
    "Issue 43: the control plane's StatefulSet and the revisions its pods are built from": (
        "deployer-creates-control-plane-statefulset",
        "stray-plants-control-plane-revision",
        "installer-upgrades-control-plane-statefulset",
        "deployer-creates-statefulset",
        "statefulset-controller-writes-revision",
    ),
    "Issue 43: the syncer's configuration and Helm's records of its release": (
        "deployer-writes-vcluster-config",
        "syncer-writes-vcluster-config",
        "deployer-plants-release-record",
        "deployer-writes-release-record",
        "installer-writes-vcluster-config",
        "installer-writes-release-record",
        "deployer-writes-own-release-record",
    ),
    "Issue 43: the virtual cluster's HelmRelease and its source": (
        "deployer-repoints-vcluster-release",
        "deployer-repoints-vcluster-chart-source",
        "deployer-requests-vcluster-reconcile",
    ),
    "Issue 43: the control plane's certificates": (
        "deployer-writes-vcluster-certs",
        "installer-writes-vcluster-certs",
        "syncer-creates-vcluster-certs",
    ),
    "Issue 43: the control plane's volume": (
        "deployer-plants-vcluster-volume",
        "syncer-plants-vcluster-volume",
        "statefulset-controller-makes-vcluster-volume",
        "deployer-makes-own-claim",
        "deployer-mounts-vcluster-volume",
        "deployer-mounts-own-claim",
    ),
    "Issue 43: owners added to the release under an unchanged spec": (
        "deployer-gives-vcluster-release-an-owner",
        "deployer-gives-vcluster-chart-source-an-owner",
        "deployer-requests-vcluster-reconcile",
    ),
    "Issue 43: the installer's account": (
        "deployer-runs-pod-as-installer",
        "deployer-annotates-installer-account",
        "deployer-runs-pod",
    ),
    "Issue 43: tenant pods under an operator's budget": (
        "pod-operator-budget-labels",
        "deployment-operator-budget-labels",
        "pod-own-budget-label",
    ),
    "Issue 43: image volumes": ("pod-image-volume-cached", "pod-image-volume-always"),
    "Issue 43: external-dns's newer annotation prefix": (
        "route-ga-external-dns-hostname",
        "route-ga-external-dns-ttl",
    ),
    "Red team round 7, M1: vcluster-0's selector labels and controller owner": (
        "deployer-drops-control-plane-pod-label",
        "deployer-orphans-control-plane-pod",
        "syncer-drops-control-plane-pod-label-by-status",
        "deployer-annotates-control-plane-pod",
    ),
    "Red team round 7, M2: the control plane's replica count and autoscalers": (
        "deployer-scales-control-plane-to-two",
        "deployer-sets-control-plane-replicas",
        "deployer-autoscales-control-plane",
        "deployer-stops-control-plane",
        "deployer-autoscales-own-statefulset",
        "deployer-autoscales-deployment-named-vcluster",
    ),
    "Red team round 7, M3: an ephemeral volume named into data-vcluster-<n>": (
        "deployer-names-ephemeral-claim-data-vcluster-0",
        "deployer-uses-ephemeral-volume",
    ),
    "Red team round 7, L1: the Service vcluster": (
        "deployer-repoints-control-plane-service",
        "deployer-creates-service-vcluster",
        "deployer-labels-control-plane-service",
    ),
    "Red team round 7, L2: the syncer's annotations on its config Secret": (
        "syncer-gives-config-an-owner",
        "syncer-notes-distro-on-config",
    ),
    "Red team round 7, L3: reserved names": (
        "deployer-creates-account-vcluster",
        "deployer-creates-account-vcluster-installer",
        "deployer-creates-account-vc-workload-vcluster",
        "deployer-creates-release-vcluster",
        "deployer-creates-own-account",
        "release-as-deployer",
    ),
    "Red team round 7, FR2: the platform's debug container on vcluster-0": (
        "syncer-debugs-control-plane",
        "platform-debugs-control-plane",
    ),
    "Red team round 8: a claim made from data-vcluster-<n>": (
        "deployer-clones-vcluster-volume",
        "syncer-clones-vcluster-volume",
        "syncer-clones-synced-claim",
    ),
    "Red team round 8: a pod running as the deployer": (
        "deployer-runs-pod-as-deployer",
        "deployer-runs-pod-as-default",
    ),
    "Red team round 8: the control plane's labels on another pod": (
        "deployer-runs-impostor-behind-vcluster-service",
        "deployer-runs-pod-labelled-app-vcluster",
    ),
    "Tenancy: prod and other tenants' namespaces": (
        "admin-writes-prod",
        "admin-writes-other-tenant",
        "deployer-deploys-prod",
        "config-map",
    ),
}

# --- Access: `kubectl auth can-i` for every persona (scripts/e2e/can-i.sh) -----------------------

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
