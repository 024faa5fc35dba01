"""What each operator the platform drives writes into a tenant namespace, at the pinned version.

Every builder returns `Write`s: the admission request the operator (or the Kubernetes controller
acting for it) sends, with the object as the operator builds it, ported from the upstream file
named in `source` (repository, tag, path). Objects the platform renders (a CloudNativePG Cluster,
a Pooler, a MariaDB, an ExternalSecret, Flux objects) come from the plan, so a change to what the
platform renders changes what the operator writes, as it would on a cluster.

Pins: CloudNativePG 1.30 (chart 0.29.1 in Pulumi.dev.yaml; the tag read is v1.30.0, the last one
mirrored, whose pod builders 1.30.1 keeps), mariadb-operator v26.6.0, External Secrets v2.9.0 (the
CRDs the tests validate against), Flux helm-controller v1.6.3 / kustomize-controller and
source-controller of Flux 2.9 (the CRDs' versions), vCluster v0.20.0
(`tenancy:virtualClusters.chart.version`), cert-manager v1.21.1 (the CRDs' version).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from components.admission.rules.platform_owned import ESO_FINALIZER
from components.clouds.local.operator_pods import CNPG_BOOTSTRAP_CONTAINER
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.model.core.labels import PLATFORM_OWNED_KEY
from components.vcluster.values import SYNCER_ACCOUNT
from tests.cel_admission import Request
from tests.support import kubernetes_objects
from tests.vcluster.chart_pods import control_plane_pod
from tools.plan.harness import ProgramRun

CNPG_IDENTITY = "system:serviceaccount:cnpg-system:cloudnative-pg"
CNPG_OPERATOR_IMAGE = "ghcr.io/cloudnative-pg/cloudnative-pg:1.30.1"
MARIADB_IDENTITY = "system:serviceaccount:mariadb-operator:mariadb-operator"
ESO_IDENTITY = "system:serviceaccount:external-secrets:external-secrets"
CERT_MANAGER_IDENTITY = "system:serviceaccount:cert-manager:cert-manager"
# kube-controller-manager's controllers that create the pods of Deployments and StatefulSets.
REPLICASET_CONTROLLER = "system:serviceaccount:kube-system:replicaset-controller"
STATEFULSET_CONTROLLER = "system:serviceaccount:kube-system:statefulset-controller"
DEPLOYMENT_CONTROLLER = "system:serviceaccount:kube-system:deployment-controller"
FLUX_FINALIZER = "finalizers.fluxcd.io"
SA_GROUPS = ["system:serviceaccounts", "system:authenticated"]


@dataclass(frozen=True)
class Write:
    """One request an operator sends; `source` is `owner/repo tag path` of the code it follows."""

    operator: str
    what: str
    source: str
    request: Request

    @property
    def is_pod(self) -> bool:
        return self.request.kind == "Pod" and self.request.operation == "CREATE"


def _sa_groups(identity: str) -> list[str]:
    namespace = identity.split(":")[2]
    return [*SA_GROUPS, f"system:serviceaccounts:{namespace}"]


def _request(
    operation: str,
    resource: str,
    kind: str,
    identity: str,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
    subresource: str = "",
) -> Request:
    return Request(
        operation,
        resource,
        kind,
        object=obj,
        old_object=old,
        subresource=subresource,
        username=identity,
        groups=_sa_groups(identity),
    )


def _of_kind(run: ProgramRun, kind: str) -> list[dict[str, Any]]:
    return [
        o
        for o in kubernetes_objects(run)
        if o.get("kind") == kind and o["metadata"].get("namespace", "").startswith("tenant-")
    ]


def _with_finalizer(obj: dict[str, Any], finalizer: str) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    changed["metadata"]["finalizers"] = [*changed["metadata"].get("finalizers", []), finalizer]
    return changed


def _status(obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(obj), "status": status}


def _pod(namespace: str, name: str, labels: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


# --- CloudNativePG -------------------------------------------------------------------------------

_CNPG = "cloudnative-pg/cloudnative-pg v1.30.0"


def _cnpg_security_context() -> dict[str, Any]:
    """specs.GetSecurityContext with no `spec.securityContext` (pkg/specs/containers.go)."""
    return {
        "seccompProfile": {"type": "RuntimeDefault"},
        "capabilities": {"drop": ["ALL"]},
        "privileged": False,
        "runAsNonRoot": True,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
    }


def cnpg_instance_pod(cluster: dict[str, Any]) -> dict[str, Any]:
    """An instance pod (pkg/specs/pods.go createClusterPodSpec, createPostgresContainers;
    pkg/specs/containers.go createBootstrapContainer; pkg/specs/volumes.go). Postgres runs as
    26:26 (GetPostgresUID/GID), seccomp RuntimeDefault (Cluster.GetSeccompProfile)."""
    name, spec = f"{cluster['metadata']['name']}-1", cluster["spec"]
    pull = spec.get("imagePullPolicy")
    mounts = [
        {"name": "pgdata", "mountPath": "/var/lib/postgresql/data"},
        {"name": "scratch-data", "mountPath": "/run"},
    ]
    containers = [
        {
            "name": "postgres",
            "image": spec["imageName"],
            "command": ["/controller/manager", "instance", "run"],
            "ports": [{"name": "postgresql", "containerPort": 5432, "protocol": "TCP"}],
            "volumeMounts": mounts,
            "securityContext": _cnpg_security_context(),
            **({"imagePullPolicy": pull} if pull else {}),
        }
    ]
    init = {
        "name": CNPG_BOOTSTRAP_CONTAINER,
        "image": CNPG_OPERATOR_IMAGE,
        "command": ["/manager", "bootstrap", "/controller/manager"],
        "volumeMounts": mounts,
        "securityContext": _cnpg_security_context(),
        **({"imagePullPolicy": pull} if pull else {}),
    }
    pod_spec = {
        "hostname": name,
        "initContainers": [init],
        "containers": containers,
        "volumes": [
            {"name": "pgdata", "persistentVolumeClaim": {"claimName": name}},
            {"name": "scratch-data", "emptyDir": {}},
            {"name": "shm", "emptyDir": {"medium": "Memory"}},
        ],
        "securityContext": {
            "seccompProfile": {"type": "RuntimeDefault"},
            "runAsUser": 26,
            "runAsGroup": 26,
            "runAsNonRoot": True,
            "fsGroup": 26,
        },
        "serviceAccountName": cluster["metadata"]["name"],
    }
    labels = {"cnpg.io/cluster": cluster["metadata"]["name"], "cnpg.io/instanceRole": "primary"}
    return _pod(cluster["metadata"]["namespace"], name, labels, pod_spec)


JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"


def cnpg_initdb_job(cluster: dict[str, Any]) -> dict[str, Any]:
    """The bootstrap Job of a Cluster with `bootstrap.initdb` (pkg/specs/jobs.go createPrimaryJob,
    CreatePrimaryJobViaInitdb): the instance pod's init container, security contexts, pull policy
    and volumes, one `initdb` container, RestartPolicy Never, no backoff limit or deadline set."""
    instance = cnpg_instance_pod(cluster)
    name = f"{cluster['metadata']['name']}-1-initdb"
    spec = copy.deepcopy(instance["spec"])
    [postgres] = spec.pop("containers")
    spec["containers"] = [
        {**postgres, "name": "initdb", "command": ["/controller/manager", "instance", "init"], "ports": []}
    ]
    spec["hostname"] = name
    spec["restartPolicy"] = "Never"
    labels = {"cnpg.io/cluster": cluster["metadata"]["name"], "cnpg.io/jobRole": "initdb"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": cluster["metadata"]["namespace"], "labels": labels},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": spec}},
    }


def cnpg_initdb_job_pod(job: dict[str, Any]) -> dict[str, Any]:
    """The pod the Job controller creates from the Job's template."""
    template = job["spec"]["template"]
    return _pod(
        job["metadata"]["namespace"],
        f"{job['metadata']['name']}-x7k2p",
        template["metadata"]["labels"],
        copy.deepcopy(template["spec"]),
    )


