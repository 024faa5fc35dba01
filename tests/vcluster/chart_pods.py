"""The pods a virtual cluster puts in its host namespace, rebuilt from the release's values the way
the pinned chart and syncer build them (loft-sh/vcluster tag v0.20.0).

- the control plane pod: chart/templates/statefulset.yaml with the k8s distro's init containers
  (chart/templates/_init-containers.tpl) and image helpers (chart/templates/_helper.tpl), over the
  chart's defaults merged with the release's values as Helm merges them; the StatefulSet
  controller creates it;
- CoreDNS: the manifest the syncer applies inside (`controlPlane.coredns.overwriteManifests`, else
  the chart's own, tests/vcluster/data/coredns-deployment.v0.20.0.yaml) with the syncer's template
  variables filled in (pkg/coredns/coredns.go), its Deployment's pod as the virtual ReplicaSet
  controller creates it, then copied to the host by the syncer's pod translator
  (pkg/controllers/resources/pods/translate/translator.go Translate, syncer.go SyncToHost).

A change to the platform's values changes these pods as it would on a cluster; the fields the
host judges (images, pull policies, security contexts, placement, volumes) are modelled, others
(probes, env of service links) only where the template always writes them.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import yaml

from tests.charts.pinned import DATA

CHART_VERSION = "0.20.0"
SOURCE = "loft-sh/vcluster v0.20.0"
DEFAULTS: dict[str, Any] = json.loads((DATA / "vcluster" / CHART_VERSION / "values.defaults.json").read_text("utf-8"))
CHART_COREDNS = (DATA.parents[1] / "vcluster" / "data" / "coredns-deployment.v0.20.0.yaml").read_text("utf-8")
# pkg/coredns/coredns.go: DefaultImage where pkg/constants/coredns.go CoreDNSVersionMap has no entry
# for the virtual Kubernetes minor (it stops at 1.27; the chart's k8s images default to v1.30.2).
COREDNS_IMAGE = "coredns/coredns:1.11.3"
# pkg/coredns/coredns.go defaultUID/defaultGID: used when the syncer runs as root.
_ROOT_FALLBACK_ID = 1001


def coalesce(defaults: Any, values: Any) -> Any:
    """Helm's merge of user values over chart defaults (helm/helm v3 pkg/chartutil/coalesce.go):
    maps merge key by key, anything else replaces, and a null removes the default."""
    if not isinstance(defaults, dict) or not isinstance(values, dict):
        return copy.deepcopy(values)
    merged = copy.deepcopy(defaults)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = coalesce(defaults.get(key), value)
    return merged


def _image(default_registry: str, registry: str, repository: str, tag: str) -> str:
    """_helper.tpl `vcluster.image`: the default registry replaces the image's own."""
    if default_registry:
        return f"{default_registry}/{repository}:{tag}"
    return f"{registry}/{repository}:{tag}" if registry else f"{repository}:{tag}"


def _control_plane_image(cp: dict[str, Any]) -> str:
    image = cp["statefulSet"]["image"]
    tag = image["tag"] or CHART_VERSION  # `.Chart.Version` of the packaged chart
    return _image(cp["advanced"]["defaultImageRegistry"], image["registry"], image["repository"], tag)


def _k8s_init(cp: dict[str, Any], name: str, part: str, binary: str) -> dict[str, Any]:
    k8s = cp["distro"]["k8s"]
    image = k8s[part]["image"]
    tag = k8s["version"] if k8s["version"] and image["tag"] == "v1.30.2" else image["tag"]
    container: dict[str, Any] = {
        "name": name,
        "image": _image(cp["advanced"]["defaultImageRegistry"], image["registry"], image["repository"], tag),
        "volumeMounts": [{"mountPath": "/binaries", "name": "binaries"}],
        "command": ["/binaries/vcluster"],
        "args": ["cp", f"/usr/local/bin/{binary}", f"/binaries/{binary}"],
        "securityContext": k8s["securityContext"],
        "resources": k8s["resources"],
    }
    if k8s[part]["imagePullPolicy"]:
        container["imagePullPolicy"] = k8s[part]["imagePullPolicy"]
    return container


def _init_containers(cp: dict[str, Any]) -> list[dict[str, Any]]:
    """_init-containers.tpl `vcluster.k8s.initContainers` (the platform runs the k8s distro)."""
    assert cp["distro"]["k8s"]["enabled"], "only the k8s distro is modelled"
    k8s = cp["distro"]["k8s"]
    copy_binary: dict[str, Any] = {
        "name": "vcluster-copy",
        "image": _control_plane_image(cp),
        "volumeMounts": [{"mountPath": "/binaries", "name": "binaries"}],
        "command": ["/bin/sh"],
        "args": ["-c", "cp /vcluster /binaries/vcluster"],
        "securityContext": k8s["securityContext"],
        "resources": k8s["resources"],
    }
    if cp["statefulSet"]["imagePullPolicy"]:
        copy_binary["imagePullPolicy"] = cp["statefulSet"]["imagePullPolicy"]
    containers = [copy_binary]
    if k8s["controllerManager"]["enabled"]:
        containers.append(_k8s_init(cp, "kube-controller-manager", "controllerManager", "kube-controller-manager"))
    if cp["advanced"]["virtualScheduler"]["enabled"]:
        containers.append(_k8s_init(cp, "kube-scheduler-manager", "scheduler", "kube-scheduler"))
    if k8s["apiServer"]["enabled"]:
        containers.append(_k8s_init(cp, "kube-apiserver", "apiServer", "kube-apiserver"))
    return containers


