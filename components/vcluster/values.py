"""The values the vCluster chart is installed with: a control plane that fits the host's rules.

Every value here exists because a host guard rail demands it or because the platform, not the
chart, owns it:
- the chart renders no RBAC, not the syncer's ServiceAccount and not the workload ServiceAccount
  (`controlPlane.advanced.workloadServiceAccount`, the host identity of synced pods): those accounts
  and the syncer's namespace-scoped Role are registered by the platform (objects.py, rbac.py),
  visible in every preview; the workload account is bound to nothing, so it holds no rights;
- the control plane runs as non-root with every capability dropped and a memory limit, so it is
  admitted under Pod Security `restricted` and the workload rule like any tenant pod;
- the control plane and every pod it syncs to the host select the tenant's pool and tolerate its
  taint only; the host's node-pool rule refuses anything else, so this is what makes them schedulable;
- nodes are virtual (fake nodes), so the syncer never needs a ClusterRole to read real nodes;
- the kubeconfig is exported into a Secret in the host namespace, addressed through the in-cluster
  Service, for the tenant and for Flux (gitops.py); it never passes through Pulumi;
- CoreDNS, which the syncer deploys inside and syncs to the host, is the chart's own manifest with
  the two fields the host requires and the chart offers no value for (coredns.py).
Every key is one the pinned chart's values.schema.json and values.yaml have (tests/charts).
"""

from __future__ import annotations

from typing import Any

from components.model.core.labels import NODE_POOL_KEY, NODE_POOL_TAINT_EFFECT
from components.model.tenant_file.isolation import CHART_COREDNS_RESOURCES, VirtualClusterSettings
from components.vcluster.coredns import coredns_manifests

# The Helm release name: the StatefulSet is `vcluster`, its pod `vcluster-0`, its Service `vcluster`.
RELEASE_NAME = "vcluster"
# The platform-registered account the control plane (syncer) runs as.
SYNCER_ACCOUNT = "vcluster"
# The host account every synced pod runs as (`controlPlane.advanced.workloadServiceAccount`, the chart's,
# bound to nothing): the syncer sets it on each pod it writes (vCluster v0.20.0
# pkg/controllers/resources/pods/translate/translator.go, `pPod.Spec.ServiceAccountName =
# t.serviceAccount`, with `sync.toHost.serviceAccounts` off). Named here rather than left to the
# chart's default (`vc-workload-<release>`), so the host rule on the syncer's pods
# (components/admission/rules/syncer_account.py) and the chart cannot disagree.
WORKLOAD_ACCOUNT = f"vc-workload-{RELEASE_NAME}"
# The host account helm-controller applies the release as (issue 43): the platform's HelmRelease names
# it, the platform renders it (no token, bound to the installer role only), and admission keeps the
# release's objects to it (components/admission/rules/vcluster_release.py). Not the deployer: the
# deployer is the tenant's own identity, and a lock keyed on the identity that applies the release is
# no lock when the tenant can act as that identity.
INSTALLER_ACCOUNT = f"{RELEASE_NAME}-installer"
# What the chart (0.20.0, chart/templates/) renders that the control plane pod is made of or reads:
# the StatefulSet (named after the release), the Secret holding the whole configuration the syncer
# starts with (`config-secret.yaml`, mounted as its config), and CoreDNS's manifests
# (`coredns-configmap.yaml`, mounted and applied inside). The pod is the StatefulSet's first.
CONTROL_PLANE_STATEFULSET = RELEASE_NAME
CONTROL_PLANE_POD = f"{RELEASE_NAME}-0"
# How many control plane pods run: one. vCluster v0.20.0 elects a leader only when the chart's
# `highAvailability.replicas` is above one (start.go StartLeaderElection), so a second replica of a
# single-replica release is a second syncer working unelected beside the first, each deleting what
# the other writes. Set in the values (below) and held by admission on the StatefulSet's `scale`
# (components/admission/rules/vcluster_control_plane.py): tenant identities may scale it to 0 or to this.
CONTROL_PLANE_REPLICAS = 1
# The Service the chart renders (`service.yaml`, named after the release): the address of the
# exported kubeconfig, and the owner of the certificate Secret (pkg/certs/ensure.go), which the
# garbage collector deletes with it.
CONTROL_PLANE_SERVICE = RELEASE_NAME
CONFIG_SECRET = f"vc-config-{RELEASE_NAME}"
COREDNS_CONFIG_MAP = f"vc-coredns-{RELEASE_NAME}"
# What the control plane writes for itself at its first start and reads at every start: the Secret
# holding every key of its PKI and the kubeconfigs of its components (vCluster v0.20.0
# pkg/certs/ensure.go, `vClusterName + "-certs"`, created by the syncer, rewritten by it when the
# API server's certificate or the kubeconfigs' servers are stale; each start writes its keys into
# /data/pki), and the claims of the StatefulSet's volume claim template `data`
# (chart/templates/_persistence.tpl), `data-vcluster-<ordinal>`, whose /data/pki the control plane
# builds the Secret from when it is absent. The StatefulSet controller creates a claim of that name
# only when none exists, and uses an existing one as it is.
CERTS_SECRET = f"{RELEASE_NAME}-certs"
DATA_CLAIM_PREFIX = f"data-{RELEASE_NAME}-"
# The host accounts of a virtual cluster, all the platform's (objects.py, rbac.py): reserved by name in
# every tenant namespace, as the release's other objects are.
PLATFORM_ACCOUNTS = (SYNCER_ACCOUNT, INSTALLER_ACCOUNT, WORKLOAD_ACCOUNT)
# The StatefulSet's selector (chart/templates/statefulset.yaml): its ControllerRevisions carry it.
CONTROL_PLANE_SELECTOR = {"app": "vcluster", "release": RELEASE_NAME}
# Helm's release records (helm.sh/helm/v3 pkg/storage/driver/secrets.go): Secrets named
# `sh.helm.release.v1.<release>.v<version>`, labelled `owner: helm` and `name: <release>`; Helm reads
# them by name (Get) and by those labels (Query, which `Last`, history and drift detection use).
RELEASE_SECRET_PREFIX = f"sh.helm.release.v1.{RELEASE_NAME}.v"
RELEASE_RECORD_LABELS = {"owner": "helm", "name": RELEASE_NAME}
# The Secret vCluster writes its admin kubeconfig into, in the host namespace.
KUBECONFIG_SECRET = "vcluster-kubeconfig"
# The key vCluster stores the kubeconfig under in that Secret.
KUBECONFIG_KEY = "config"
# The port the control plane listens on; its Service maps 443 to it.
CONTROL_PLANE_PORT = 8443
# A non-root user for the control plane (any non-zero id; the image runs as any user).
_RUN_AS = 12345