def _container(containers: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """podspec.Builder's WithContainer/WithInitContainer: the template's entry of that name, or a new one."""
    for container in containers:
        if container.get("name") == name:
            return container
    containers.append({"name": name})
    return containers[-1]


def cnpg_pooler_pod(pooler: dict[str, Any]) -> dict[str, Any]:
    """A Pooler pod: pkg/specs/pgbouncer/deployments.go Deployment() on the Pooler's template, with
    pkg/podspec/builder.go's overwrite rules (the init container's image, command and security
    context are always the operator's; its pull policy and the rest stay as the template says)."""
    template = copy.deepcopy(pooler["spec"].get("template") or {})
    spec = template.setdefault("spec", {})
    spec["securityContext"] = {
        "runAsNonRoot": True,
        "runAsUser": 998,
        "runAsGroup": 996,
        "fsGroup": 996,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    pgbouncer = _container(spec.setdefault("containers", []), "pgbouncer")
    pgbouncer.setdefault("image", "ghcr.io/cloudnative-pg/pgbouncer:1.25.1")
    pgbouncer.setdefault("command", ["/controller/manager", "pgbouncer", "run"])
    pgbouncer["securityContext"] = _cnpg_security_context()
    pgbouncer.setdefault("volumeMounts", []).append({"name": "scratch-data", "mountPath": "/controller"})
    init = _container(spec.setdefault("initContainers", []), CNPG_BOOTSTRAP_CONTAINER)
    init["image"] = CNPG_OPERATOR_IMAGE
    init["command"] = ["/manager", "bootstrap", "/controller/manager"]
    init["securityContext"] = _cnpg_security_context()
    init["volumeMounts"] = [{"name": "scratch-data", "mountPath": "/controller"}]
    cluster = pooler["spec"]["cluster"]["name"]
    spec["volumes"] = [
        *spec.get("volumes", []),
        {"name": "ca", "secret": {"secretName": f"{cluster}-ca"}},
        {"name": "server-tls", "secret": {"secretName": f"{cluster}-server"}},
        {"name": "scratch-data", "emptyDir": {}},
    ]
    spec["serviceAccountName"] = pooler["metadata"]["name"]
    labels = {"cnpg.io/poolerName": pooler["metadata"]["name"], "cnpg.io/cluster": cluster}
    return _pod(pooler["metadata"]["namespace"], f"{pooler['metadata']['name']}-7d9c8b6f5-x2x4q", labels, spec)


def cnpg_cluster_objects(cluster: dict[str, Any]) -> list[Write]:
    """What the operator creates beside the pods, as itself: the instance's claim
    (pkg/reconciler/persistentvolumeclaim/build.go), Services `-rw`, `-ro`, `-r` (pkg/specs/services.go), the primary's
    PodDisruptionBudget (pkg/specs/poddisruptionbudget.go, minAvailable 1), the instances' account,
    Role and RoleBinding (pkg/specs/roles.go, rolebinding.go) and its TLS Secrets
    (pkg/certs, `-ca`, `-server`, `-replication`)."""
    name, namespace = cluster["metadata"]["name"], cluster["metadata"]["namespace"]
    meta: dict[str, Any] = {"namespace": namespace, "labels": {"cnpg.io/cluster": name}}
    storage = cluster["spec"]["storage"]
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {**meta, "name": f"{name}-1"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": storage["size"]}},
            **({"storageClassName": storage["storageClass"]} if "storageClass" in storage else {}),
        },
    }
    services: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {**meta, "name": f"{name}-{suffix}"},
            "spec": {
                "type": "ClusterIP",
                "ports": [{"name": "postgres", "port": 5432, "targetPort": 5432}],
                "selector": {"cnpg.io/cluster": name},
            },
        }
        for suffix in ("rw", "ro", "r")
    ]
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {**meta, "name": f"{name}-primary"},
        "spec": {
            "minAvailable": 1,
            "selector": {"matchLabels": {"cnpg.io/cluster": name, "cnpg.io/instanceRole": "primary"}},
        },
    }
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {**meta, "name": name}}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {**meta, "name": name},
        "rules": [
            {
                "apiGroups": ["postgresql.cnpg.io"],
                "resources": ["clusters"],
                "verbs": ["get", "list", "watch"],
                "resourceNames": [name],
            }
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {**meta, "name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }
    secrets: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {**meta, "name": f"{name}-{suffix}"},
            "data": {"tls.crt": "LS0t", "tls.key": "LS0t"},
        }
        for suffix in ("ca", "server", "replication")
    ]
    where = f"{namespace}/{name}"
    return [
        Write(
            "cloudnative-pg",
            f"claim of {where}",
            f"{_CNPG} pkg/reconciler/persistentvolumeclaim/build.go",
            _request("CREATE", "/v1/persistentvolumeclaims", "PersistentVolumeClaim", CNPG_IDENTITY, claim),
        ),
        *[
            Write(
                "cloudnative-pg",
                f"Service {s['metadata']['name']}",
                f"{_CNPG} pkg/specs/services.go",
                _request("CREATE", "/v1/services", "Service", CNPG_IDENTITY, s),
            )
            for s in services
        ],
        Write(
            "cloudnative-pg",
            f"primary PodDisruptionBudget of {where}",
            f"{_CNPG} pkg/specs/poddisruptionbudget.go",
            _request("CREATE", "policy/v1/poddisruptionbudgets", "PodDisruptionBudget", CNPG_IDENTITY, budget),
        ),
        Write(
            "cloudnative-pg",
            f"ServiceAccount of {where}",
            f"{_CNPG} pkg/specs/serviceaccount.go",
            _request("CREATE", "/v1/serviceaccounts", "ServiceAccount", CNPG_IDENTITY, account),
        ),
        Write(
            "cloudnative-pg",
            f"Role of {where}",
            f"{_CNPG} pkg/specs/roles.go",
            _request("CREATE", "rbac.authorization.k8s.io/v1/roles", "Role", CNPG_IDENTITY, role),
        ),
        Write(
            "cloudnative-pg",
            f"RoleBinding of {where}",
            f"{_CNPG} pkg/specs/rolebinding.go",
            _request("CREATE", "rbac.authorization.k8s.io/v1/rolebindings", "RoleBinding", CNPG_IDENTITY, binding),
        ),
        *[
            Write(
                "cloudnative-pg",
                f"Secret {s['metadata']['name']}",
                f"{_CNPG} pkg/certs/k8s.go",
                _request("CREATE", "/v1/secrets", "Secret", CNPG_IDENTITY, s),
            )
            for s in secrets
        ],
    ]