def _probe(path: str, **fields: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": 8443, "scheme": "HTTPS"}, **fields}


def control_plane_pod(release_values: dict[str, Any], namespace: str, release: str) -> dict[str, Any]:
    """The StatefulSet's pod `<release>-0`, as statefulset.yaml renders it and the StatefulSet
    controller creates it (the claim template's volume `data` bound to `data-<release>-0`)."""
    values = coalesce(DEFAULTS, release_values)
    cp = values["controlPlane"]
    stateful = cp["statefulSet"]
    probes = stateful["probes"]
    syncer: dict[str, Any] = {"name": "syncer", "image": _control_plane_image(cp)}
    if stateful["imagePullPolicy"]:
        syncer["imagePullPolicy"] = stateful["imagePullPolicy"]
    if probes["livenessProbe"]["enabled"]:
        syncer["livenessProbe"] = _probe("/healthz", failureThreshold=60, initialDelaySeconds=60, periodSeconds=2)
    if probes["readinessProbe"]["enabled"]:
        syncer["readinessProbe"] = _probe("/readyz", failureThreshold=60, periodSeconds=2)
    if probes["startupProbe"]["enabled"]:
        syncer["startupProbe"] = _probe("/readyz", failureThreshold=300, periodSeconds=6)
    if stateful["security"]["containerSecurityContext"]:
        syncer["securityContext"] = stateful["security"]["containerSecurityContext"]
    syncer["resources"] = stateful["resources"]
    syncer["env"] = [
        {"name": "VCLUSTER_NAME", "value": release},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        *stateful["env"],
        *cp["distro"]["k8s"]["env"],
    ]
    mounts = [("data", "/data"), ("binaries", "/binaries"), ("certs", "/pki"), ("helm-cache", "/.cache/helm")]
    mounts += [("vcluster-config", "/var/vcluster"), ("tmp", "/tmp")]
    syncer["volumeMounts"] = [{"name": n, "mountPath": p} for n, p in mounts]
    volumes: list[dict[str, Any]] = [
        {"name": "helm-cache", "emptyDir": {}},
        *stateful["persistence"]["binariesVolume"],
        {"name": "tmp", "emptyDir": {}},
        {"name": "certs", "emptyDir": {}},
        {"name": "vcluster-config", "secret": {"secretName": f"vc-config-{release}"}},
    ]
    if cp["coredns"]["enabled"]:
        syncer["volumeMounts"].append({"name": "coredns", "mountPath": "/manifests/coredns", "readOnly": True})
        volumes.append({"name": "coredns", "configMap": {"name": f"vc-coredns-{release}"}})
    volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": f"data-{release}-0"}})
    scheduling = stateful["scheduling"]
    spec: dict[str, Any] = {"terminationGracePeriodSeconds": 10}
    if stateful["security"]["podSecurityContext"]:
        spec["securityContext"] = stateful["security"]["podSecurityContext"]
    for key in ("nodeSelector", "affinity", "topologySpreadConstraints", "tolerations", "priorityClassName"):
        if scheduling[key]:
            spec[key] = scheduling[key]
    spec["serviceAccountName"] = cp["advanced"]["serviceAccount"]["name"] or f"vc-{release}"
    spec["volumes"] = volumes
    spec["initContainers"] = _init_containers(cp)
    spec["enableServiceLinks"] = stateful["enableServiceLinks"]
    spec["containers"] = [syncer]
    labels = {"app": "vcluster", "release": release, **stateful["pods"]["labels"]}
    metadata = {"name": f"{release}-0", "namespace": namespace, "labels": labels}
    metadata["annotations"] = {"vClusterConfigHash": "sha256", **stateful["pods"]["annotations"]}
    # The StatefulSet controller names its set as the pod's controller (kubernetes v1.34
    # pkg/controller/statefulset/stateful_set_utils.go newStatefulSetPod: metav1.NewControllerRef):
    # what tenancy-syncer-account reads.
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": release, "uid": "0f1e", "controller": True}
    metadata["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _syncer_ids(release_values: dict[str, Any]) -> tuple[int, int]:
    """pkg/coredns/coredns.go GetUserID/GetGroupID: the syncer's own ids, 1001 where it runs as root."""
    context = coalesce(DEFAULTS, release_values)["controlPlane"]["statefulSet"]["security"]["containerSecurityContext"]
    return context.get("runAsUser") or _ROOT_FALLBACK_ID, context.get("runAsGroup") or _ROOT_FALLBACK_ID


def coredns_deployment(release_values: dict[str, Any]) -> dict[str, Any]:
    """The CoreDNS Deployment the syncer applies inside, its template variables filled in."""
    values = coalesce(DEFAULTS, release_values)
    cp = values["controlPlane"]
    text = cp["coredns"]["overwriteManifests"] or CHART_COREDNS
    registry = cp["advanced"]["defaultImageRegistry"]
    user, group = _syncer_ids(release_values)
    variables = {
        "IMAGE": f"{registry.rstrip('/')}/{COREDNS_IMAGE}" if registry else COREDNS_IMAGE,
        "RUN_AS_USER": str(user),
        "RUN_AS_GROUP": str(group),
    }

    def fill(match: re.Match[str]) -> str:
        return variables[match.group(1)]

    rendered = re.sub(r"\{\{\s*\.(\w+)\s*\}\}", fill, text)
    [deployment] = [d for d in yaml.safe_load_all(rendered) if d and d.get("kind") == "Deployment"]
    return dict(deployment)


def coredns_virtual_pod(release_values: dict[str, Any]) -> dict[str, Any]:
    """The pod the virtual ReplicaSet controller creates from the Deployment (kube-system), with the
    service account token volume the virtual API server's ServiceAccount admission adds."""
    template = copy.deepcopy(coredns_deployment(release_values)["spec"]["template"])
    spec = template["spec"]
    token = {"name": "kube-api-access-abcde", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}
    spec["volumes"] = [*spec.get("volumes", []), token]
    for container in spec["containers"]:
        mount = {"name": token["name"], "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
        container["volumeMounts"] = [*container.get("volumeMounts", []), mount]
    metadata = {"name": "coredns-6d8f9b7c5-x2x4q", "namespace": "kube-system", **template["metadata"]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def synced_to_host(
    virtual: dict[str, Any], release_values: dict[str, Any], namespace: str, release: str
) -> dict[str, Any]:
    """The host copy of a virtual pod (translator.go Translate, syncer.go SyncToHost) with the
    platform's sync settings: no service account or priority class sync, the workload account,
    enforced tolerations and the node selector of `sync.fromHost.nodes.selector.labels`."""
    values = coalesce(DEFAULTS, release_values)
    cp, sync = values["controlPlane"], values["sync"]
    name, virtual_namespace = virtual["metadata"]["name"], virtual["metadata"]["namespace"]

    def physical(object_name: str) -> str:
        return f"{object_name}-x-{virtual_namespace}-x-{release}"

    spec = copy.deepcopy(virtual["spec"])
    spec["serviceAccountName"] = cp["advanced"]["workloadServiceAccount"]["name"] or f"vc-workload-{release}"
    spec["automountServiceAccountToken"] = False
    spec["enableServiceLinks"] = False
    if not sync["toHost"]["priorityClasses"]["enabled"]:
        spec.pop("priorityClassName", None)
        spec.pop("priority", None)
    spec["hostname"] = name[:63]
    volumes = []
    for volume in spec.get("volumes", []):
        volume = copy.deepcopy(volume)
        if "configMap" in volume:
            volume["configMap"]["name"] = physical(volume["configMap"]["name"])
        if "projected" in volume:
            # The token is written into an annotation and read back through the downward API.
            item = {"path": "token", "fieldRef": {"fieldPath": "metadata.annotations['vcluster.loft.sh/token-abcde']"}}
            volume["projected"] = {"sources": [{"downwardAPI": {"items": [item]}}]}
        volumes.append(volume)
    spec["volumes"] = volumes
    for enforced in sync["toHost"]["pods"]["enforceTolerations"]:
        key_value, effect = enforced.rsplit(":", 1)
        key, value = key_value.split("=", 1)
        spec.setdefault("tolerations", []).append({"key": key, "operator": "Equal", "value": value, "effect": effect})
    selector = sync["fromHost"]["nodes"]["selector"]["labels"]
    if selector:
        spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **selector}
    labels = {
        **virtual["metadata"].get("labels", {}),
        "vcluster.loft.sh/managed-by": release,
        "vcluster.loft.sh/namespace": virtual_namespace,
    }
    annotations = {
        "vcluster.loft.sh/name": name,
        "vcluster.loft.sh/namespace": virtual_namespace,
        "vcluster.loft.sh/service-account-name": virtual["spec"].get("serviceAccountName", ""),
        "vcluster.loft.sh/token-abcde": "eyJhbGciOi",
    }
    metadata = {"name": physical(name), "namespace": namespace, "labels": labels, "annotations": annotations}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