def server_host(namespace: str) -> str:
    """The host name of the virtual cluster's API server inside the host cluster."""
    return f"{RELEASE_NAME}.{namespace}.svc"


def server_url(namespace: str) -> str:
    """The virtual cluster's API server as seen from inside the host cluster (Flux, tenant pods)."""
    return f"https://{server_host(namespace)}:443"


def _placement(pool: str | None) -> tuple[dict[str, str], list[dict[str, str]]]:
    if pool is None:
        return {}, []
    toleration = {"key": NODE_POOL_KEY, "operator": "Equal", "value": pool, "effect": NODE_POOL_TAINT_EFFECT}
    return {NODE_POOL_KEY: pool}, [toleration]


def _security() -> dict[str, Any]:
    return {
        "podSecurityContext": {
            "runAsNonRoot": True,
            "runAsUser": _RUN_AS,
            "runAsGroup": _RUN_AS,
            "fsGroup": _RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containerSecurityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "runAsUser": _RUN_AS,
            "runAsGroup": _RUN_AS,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def _control_plane(
    namespace: str, pool: str | None, settings: VirtualClusterSettings, labels: dict[str, str], storage_class: str
) -> dict[str, Any]:
    selector, tolerations = _placement(pool)
    security = _security()
    return {
        # Upstream Kubernetes as the virtual control plane; its binaries arrive through init
        # containers, which must be as hardened as the main container to pass Pod Security.
        # Always pull: the host's workloads rule requires it of every pod in a tenant namespace.
        "distro": {
            "k8s": {
                "enabled": True,
                "apiServer": {"imagePullPolicy": "Always"},
                "controllerManager": {"imagePullPolicy": "Always"},
                "scheduler": {"imagePullPolicy": "Always"},
                "securityContext": security["containerSecurityContext"],
            }
        },
        "statefulSet": {
            "imagePullPolicy": "Always",
            # One syncer, elected by nobody: admission holds tenants' scaling to 0 or this.
            "highAvailability": {"replicas": CONTROL_PLANE_REPLICAS},
            "labels": labels,
            "pods": {"labels": labels},
            "resources": {
                "requests": {"cpu": settings.cpu_request, "memory": settings.memory_request},
                "limits": {"memory": settings.memory_limit},
            },
            "scheduling": {"nodeSelector": selector, "tolerations": tolerations},
            "security": security,
            "persistence": {
                # The state store: deleted with the StatefulSet, so what `discardState` acknowledges
                # is exactly what a switch back to `namespace` removes (no orphan volume in the quota).
                # On the platform's class (reclaim policy Delete): the host refuses claims on any other.
                "volumeClaim": {
                    "enabled": True,
                    "retentionPolicy": "Delete",
                    "size": settings.storage,
                    "storageClass": storage_class,
                },
            },
        },
        # The syncer's account is the platform's (rbac.py); the chart must not make one.
        "advanced": {
            "serviceAccount": {"enabled": False, "name": SYNCER_ACCOUNT},
            # The platform renders it (objects.py); the chart only passes the name to the syncer.
            "workloadServiceAccount": {"enabled": False, "name": WORKLOAD_ACCOUNT},
            **({"defaultImageRegistry": settings.image_registry} if settings.image_registry else {}),
        },
        # The syncer applies these inside and runs them as its own user (pkg/coredns/coredns.go);
        # the chart's default resources, which an overwritten manifest would otherwise lose.
        "coredns": {"overwriteManifests": coredns_manifests(run_as=_RUN_AS, resources=CHART_COREDNS_RESOURCES)},
        "service": {"enabled": True, "spec": {"type": "ClusterIP"}},
        "ingress": {"enabled": False},
        # The serving certificate covers `vcluster`, `vcluster.<namespace>`, the ClusterIP and
        # localhost (vCluster v0.20.0 pkg/certs); the exported kubeconfig's server, which Flux and
        # tenant pods use, is the `.svc` name: without it here every TLS handshake fails.
        "proxy": {"extraSANs": [server_host(namespace)]},
    }


def chart_values(
    *,
    namespace: str,
    pool: str | None,
    settings: VirtualClusterSettings,
    labels: dict[str, str],
    manifests: str,
    storage_class: str,
) -> dict[str, Any]:
    """The chart values for one tenant environment's virtual cluster."""
    selector, tolerations = _placement(pool)
    enforced = [f"{t['key']}={t['value']}:{t['effect']}" for t in tolerations]
    return {
        "controlPlane": _control_plane(namespace, pool, settings, labels, storage_class),
        "sync": {
            "toHost": {
                # Only namespaced kinds whose host copies every host rule already judges.
                "pods": {"enabled": True, "enforceTolerations": enforced},
                # Endpoints of selector-less virtual Services would be copied to the host with
                # whatever addresses the tenant wrote: a path to any pod (rbac.py grants no writes).
                "endpoints": {"enabled": False},
                "ingresses": {"enabled": False},
                "networkPolicies": {"enabled": False},
                "serviceAccounts": {"enabled": False},
                "priorityClasses": {"enabled": False},
                "persistentVolumes": {"enabled": False},
                "storageClasses": {"enabled": False},
            },
            "fromHost": {
                # Fake nodes: no ClusterRole on the host. The selector labels are set as the node
                # selector of every pod synced to the host (the chart's contract for this field).
                "nodes": {"enabled": False, "syncBackChanges": False, "selector": {"all": False, "labels": selector}},
            },
        },
        "rbac": {"role": {"enabled": False}, "clusterRole": {"enabled": False}},
        "networking": {"advanced": {"fallbackHostCluster": False}},
        # The host's NetworkPolicies apply (objects.py); the chart's own policy would duplicate them.
        "policies": {"networkPolicy": {"enabled": False}},
        "exportKubeConfig": {
            "server": server_url(namespace),
            "secret": {"name": KUBECONFIG_SECRET},
        },
        "telemetry": {"enabled": False},
        # Applied inside the virtual cluster at startup: who may do what in it (inside.py). In the
        # 0.20 chart they belong under `vcluster` (`experimental.deploy` closes its keys: a
        # `manifests` directly under it makes Helm refuse the whole release).
        "experimental": {"deploy": {"vcluster": {"manifests": manifests}}},
    }