def cnpg_writes(run: ProgramRun) -> list[Write]:
    writes: list[Write] = []
    for cluster in _of_kind(run, "Cluster"):
        writes.append(
            Write(
                "cloudnative-pg",
                f"instance pod of {cluster['metadata']['namespace']}/{cluster['metadata']['name']}",
                f"{_CNPG} pkg/specs/pods.go",
                _request("CREATE", "/v1/pods", "Pod", CNPG_IDENTITY, cnpg_instance_pod(cluster)),
            )
        )
        status = _status(cluster, {"phase": "Cluster in healthy state", "readyInstances": 1})
        writes.append(
            Write(
                "cloudnative-pg",
                f"status of Cluster {cluster['metadata']['namespace']}/{cluster['metadata']['name']}",
                f"{_CNPG} internal/controller/cluster_status.go",
                _request(
                    "UPDATE", "postgresql.cnpg.io/v1/clusters", "Cluster", CNPG_IDENTITY, status, cluster, "status"
                ),
            )
        )
        writes += cnpg_cluster_objects(cluster)
        job = cnpg_initdb_job(cluster)
        writes += [
            Write(
                "cloudnative-pg",
                f"initdb Job of {cluster['metadata']['namespace']}/{cluster['metadata']['name']}",
                f"{_CNPG} pkg/specs/jobs.go",
                _request("CREATE", "batch/v1/jobs", "Job", CNPG_IDENTITY, job),
            ),
            Write(
                "cloudnative-pg",
                f"initdb pod of {cluster['metadata']['namespace']}/{cluster['metadata']['name']}",
                f"{_CNPG} pkg/specs/jobs.go",
                _request("CREATE", "/v1/pods", "Pod", JOB_CONTROLLER, cnpg_initdb_job_pod(job)),
            ),
        ]
    for pooler in _of_kind(run, "Pooler"):
        pod = cnpg_pooler_pod(pooler)
        where = f"{pooler['metadata']['namespace']}/{pooler['metadata']['name']}"
        workload = {"metadata": {"labels": pod["metadata"]["labels"]}, "spec": pod["spec"]}
        deployment = _workload("apps/v1", "Deployment", pooler, workload)
        writes += [
            Write(
                "cloudnative-pg",
                f"Deployment of Pooler {where}",
                f"{_CNPG} pkg/specs/pgbouncer/deployments.go",
                _request("CREATE", "apps/v1/deployments", "Deployment", CNPG_IDENTITY, deployment),
            ),
            Write(
                "cloudnative-pg",
                f"ReplicaSet of Pooler {where}",
                "kubernetes/kubernetes v1.34.0 pkg/controller/deployment/sync.go",
                _request(
                    "CREATE",
                    "apps/v1/replicasets",
                    "ReplicaSet",
                    DEPLOYMENT_CONTROLLER,
                    _workload("apps/v1", "ReplicaSet", pooler, workload),
                ),
            ),
            Write(
                "cloudnative-pg",
                f"pod of Pooler {where}",
                f"{_CNPG} pkg/specs/pgbouncer/deployments.go",
                _request("CREATE", "/v1/pods", "Pod", REPLICASET_CONTROLLER, pod),
            ),
        ]
    return writes


