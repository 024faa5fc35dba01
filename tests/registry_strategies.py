"""What the API server keeps of a subresource UPDATE before validating admission sees it.

Each registry strategy's `PrepareForUpdate` restores parts of the stored object over the request's
(k8s.io/kubernetes v1.36.3 pkg/registry/<group>/<kind>/strategy.go; custom resources:
k8s.io/apiextensions-apiserver v0.36 pkg/registry/customresource/status_strategy.go), and the
generic store calls it before the validating admission chain (k8s.io/apiserver
pkg/registry/generic/registry/store.go Update: `rest.BeforeUpdate`, then `updateValidation`). So a
validating policy sees the labels and annotations of a `namespaces/finalize` or
`resourcequotas/status` request as sent, and the stored ones of a custom resource's status.
The attack tests play subresource UPDATEs through this model (tests/admission/layers.py), so an
offline judgement never credits a lock for a change the server would have dropped anyway, nor
misses one the server keeps. A Binding is a CREATE, not an UPDATE of the pod, and more than a node:
`bind` models what it leaves on the pod (red team round 8).
"""

from __future__ import annotations

import copy
from typing import Any

# (group, resource, subresource) -> the top-level fields restored from the stored object; built-in
# status strategies that restore the spec only keep every metadata change of the request.
_RESTORES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("", "namespaces", "status"): ("spec",),  # core/namespace namespaceStatusStrategy
    ("", "namespaces", "finalize"): ("status",),  # core/namespace namespaceFinalizeStrategy
    ("", "resourcequotas", "status"): ("spec",),  # core/resourcequota
    ("", "services", "status"): ("spec",),  # core/service
    ("", "persistentvolumeclaims", "status"): ("spec",),  # core/persistentvolumeclaim
    ("", "replicationcontrollers", "status"): ("spec",),  # core/replicationcontroller
    ("apps", "statefulsets", "status"): ("spec",),
    ("apps", "replicasets", "status"): ("spec",),
    ("apps", "daemonsets", "status"): ("spec",),
    ("batch", "jobs", "status"): ("spec",),
    ("batch", "cronjobs", "status"): ("spec",),
    ("policy", "poddisruptionbudgets", "status"): ("spec",),
    ("networking.k8s.io", "ingresses", "status"): ("spec",),
    ("autoscaling", "horizontalpodautoscalers", "status"): ("spec",),
}
# Built-in groups: a subresource of any other group is a custom resource's.
_BUILT_IN_GROUPS = {"", "apps", "batch", "policy", "networking.k8s.io", "autoscaling", "rbac.authorization.k8s.io"}


def _restore_metadata(new: dict[str, Any], old: dict[str, Any], keys: tuple[str, ...]) -> None:
    metadata, stored = new.setdefault("metadata", {}), old.get("metadata", {})
    for key in keys:
        if key in stored:
            metadata[key] = copy.deepcopy(stored[key])
        else:
            metadata.pop(key, None)