def _workload(api_version: str, kind: str, owner: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """A Deployment, ReplicaSet or StatefulSet of `owner`'s name whose pods are `template`."""
    labels = template["metadata"]["labels"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": owner["metadata"]["name"], "namespace": owner["metadata"]["namespace"], "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": copy.deepcopy(template)},
    }


# --- mariadb-operator ----------------------------------------------------------------------------

_MARIADB = "mariadb-operator/mariadb-operator v26.6.0"


def mariadb_pod(mariadb: dict[str, Any]) -> dict[str, Any]:
    """The MariaDB StatefulSet's pod: pkg/builder/pod_builder.go mariadbPodTemplate with
    pkg/builder/container_builder.go and securitycontext_builder.go. The container's security
    context is `spec.securityContext` or none; the pod's is `spec.podSecurityContext` or
    runAsNonRoot with user, group and fsGroup 999 (no seccomp profile)."""
    spec, name = mariadb["spec"], mariadb["metadata"]["name"]
    container: dict[str, Any] = {
        "name": "mariadb",
        "image": spec["image"],
        "ports": [{"name": "mariadb", "containerPort": 3306}],
        "volumeMounts": [
            {"name": "storage", "mountPath": "/var/lib/mysql"},
            {"name": "config", "mountPath": "/etc/mysql/conf.d"},
        ],
    }
    if "imagePullPolicy" in spec:
        container["imagePullPolicy"] = spec["imagePullPolicy"]
    if "securityContext" in spec:
        container["securityContext"] = copy.deepcopy(spec["securityContext"])
    pod_context = copy.deepcopy(
        spec.get("podSecurityContext") or {"runAsNonRoot": True, "runAsUser": 999, "runAsGroup": 999, "fsGroup": 999}
    )
    pod_spec = {
        "automountServiceAccountToken": False,
        "serviceAccountName": name,
        "initContainers": [],
        "containers": [container],
        "volumes": [
            {"name": "config", "projected": {"sources": [{"configMap": {"name": f"{name}-config-default"}}]}},
            {"name": "storage", "persistentVolumeClaim": {"claimName": f"storage-{name}-0"}},
        ],
        "securityContext": pod_context,
    }
    labels = {"app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": name}
    return _pod(mariadb["metadata"]["namespace"], f"{name}-0", labels, pod_spec)


def mariadb_objects(mariadb: dict[str, Any]) -> list[Write]:
    """What mariadb-operator writes beside the pod for a one-replica MariaDB, as itself
    (internal/controller/mariadb_controller.go phases): the spec defaults patch (setSpecDefaults,
    MariaDB.SetDefaults), the ServiceAccount (pkg/controller/rbac/controller.go ReconcileMariadbRBAC:
    no Role or RoleBinding without HA), the Service, the config ConfigMap, and, for `database` and
    `username`, the Database, the `mariadb.sys` and initial Users and their Grants
    (reconcileDatabase, reconcileUsers), each of which its SQL controllers then finalize
    (internal/controller/*_controller_finalizer.go)."""
    name, namespace = mariadb["metadata"]["name"], mariadb["metadata"]["namespace"]
    meta: dict[str, Any] = {"namespace": namespace, "labels": {"app.kubernetes.io/instance": name}}
    owner = [
        {"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB", "name": name, "uid": "0", "controller": True}
    ]
    defaulted = copy.deepcopy(mariadb)
    defaulted["spec"] = {**defaulted["spec"], "port": 3306, "service": {"type": "ClusterIP"}}
    ref = {"mariaDbRef": {"name": name}}
    spec = mariadb["spec"]
    sql_objects: list[tuple[str, str, dict[str, Any], str]] = [
        ("databases", "Database", {**ref, "name": spec["database"]}, "database.k8s.mariadb.com/finalizer"),
        ("users", "User", {**ref, "name": "mariadb.sys", "host": "localhost"}, "user.k8s.mariadb.com/finalizer"),
        (
            "grants",
            "Grant",
            {**ref, "privileges": ["SELECT"], "username": "mariadb.sys"},
            "grant.k8s.mariadb.com/finalizer",
        ),
        (
            "users",
            "User",
            {**ref, "name": spec["username"], "passwordSecretKeyRef": spec["passwordSecretKeyRef"]},
            "user.k8s.mariadb.com/finalizer",
        ),
        (
            "grants",
            "Grant",
            {**ref, "privileges": ["ALL PRIVILEGES"], "database": spec["database"], "username": spec["username"]},
            "grant.k8s.mariadb.com/finalizer",
        ),
    ]
    where = f"{namespace}/{name}"
    writes = [
        Write(
            "mariadb-operator",
            f"spec defaults of MariaDB {where}",
            f"{_MARIADB} internal/controller/mariadb_controller.go",
            _request("UPDATE", "k8s.mariadb.com/v1alpha1/mariadbs", "MariaDB", MARIADB_IDENTITY, defaulted, mariadb),
        ),
        Write(
            "mariadb-operator",
            f"ServiceAccount of MariaDB {where}",
            f"{_MARIADB} pkg/controller/rbac/controller.go",
            _request(
                "CREATE",
                "/v1/serviceaccounts",
                "ServiceAccount",
                MARIADB_IDENTITY,
                {
                    "apiVersion": "v1",
                    "kind": "ServiceAccount",
                    "metadata": {**meta, "name": name, "ownerReferences": owner},
                },
            ),
        ),
        Write(
            "mariadb-operator",
            f"Service of MariaDB {where}",
            f"{_MARIADB} pkg/builder/service_builder.go",
            _request(
                "CREATE",
                "/v1/services",
                "Service",
                MARIADB_IDENTITY,
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {**meta, "name": name, "ownerReferences": owner},
                    "spec": {
                        "type": "ClusterIP",
                        "ports": [{"name": "mariadb", "port": 3306}],
                        "selector": meta["labels"],
                    },
                },
            ),
        ),
        Write(
            "mariadb-operator",
            f"config of MariaDB {where}",
            f"{_MARIADB} pkg/builder/configmap_builder.go",
            _request(
                "CREATE",
                "/v1/configmaps",
                "ConfigMap",
                MARIADB_IDENTITY,
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {**meta, "name": f"{name}-config-default", "ownerReferences": owner},
                    "data": {"0-default.cnf": "[mariadb]\nskip-name-resolve\n"},
                },
            ),
        ),
    ]
    for index, (plural, kind, object_spec, finalizer) in enumerate(sql_objects):
        created = {
            "apiVersion": "k8s.mariadb.com/v1alpha1",
            "kind": kind,
            "metadata": {**meta, "name": f"{name}-{kind.lower()}-{index}", "ownerReferences": owner},
            "spec": object_spec,
        }
        resource = f"k8s.mariadb.com/v1alpha1/{plural}"
        writes += [
            Write(
                "mariadb-operator",
                f"{kind} {index} of MariaDB {where}",
                f"{_MARIADB} internal/controller/mariadb_controller.go",
                _request("CREATE", resource, kind, MARIADB_IDENTITY, created),
            ),
            Write(
                "mariadb-operator",
                f"finalizer on {kind} {index} of MariaDB {where}",
                f"{_MARIADB} internal/controller/{kind.lower()}_controller_finalizer.go",
                _request("UPDATE", resource, kind, MARIADB_IDENTITY, _with_finalizer(created, finalizer), created),
            ),
        ]
    return writes


def mariadb_writes(run: ProgramRun) -> list[Write]:
    writes: list[Write] = []
    for mariadb in _of_kind(run, "MariaDB"):
        where = f"{mariadb['metadata']['namespace']}/{mariadb['metadata']['name']}"
        writes.append(
            Write(
                "mariadb-operator",
                f"pod of MariaDB {where}",
                f"{_MARIADB} pkg/builder/pod_builder.go",
                _request("CREATE", "/v1/pods", "Pod", STATEFULSET_CONTROLLER, mariadb_pod(mariadb)),
            )
        )
        pod = mariadb_pod(mariadb)
        statefulset = _workload(
            "apps/v1", "StatefulSet", mariadb, {"metadata": {"labels": pod["metadata"]["labels"]}, "spec": pod["spec"]}
        )
        writes.append(
            Write(
                "mariadb-operator",
                f"StatefulSet of MariaDB {where}",
                f"{_MARIADB} pkg/builder/statefulset_builder.go",
                _request("CREATE", "apps/v1/statefulsets", "StatefulSet", MARIADB_IDENTITY, statefulset),
            )
        )
        status = _status(mariadb, {"conditions": [{"type": "Ready", "status": "True"}]})
        writes.append(
            Write(
                "mariadb-operator",
                f"status of MariaDB {where}",
                f"{_MARIADB} internal/controller/mariadb_controller.go",
                _request(
                    "UPDATE",
                    "k8s.mariadb.com/v1alpha1/mariadbs",
                    "MariaDB",
                    MARIADB_IDENTITY,
                    status,
                    mariadb,
                    "status",
                ),
            )
        )
        writes += mariadb_objects(mariadb)
    return writes


# --- External Secrets Operator -------------------------------------------------------------------

_ESO = "external-secrets/external-secrets v2.9.0"