def prepare_for_update(group: str, resource: str, subresource: str, new: dict[str, Any], old: dict[str, Any]) -> Any:
    """The object validating admission sees for an UPDATE of `resource/subresource` (a copy)."""
    kept = copy.deepcopy(new)
    if group not in _BUILT_IN_GROUPS and subresource == "status":
        # customResourceStatusStrategy: the stored object with the request's status only.
        kept = copy.deepcopy(old)
        if "status" in new:
            kept["status"] = copy.deepcopy(new["status"])
        else:
            kept.pop("status", None)
        return kept
    if (group, resource, subresource) == ("", "pods", "status"):
        # podStatusStrategy: the spec and owner references are the stored ones; labels and annotations are kept.
        kept["spec"] = copy.deepcopy(old.get("spec", {}))
        _restore_metadata(kept, old, ("ownerReferences",))
        kept.get("metadata", {}).pop("deletionTimestamp", None)
        return kept
    if (group, resource, subresource) == ("", "pods", "ephemeralcontainers"):
        # podEphemeralContainersStrategy: only spec.ephemeralContainers of the request (its metadata
        # goes through metav1.ResetObjectMetaForStatus, k8s.io/apimachinery pkg/apis/meta/v1/helpers.go).
        kept = copy.deepcopy(old)
        kept.setdefault("spec", {})["ephemeralContainers"] = copy.deepcopy(
            new.get("spec", {}).get("ephemeralContainers", [])
        )
        return kept
    if (group, resource, subresource) == ("", "pods", "resize"):
        # podResizeStrategy (dropNonResizeUpdates): the stored pod with the containers' (and init
        # containers') new resources; metadata through ResetObjectMetaForStatus.
        kept = copy.deepcopy(old)
        for field in ("containers", "initContainers"):
            resized = {c["name"]: c.get("resources") for c in new.get("spec", {}).get(field, [])}
            for container in kept.get("spec", {}).get(field, []):
                if container["name"] in resized and resized[container["name"]] is not None:
                    container["resources"] = copy.deepcopy(resized[container["name"]])
        return kept
    if group == "apps" and resource in ("statefulsets", "deployments", "replicasets") and subresource == "scale":
        # ScaleREST.Update (pkg/registry/apps/<kind>/storage/storage.go): scaleUpdatedObjectInfo copies
        # only the request's spec.replicas onto the stored object, and toScaleUpdateValidation hands
        # validating admission a Scale made from the result (scaleFrom<Kind>: name, namespace, replicas),
        # so nothing but the replica count of the request reaches the object or admission.
        metadata = {k: v for k, v in old.get("metadata", {}).items() if k in ("name", "namespace")}
        replicas = new.get("spec", {}).get("replicas", old.get("spec", {}).get("replicas"))
        return {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": metadata, "spec": {"replicas": replicas}}
    if (group, resource, subresource) == ("apps", "deployments", "status"):
        # deploymentStatusStrategy restores the labels as well as the spec (annotations are kept).
        kept["spec"] = copy.deepcopy(old.get("spec", {}))
        _restore_metadata(kept, old, ("labels",))
        return kept
    fields = _RESTORES.get((group, resource, subresource))
    if fields is None:
        raise NotImplementedError(f"no strategy modelled for {group}/{resource}/{subresource}: read its strategy.go")
    for name in fields:
        if name in old:
            kept[name] = copy.deepcopy(old[name])
        else:
            kept.pop(name, None)
    return kept


def bind(pod: dict[str, Any], binding: dict[str, Any], *, topology_labels: bool = True) -> dict[str, Any]:
    """The pod a Binding (`pods/binding` or `bindings`, a CREATE) leaves stored (a copy).

    k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/storage/storage.go, BindingREST.Create then
    setPodNodeAndMetadata: the node is set on a pod that has none, the Binding's annotations are merged
    into the pod's, and its labels too (overwriting) where the PodTopologyLabelsAdmission gate is on
    (beta, on by default from 1.35: pkg/features/kube_features.go). No pod UPDATE is made, so no
    admission rule on pods sees the result; only a rule on the Binding itself does.
    """
    if pod.get("spec", {}).get("nodeName"):
        raise ValueError(f"pod {pod['metadata']['name']} is already assigned to a node")
    bound = copy.deepcopy(pod)
    bound.setdefault("spec", {})["nodeName"] = binding["target"]["name"]
    metadata, given = bound.setdefault("metadata", {}), binding.get("metadata", {})
    metadata["annotations"] = {**metadata.get("annotations", {}), **given.get("annotations", {})}
    if topology_labels:
        metadata["labels"] = {**metadata.get("labels", {}), **given.get("labels", {})}
    return bound


__all__ = ["bind", "prepare_for_update"]


def prepare_for_create(group: str, resource: str, new: dict[str, Any]) -> Any:
    """What the API server makes of a CREATE before validating admission sees it, where that differs
    from the request in ways a policy reads. A claim's data sources (k8s.io/kubernetes v1.36.3
    pkg/registry/core/persistentvolumeclaim/strategy.go PrepareForCreate ->
    pkg/api/persistentvolumeclaim NormalizeDataSources): `dataSource` and `dataSourceRef` mirror each
    other when only one is given (a `dataSourceRef` with a namespace is not copied back), and an unset
    group is served as `apiGroup: null` (the references' APIGroup has no omitempty). The real run
    found that last one: a rule reading `!has(ref.apiGroup)` admitted a clone live that it refused
    offline (2026-11-29)."""
    if (group, resource) != ("", "persistentvolumeclaims") or not isinstance(new.get("spec"), dict):
        return new
    served = copy.deepcopy(new)
    spec = served["spec"]
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if source is not None and ref is None:
        spec["dataSourceRef"] = {key: source[key] for key in ("apiGroup", "kind", "name") if key in source}
    elif ref is not None and source is None and not ref.get("namespace"):
        spec["dataSource"] = {key: ref[key] for key in ("apiGroup", "kind", "name") if key in ref}
    for field in ("dataSource", "dataSourceRef"):
        if isinstance(spec.get(field), dict):
            spec[field].setdefault("apiGroup", None)
    return served