def eso_writes(run: ProgramRun, identity: str = ESO_IDENTITY) -> list[Write]:
    """pkg/controllers/externalsecret/externalsecret_controller.go: Reconcile adds
    ExternalSecretFinalizer with a merge patch before syncing, removes it when the object is being
    deleted, writes status through the subresource, and creates the target Secret (owner: the
    ExternalSecret, label reconcile.external-secrets.io/managed, externalsecret_controller_secret.go)."""
    writes: list[Write] = []
    resource = "external-secrets.io/v1/externalsecrets"
    for external in _of_kind(run, "ExternalSecret"):
        where = f"{external['metadata']['namespace']}/{external['metadata']['name']}"
        finalized = _with_finalizer(external, ESO_FINALIZER)
        deleting = copy.deepcopy(finalized)
        deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        released = copy.deepcopy(deleting)
        released["metadata"]["finalizers"] = [f for f in released["metadata"]["finalizers"] if f != ESO_FINALIZER]
        status = _status(finalized, {"conditions": [{"type": "Ready", "status": "True", "reason": "SecretSynced"}]})
        target = external["spec"].get("target", {}).get("name", external["metadata"]["name"])
        # externalsecret_controller_template.go applyTemplate: with no `target.template`, the
        # ExternalSecret's own labels and annotations are copied onto the Secret (the platform's
        # ownership and tenant labels included); with one, the template's metadata is.
        template = external["spec"].get("target", {}).get("template")
        carried = (template or {}).get("metadata", {}) if template is not None else external["metadata"]
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {
                "name": target,
                "namespace": external["metadata"]["namespace"],
                "labels": {**carried.get("labels", {}), "reconcile.external-secrets.io/managed": "true"},
                **({"annotations": dict(carried["annotations"])} if carried.get("annotations") else {}),
                "ownerReferences": [
                    {
                        "apiVersion": "external-secrets.io/v1",
                        "kind": "ExternalSecret",
                        "name": external["metadata"]["name"],
                        "uid": "00000000-0000-0000-0000-000000000001",
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "data": {"value": "c2VjcmV0"},
        }
        path = f"{_ESO} pkg/controllers/externalsecret/externalsecret_controller.go"
        writes += [
            Write(
                "external-secrets",
                f"cleanup finalizer on {where}",
                path,
                _request("UPDATE", resource, "ExternalSecret", identity, finalized, external),
            ),
            Write(
                "external-secrets",
                f"finalizer removed from {where} being deleted",
                path,
                _request("UPDATE", resource, "ExternalSecret", identity, released, deleting),
            ),
            Write(
                "external-secrets",
                f"status of {where}",
                path,
                _request("UPDATE", resource, "ExternalSecret", identity, status, finalized, "status"),
            ),
            Write(
                "external-secrets",
                f"target Secret of {where}",
                f"{_ESO} pkg/controllers/externalsecret/externalsecret_controller_template.go",
                _request("CREATE", "/v1/secrets", "Secret", identity, secret),
            ),
        ]
    return writes


def platform_owned_external_secrets(run: ProgramRun) -> list[dict[str, Any]]:
    return [e for e in _of_kind(run, "ExternalSecret") if PLATFORM_OWNED_KEY in e["metadata"].get("labels", {})]


# --- Flux --------------------------------------------------------------------------------------

_FLUX = {
    "HelmRelease": (
        "helm-controller",
        "helm.toolkit.fluxcd.io/v2/helmreleases",
        "fluxcd/helm-controller v1.6.3 internal/controller/helmrelease_controller.go",
    ),
    "Kustomization": (
        "kustomize-controller",
        "kustomize.toolkit.fluxcd.io/v1/kustomizations",
        "fluxcd/kustomize-controller v1.9.0 internal/controller/kustomization_controller.go",
    ),
    "GitRepository": (
        "source-controller",
        "source.toolkit.fluxcd.io/v1/gitrepositories",
        "fluxcd/source-controller v1.9.0 internal/controller/gitrepository_controller.go",
    ),
    "HelmRepository": (
        "source-controller",
        "source.toolkit.fluxcd.io/v1/helmrepositories",
        "fluxcd/source-controller v1.9.0 internal/controller/helmrepository_controller.go",
    ),
    "OCIRepository": (
        "source-controller",
        "source.toolkit.fluxcd.io/v1/ocirepositories",
        "fluxcd/source-controller v1.9.0 internal/controller/ocirepository_controller.go",
    ),
}


def flux_writes(run: ProgramRun) -> list[Write]:
    """Each controller adds `finalizers.fluxcd.io` (api/v2/helmrelease_types.go HelmReleaseFinalizer;
    the same constant in kustomize- and source-controller) and writes status; helm-controller then
    stores the release as a `helm.sh/release.v1` Secret in the target namespace while impersonating
    the object's service account (internal/action/config.go, Helm's storage driver "secret")."""
    writes: list[Write] = []
    for kind, (controller, resource, source) in _FLUX.items():
        identity = f"system:serviceaccount:flux-system:{controller}"
        for obj in _of_kind(run, kind):
            where = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
            finalized = _with_finalizer(obj, FLUX_FINALIZER)
            status = _status(finalized, {"conditions": [{"type": "Ready", "status": "True"}]})
            writes.append(
                Write(
                    controller,
                    f"finalizer on {kind} {where}",
                    source,
                    _request("UPDATE", resource, kind, identity, finalized, obj),
                )
            )
            writes.append(
                Write(
                    controller,
                    f"status of {kind} {where}",
                    source,
                    _request("UPDATE", resource, kind, identity, status, finalized, "status"),
                )
            )
    for release in _of_kind(run, "HelmRelease"):
        namespace = release["spec"].get("targetNamespace", release["metadata"]["namespace"])
        account = release["spec"].get("serviceAccountName", DEPLOYER_ACCOUNT)
        name = release["spec"].get("releaseName", release["metadata"]["name"])
        storage = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "helm.sh/release.v1",
            "metadata": {
                "name": f"sh.helm.release.v1.{name}.v1",
                "namespace": namespace,
                "labels": {"owner": "helm", "name": name, "status": "deployed", "version": "1"},
            },
            "data": {"release": "H4sIAAAAAAAA"},
        }
        identity = f"system:serviceaccount:{release['metadata']['namespace']}:{account}"
        writes.append(
            Write(
                "helm-controller",
                f"release storage of {namespace}/{name} (impersonating {account})",
                "helm/helm v3 pkg/storage/driver/secrets.go (helm-controller v1.6.3 internal/action/config.go)",
                _request("CREATE", "/v1/secrets", "Secret", identity, storage),
            )
        )
    return writes


# --- vCluster syncer ---------------------------------------------------------------------------


def vcluster_writes(run: ProgramRun) -> list[Write]:
    """The syncer creates each virtual pod in the host namespace, as the syncer's service account:
    loft-sh/vcluster v0.20.0 pkg/controllers/resources/pods/translate/translator.go (Translate: the
    physical name, `vcluster.loft.sh/*` annotations, automountServiceAccountToken false and the
    service account token through a projected volume). The virtual pod is the restricted pod a
    tenant writes inside; the host's policies still judge the copy."""
    writes: list[Write] = []
    for release in _of_kind(run, "HelmRelease"):
        chart = (release["spec"].get("chart") or {}).get("spec", {}).get("chart")
        if chart != "vcluster":
            continue
        namespace, vcluster = (
            release["metadata"]["namespace"],
            release["spec"].get("releaseName", release["metadata"]["name"]),
        )
        labels = {"vcluster.loft.sh/managed-by": vcluster, "vcluster.loft.sh/namespace": "default", "app": "web"}
        # Translate sets the workload account on every pod (`pPod.Spec.ServiceAccountName =
        # t.serviceAccount`): `controlPlane.advanced.workloadServiceAccount.name`, by default
        # `vc-workload-<name>` (pkg/config/validation.go).
        advanced = ((release["spec"].get("values") or {}).get("controlPlane") or {}).get("advanced") or {}
        account = (advanced.get("workloadServiceAccount") or {}).get("name") or f"vc-workload-{vcluster}"
        spec: dict[str, Any] = {
            "serviceAccountName": account,
            "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [
                {
                    "name": "web",
                    "image": "registry.example.org/web:1.0.0",
                    "imagePullPolicy": "Always",
                    "resources": {"limits": {"memory": "128Mi"}},
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                    "volumeMounts": [
                        {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
                    ],
                }
            ],
            "volumes": [
                {
                    "name": "kube-api-access",
                    "projected": {
                        "sources": [
                            {
                                "downwardAPI": {
                                    "items": [
                                        {
                                            "path": "token",
                                            "fieldRef": {
                                                "fieldPath": "metadata.annotations['vcluster.loft.sh/token-abc']"
                                            },
                                        }
                                    ]
                                }
                            }
                        ]
                    },
                }
            ],
        }
        # pkg/controllers/resources/pods/syncer.go SyncToHost: the chart's enforced tolerations
        # (`key=value:Effect`) are appended, and a pod without nodeName gets the node selector
        # labels of `sync.fromHost.nodes.selector.labels` (pkg/config/config.go reads both).
        sync = (release["spec"].get("values") or {}).get("sync", {})
        for enforced in sync.get("toHost", {}).get("pods", {}).get("enforceTolerations", []):
            key_value, effect = enforced.rsplit(":", 1)
            key, value = key_value.split("=", 1)
            toleration = {"key": key, "operator": "Equal", "value": value, "effect": effect}
            spec.setdefault("tolerations", []).append(toleration)
        selector = sync.get("fromHost", {}).get("nodes", {}).get("selector", {}).get("labels") or {}
        if selector:
            spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **selector}
        pod = _pod(namespace, f"web-x-default-x-{vcluster}", labels, spec)
        pod["metadata"]["annotations"] = {
            "vcluster.loft.sh/name": "web",
            "vcluster.loft.sh/namespace": "default",
            "vcluster.loft.sh/token-abc": "eyJhbGciOi",
        }
        identity = f"system:serviceaccount:{namespace}:{SYNCER_ACCOUNT}"
        writes.append(
            Write(
                "vcluster-syncer",
                f"synced pod in {namespace}",
                "loft-sh/vcluster v0.20.0 pkg/controllers/resources/pods/translate/translator.go",
                _request("CREATE", "/v1/pods", "Pod", identity, pod),
            )
        )
        writes += _release_objects(release, namespace, vcluster)
    return writes


def _release_objects(release: dict[str, Any], namespace: str, vcluster: str) -> list[Write]:
    """What the release is made of and who writes it (issue 43): helm-controller, impersonating the
    account the HelmRelease names, applies the chart's StatefulSet (chart/templates/statefulset.yaml,
    its template as tests/vcluster/chart_pods.py rebuilds it), config Secret (config-secret.yaml) and
    CoreDNS ConfigMap (coredns-configmap.yaml), and writes the HelmChart of the release's chart
    template with its own identity (helm-controller v1.4.5 internal/reconcile/helmchart_template.go);
    the syncer then notes its distro and store on the config Secret at each start (vCluster v0.20.0
    pkg/setup/config.go updateSecretAnnotations)."""
    account = release["spec"]["serviceAccountName"]
    installer = f"system:serviceaccount:{namespace}:{account}"
    pod = control_plane_pod(release["spec"]["values"], namespace, vcluster)
    selector = {"app": "vcluster", "release": vcluster}
    helm = {"meta.helm.sh/release-name": vcluster, "meta.helm.sh/release-namespace": namespace}
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": vcluster, "namespace": namespace, "labels": selector, "annotations": helm},
        "spec": {
            "replicas": 1,
            "serviceName": f"{vcluster}-headless",
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": pod["metadata"]["labels"]}, "spec": pod["spec"]},
        },
    }
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": f"vc-config-{vcluster}", "namespace": namespace, "labels": selector, "annotations": helm},
        "data": {"config.yaml": "Y29udHJvbFBsYW5lOiB7fQ=="},
    }
    coredns = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"vc-coredns-{vcluster}", "namespace": namespace, "annotations": helm},
        "data": {"coredns.yaml": "kind: List"},
    }
    noted = copy.deepcopy(config)
    noted["metadata"]["annotations"] = {
        **helm,
        "vcluster.loft.sh/distro": "k8s",
        "vcluster.loft.sh/store": "embedded-database",
    }
    chart = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmChart",
        "metadata": {"name": f"{namespace}-{release['metadata']['name']}", "namespace": namespace},
        "spec": release["spec"]["chart"]["spec"],
    }
    chart_source = "fluxcd/helm-controller v1.4.5 internal/reconcile/helmchart_template.go"
    applied = "loft-sh/vcluster v0.20.0 chart/templates (applied by fluxcd/helm-controller v1.4.5 internal/action)"
    syncer = f"system:serviceaccount:{namespace}:{SYNCER_ACCOUNT}"
    return [
        Write(
            "helm-controller",
            f"control plane StatefulSet in {namespace} (as {account})",
            applied,
            _request("CREATE", "apps/v1/statefulsets", "StatefulSet", installer, statefulset),
        ),
        Write(
            "helm-controller",
            f"config Secret in {namespace} (as {account})",
            applied,
            _request("CREATE", "/v1/secrets", "Secret", installer, config),
        ),
        Write(
            "helm-controller",
            f"CoreDNS ConfigMap in {namespace} (as {account})",
            applied,
            _request("CREATE", "/v1/configmaps", "ConfigMap", installer, coredns),
        ),
        Write(
            "helm-controller",
            f"HelmChart of the release in {namespace}",
            chart_source,
            _request(
                "CREATE",
                "source.toolkit.fluxcd.io/v1/helmcharts",
                "HelmChart",
                "system:serviceaccount:flux-system:helm-controller",
                chart,
            ),
        ),
        Write(
            "vcluster-syncer",
            f"distro and store on the config Secret in {namespace}",
            "loft-sh/vcluster v0.20.0 pkg/setup/config.go",
            _request("UPDATE", "/v1/secrets", "Secret", syncer, noted, config),
        ),
    ]


# --- cert-manager --------------------------------------------------------------------------------

_CM = "cert-manager/cert-manager v1.21.1"


def cert_manager_writes(namespace: str, host: str) -> list[Write]:
    """For a Certificate a tenant writes: the CertificateRequest (pkg/controller/certificates/
    requestmanager/requestmanager_controller.go), the ACME Order and Challenge
    (pkg/controller/acmeorders/sync.go, pkg/controller/acmechallenges), the Secret holding the
    key and certificate (pkg/controller/certificates/issuing/internal/secret.go), with finalizer
    `finalizer.acme.cert-manager.io` on the Challenge."""
    owner = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "name": "web", "uid": "u1", "controller": True}
    request = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "CertificateRequest",
        "metadata": {
            "name": "web-1",
            "namespace": namespace,
            "ownerReferences": [owner],
            "annotations": {"cert-manager.io/certificate-name": "web"},
        },
        "spec": {
            "request": "LS0tLS1CRUdJTg==",
            "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer", "group": "cert-manager.io"},
            "usages": ["digital signature", "key encipherment"],
        },
    }
    order = {
        "apiVersion": "acme.cert-manager.io/v1",
        "kind": "Order",
        "metadata": {"name": "web-1-1", "namespace": namespace},
        "spec": {
            "request": "LS0tLS1CRUdJTg==",
            "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
            "dnsNames": [host],
        },
    }
    challenge = {
        "apiVersion": "acme.cert-manager.io/v1",
        "kind": "Challenge",
        "metadata": {"name": "web-1-1-1", "namespace": namespace, "finalizers": ["finalizer.acme.cert-manager.io"]},
        "spec": {
            "dnsName": host,
            "type": "DNS-01",
            "url": "https://acme.example/chall",
            "authorizationURL": "https://acme.example/authz",
            "key": "k",
            "token": "t",
            "solver": {"dns01": {}},
            "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
        },
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {
            "name": "web-tls",
            "namespace": namespace,
            "annotations": {
                "cert-manager.io/certificate-name": "web",
                "cert-manager.io/alt-names": host,
                "cert-manager.io/issuer-name": "letsencrypt",
                "cert-manager.io/issuer-kind": "ClusterIssuer",
            },
            "labels": {"controller.cert-manager.io/fao": "true"},
        },
        "data": {"tls.crt": "LS0t", "tls.key": "LS0t", "ca.crt": ""},
    }
    who = CERT_MANAGER_IDENTITY
    return [
        Write(
            "cert-manager",
            "CertificateRequest",
            f"{_CM} pkg/controller/certificates/requestmanager/requestmanager_controller.go",
            _request("CREATE", "cert-manager.io/v1/certificaterequests", "CertificateRequest", who, request),
        ),
        Write(
            "cert-manager",
            "ACME Order",
            f"{_CM} pkg/controller/certificaterequests/acme/acme.go",
            _request("CREATE", "acme.cert-manager.io/v1/orders", "Order", who, order),
        ),
        Write(
            "cert-manager",
            "ACME Challenge",
            f"{_CM} pkg/controller/acmeorders/sync.go",
            _request("CREATE", "acme.cert-manager.io/v1/challenges", "Challenge", who, challenge),
        ),
        Write(
            "cert-manager",
            "certificate Secret",
            f"{_CM} pkg/controller/certificates/issuing/internal/secret.go",
            _request("CREATE", "/v1/secrets", "Secret", who, secret),
        ),
    ]


def http01_solver_pod(namespace: str) -> dict[str, Any]:
    """The HTTP-01 solver pod cert-manager starts in the Certificate's namespace (pkg/issuer/acme/
    http/pod.go buildDefaultPod: `imagePullPolicy: IfNotPresent`, not changeable through the
    issuer's podTemplate, which covers pod-level fields only)."""
    return _pod(
        namespace,
        "cm-acme-http-solver-abcde",
        {"acme.cert-manager.io/http01-solver": "true"},
        {
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [
                {
                    "name": "acmesolver",
                    "image": "quay.io/jetstack/cert-manager-acmesolver:v1.21.1",
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {
                        "requests": {"cpu": "10m", "memory": "64Mi"},
                        "limits": {"cpu": "100m", "memory": "64Mi"},
                    },
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                }
            ],
        },
    )


def all_writes(run: ProgramRun) -> list[Write]:
    return [*cnpg_writes(run), *mariadb_writes(run), *eso_writes(run), *flux_writes(run), *vcluster_writes(run)]
