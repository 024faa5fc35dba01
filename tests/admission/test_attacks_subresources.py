"""Issue 43: locked labels and annotations rewritten through subresources, on dev, prod and prod-aws.

The attacker is an identity granted stray RBAC on subresources (`namespaces/status`,
`namespaces/finalize`, `resourcequotas/status`, `ingresses/status`): a cluster-wide operator's
account or a future role, the identity the "second lock" promise is about. Several registry
strategies keep the labels and annotations such a request carries (tests/registry_strategies.py
models k8s.io/kubernetes v1.36.3), so without the lock covering the subresource, dropping
`tenancy.io/tenant` from a tenant Namespace unlocks it for every policy, and dropping
`tenancy.io/platform-owned` from a ResourceQuota lets the next ordinary update raise it.
Each attack has its legitimate twin: the controllers that write those subresources keep writing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from components.admission.rules.pod_binding import BINDING_POLICY
from components.model.core.labels import (
    EGRESS_CIDRS_KEY,
    GROUP_ROLES_KEY,
    NODE_POOL_KEY,
    PLATFORM_OWNED_KEY,
    TENANT_KEY,
)
from tests.admission.layers import ACME_DEV, Cluster, cluster, platform_identity
from tests.admission.test_attacks_workloads import pod_spec
from tests.rbac import UserInfo
from tests.registry_strategies import bind, prepare_for_create, prepare_for_update
from tests.support import kubernetes_objects
from tools.plan.harness import ProgramRun

NAMESPACE_LOCK, OBJECT_LOCK = "tenancy-platform-owned-namespaces", "tenancy-platform-owned"
STRAY = UserInfo("ops-bot@example.com", ("ops-bots", "system:authenticated"))
# What an over-granted identity holds: status and finalize writes everywhere, nothing more.
STRAY_GRANT = [
    {
        "kind": "ClusterRole",
        "metadata": {"name": "stray-subresources"},
        "rules": [
            {
                "apiGroups": ["", "networking.k8s.io", "external-secrets.io", "vpcresources.k8s.aws"],
                "resources": ["namespaces/status", "namespaces/finalize", "*/status"],
                "verbs": ["update", "patch"],
            }
        ],
    },
    {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "stray-subresources"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "stray-subresources"},
        "subjects": [{"kind": "Group", "name": "ops-bots"}],
    },
]
NAMESPACE_CONTROLLER = UserInfo("system:serviceaccount:kube-system:namespace-controller", ("system:masters",))
QUOTA_CONTROLLER = UserInfo("system:serviceaccount:kube-system:resourcequota-controller", ("system:masters",))
API_SERVER = UserInfo("system:apiserver", ("system:masters",))


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan, extra=STRAY_GRANT)


def _namespace(stack: Cluster) -> dict[str, Any]:
    return copy.deepcopy(stack.namespace(ACME_DEV))


def _labels_dropped(obj: dict[str, Any], key: str) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    changed["metadata"]["labels"].pop(key)
    return changed


def _annotated(obj: dict[str, Any], key: str, value: str) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    changed["metadata"].setdefault("annotations", {})[key] = value
    return changed


NAMESPACE_REWRITES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "drop the tenant label": lambda ns: _labels_dropped(ns, TENANT_KEY),
    "move the pool": lambda ns: {
        **ns,
        "metadata": {**ns["metadata"], "labels": {**ns["metadata"]["labels"], NODE_POOL_KEY: "research"}},
    },
    "grant groups admin": lambda ns: _annotated(ns, GROUP_ROLES_KEY, "tenancy-tenant-admin=acme-admins"),
    "open egress": lambda ns: _annotated(ns, EGRESS_CIDRS_KEY, "0.0.0.0/0"),
}


@pytest.mark.parametrize("subresource", ["status", "finalize"])
@pytest.mark.parametrize("rewrite", list(NAMESPACE_REWRITES))
def test_a_stray_grant_cannot_rewrite_a_tenant_namespace_through_its_subresources(
    stack: Cluster, subresource: str, rewrite: str
) -> None:
    old = _namespace(stack)
    new = NAMESPACE_REWRITES[rewrite](copy.deepcopy(old))
    # The server keeps the rewrite (only the spec, or only the status, is restored).
    kept = prepare_for_update("", "namespaces", subresource, new, old)
    assert kept["metadata"] != old["metadata"], "the registry would drop this change: no attack"
    outcome = stack.attempt(STRAY, "UPDATE", "/v1/namespaces", new, "", old=old, subresource=subresource)
    assert outcome.denied_by(NAMESPACE_LOCK, "is managed by the tenancy platform"), outcome


@pytest.mark.parametrize("subresource", ["status", "finalize"])
def test_the_namespace_controller_still_finalizes_and_reports(stack: Cluster, subresource: str) -> None:
    old = _namespace(stack)
    old["metadata"]["deletionTimestamp"] = "2026-11-29T08:00:00Z"
    old["spec"] = {"finalizers": ["kubernetes"]}
    new = copy.deepcopy(old)
    if subresource == "finalize":
        new["spec"] = {"finalizers": []}
    else:
        new["status"] = {
            "phase": "Terminating",
            "conditions": [{"type": "NamespaceContentRemaining", "status": "True"}],
        }
    outcome = stack.attempt(NAMESPACE_CONTROLLER, "UPDATE", "/v1/namespaces", new, "", old=old, subresource=subresource)
    assert outcome.stopped_by is None, outcome.decision.denials
    # And the platform identity may relabel through either (it may through the Namespace itself).
    platform = stack.attempt(
        platform_identity(stack.stack),
        "UPDATE",
        "/v1/namespaces",
        _labels_dropped(old, NODE_POOL_KEY)
        if NODE_POOL_KEY in old["metadata"]["labels"]
        else _annotated(old, "x", "y"),
        "",
        old=old,
        subresource=subresource,
    )
    assert platform.stopped_by is None, platform.decision.denials


def _quota(stack: Cluster) -> dict[str, Any]:
    [quota] = [
        o
        for o in kubernetes_objects(stack.run)
        if o["kind"] == "ResourceQuota" and o["metadata"].get("namespace") == ACME_DEV
    ]
    stored = copy.deepcopy(quota)
    stored["status"] = {"hard": dict(quota["spec"]["hard"]), "used": {k: "0" for k in quota["spec"]["hard"]}}
    return stored


def test_a_stray_grant_cannot_unlock_a_quota_through_its_status(stack: Cluster) -> None:
    old = _quota(stack)
    unlabelled = _labels_dropped(old, PLATFORM_OWNED_KEY)
    outcome = stack.attempt(STRAY, "UPDATE", "/v1/resourcequotas", unlabelled, ACME_DEV, old=old, subresource="status")
    assert outcome.denied_by(OBJECT_LOCK, "is managed by the tenancy platform"), outcome
    # Nor raise what quota admission enforces (status.hard), leaving the labels alone.
    raised = copy.deepcopy(old)
    raised["status"]["hard"] = {k: "100000" for k in raised["status"]["hard"]}
    outcome = stack.attempt(STRAY, "UPDATE", "/v1/resourcequotas", raised, ACME_DEV, old=old, subresource="status")
    assert outcome.denied_by(OBJECT_LOCK), outcome


@pytest.mark.parametrize("writer", [QUOTA_CONTROLLER, API_SERVER], ids=["quota-controller", "quota-admission"])
def test_the_quota_status_is_still_written_by_those_who_compute_it(stack: Cluster, writer: UserInfo) -> None:
    old = _quota(stack)
    counted = copy.deepcopy(old)
    counted["status"]["used"] = {k: "1" for k in counted["status"]["used"]}
    outcome = stack.attempt(writer, "UPDATE", "/v1/resourcequotas", counted, ACME_DEV, old=old, subresource="status")
    assert outcome.stopped_by is None, outcome.decision.denials


def _status_resource(obj: dict[str, Any]) -> tuple[str, str, str] | None:
    """(group, version, plural) of an object whose kind has a status subresource the model knows."""
    group, _, version = obj["apiVersion"].rpartition("/")
    kind = obj["kind"].lower()
    plural = kind[:-1] + "ies" if kind.endswith("y") else kind + "s"
    if group == "" and plural != "resourcequotas":
        return None  # LimitRanges, ServiceAccounts...: no status subresource
    if group in ("networking.k8s.io", "rbac.authorization.k8s.io"):
        return None  # NetworkPolicies and RoleBindings have none
    return group, version, plural


def test_no_platform_owned_object_loses_its_label_through_its_status(stack: Cluster) -> None:
    """Every labelled object of the stack: a stray status write dropping the label is refused, or the
    registry drops the change itself (custom resources' status strategy restores the metadata)."""
    seen = set()
    for obj in kubernetes_objects(stack.run):
        if PLATFORM_OWNED_KEY not in (obj["metadata"].get("labels") or {}):
            continue
        resource = _status_resource(obj)
        if resource is None:
            continue
        group, version, plural = resource
        old = copy.deepcopy(obj)
        new = _labels_dropped(old, PLATFORM_OWNED_KEY)
        namespace = obj["metadata"].get("namespace", "")
        outcome = stack.attempt(
            STRAY, "UPDATE", f"{group}/{version}/{plural}", new, namespace, old=old, subresource="status"
        )
        kept = prepare_for_update(group, plural, "status", new, old)
        assert outcome.stopped_by is not None or PLATFORM_OWNED_KEY in kept["metadata"]["labels"], (
            obj["kind"],
            outcome,
        )
        seen.add(obj["kind"])
    assert "ResourceQuota" in seen


def _ingress(annotations: dict[str, str]) -> dict[str, Any]:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    rule = {"host": "acme-dev.example", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "annotations": annotations},
        "spec": {"rules": [rule]},
    }


def test_a_snippet_cannot_come_in_through_the_ingress_status(stack: Cluster) -> None:
    old = _ingress({"nginx.ingress.kubernetes.io/ssl-redirect": "true"})
    new = _annotated(old, "nginx.ingress.kubernetes.io/server-snippet", "location / { proxy_pass http://x; }")
    outcome = stack.attempt(
        STRAY, "UPDATE", "networking.k8s.io/v1/ingresses", new, ACME_DEV, old=old, subresource="status"
    )
    assert outcome.denied_by("tenancy-ingress-annotations", "server-snippet is not allowed"), outcome


def test_the_ingress_controller_still_reports_addresses(stack: Cluster) -> None:
    # Even on an Ingress admitted under an older allow-list: its annotations are left as they were.
    old = _ingress({"nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers 'X: y';"})
    new = copy.deepcopy(old)
    new["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}
    outcome = stack.attempt(
        STRAY, "UPDATE", "networking.k8s.io/v1/ingresses", new, ACME_DEV, old=old, subresource="status"
    )
    assert outcome.stopped_by is None, outcome.decision.denials


def test_the_registry_model_serves_a_claims_data_sources() -> None:
    """A claim's CREATE as v1.36.3 serves it (NormalizeDataSources): either source mirrors the other,
    an unset group is `apiGroup: null`, a cross-namespace `dataSourceRef` is not copied back, and
    nothing else is touched."""
    old_way = {"spec": {"dataSource": {"kind": "PersistentVolumeClaim", "name": "db"}}}
    served = prepare_for_create("", "persistentvolumeclaims", old_way)["spec"]
    reference = {"apiGroup": None, "kind": "PersistentVolumeClaim", "name": "db"}
    assert served == {"dataSource": reference, "dataSourceRef": reference}
    assert old_way == {"spec": {"dataSource": {"kind": "PersistentVolumeClaim", "name": "db"}}}  # a copy
    new_way = {"spec": {"dataSourceRef": {"apiGroup": "", "kind": "PersistentVolumeClaim", "name": "db"}}}
    assert prepare_for_create("", "persistentvolumeclaims", new_way)["spec"]["dataSource"]["apiGroup"] == ""
    other = {"spec": {"dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "db", "namespace": "x"}}}
    assert "dataSource" not in prepare_for_create("", "persistentvolumeclaims", other)["spec"]
    assert prepare_for_create("", "configmaps", old_way) is old_way


def test_the_registry_model_follows_the_strategies() -> None:
    """The model keeps what v1.36.3 keeps: a finalize keeps labels, a custom resource's or an
    ephemeral-container write does not, pods/status restores owner references only."""
    old = {"metadata": {"labels": {"a": "1"}, "ownerReferences": [{"name": "rs"}]}, "spec": {"x": 1}, "status": {}}
    new = {"metadata": {"labels": {"a": "2"}, "ownerReferences": []}, "spec": {"x": 2}, "status": {"s": 1}}
    assert prepare_for_update("", "namespaces", "finalize", new, old)["metadata"]["labels"] == {"a": "2"}
    assert prepare_for_update("", "namespaces", "finalize", new, old)["status"] == {}
    assert prepare_for_update("example.com", "widgets", "status", new, old)["metadata"]["labels"] == {"a": "1"}
    assert prepare_for_update("", "pods", "ephemeralcontainers", new, old)["metadata"]["labels"] == {"a": "1"}
    pod = prepare_for_update("", "pods", "status", new, old)
    assert (pod["metadata"]["labels"], pod["metadata"]["ownerReferences"], pod["spec"]) == (
        {"a": "2"},
        [{"name": "rs"}],
        {"x": 1},
    )
    with pytest.raises(NotImplementedError):
        prepare_for_update("", "pods", "binding", new, old)


def _running_pod(memory: str) -> dict[str, Any]:
    spec = pod_spec()
    spec["containers"][0]["resources"] = {"limits": {"memory": memory}, "requests": {"memory": "0"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec}


def test_a_resize_cannot_take_the_memory_limit_away(any_stack_plan: ProgramRun) -> None:
    """`pods/resize` keeps new container resources: a limit of 0 (no cgroup limit at all, as the
    kubelet reads it) would escape tenancy-workloads, which judges the resized pod too."""
    grant = [
        {**STRAY_GRANT[0], "rules": [{"apiGroups": [""], "resources": ["pods/resize"], "verbs": ["patch"]}]},
        STRAY_GRANT[1],
    ]
    stack = cluster(any_stack_plan, extra=grant)
    old = _running_pod("256Mi")
    for limit, allowed in (("0", False), ("0Mi", False), ("512Mi", True)):
        outcome = stack.attempt(
            STRAY,
            "UPDATE",
            "/v1/pods",
            _running_pod(limit),
            ACME_DEV,
            old=copy.deepcopy(old),
            subresource="resize",
            verb="patch",
        )
        if allowed:
            assert outcome.stopped_by is None, outcome.decision.denials
        else:
            assert outcome.denied_by("tenancy-workloads", "has no memory limit"), (limit, outcome)


# --- Red team round 8: a Binding carries labels and annotations onto the pod --------------------

BINDING_GRANT = [
    {
        **STRAY_GRANT[0],
        "rules": [{"apiGroups": [""], "resources": ["pods/binding", "bindings"], "verbs": ["create"]}],
    },
    STRAY_GRANT[1],
]
# The default scheduler's identity, with a grant of its own here (not system:masters, which proves nothing).
SCHEDULER = UserInfo("system:kube-scheduler", ("ops-bots", "system:authenticated"))


@pytest.fixture(scope="module")
def binder(any_stack_plan: ProgramRun) -> Cluster:
    """The stack with the stray group granted Binding creates (the scheduler's group here too)."""
    return cluster(any_stack_plan, extra=BINDING_GRANT)


def _binding(pod: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> Any:
    """A Binding of `pod` to a node, as the default scheduler sends it when both are empty
    (pkg/scheduler/framework/plugins/defaultbinder/default_binder.go)."""
    metadata: dict[str, Any] = {"name": pod}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Binding", "metadata": metadata, "target": {"kind": "Node", "name": "n9"}}


_BOUND_ATTACKS = {
    # Under a CloudNativePG budget as well as its own (issue 43 item 3), past tenancy-scheduling-operator-labels.
    "operator-labels": {"labels": {"cnpg.io/cluster": "db", "cnpg.io/instanceRole": "primary"}},
    # The virtual cluster's Service and NetworkPolicy select by these (tenancy-vcluster-selector).
    "control-plane-labels": {"labels": {"app": "vcluster", "release": "vcluster"}},
    # Pod UPDATE validation forbids adding it; the kubelet prefers it over the pod's own field.
    "apparmor": {"annotations": {"container.apparmor.security.beta.kubernetes.io/web": "unconfined"}},
}


@pytest.mark.parametrize("resource", ["pods/binding", "bindings"])
@pytest.mark.parametrize("attack", list(_BOUND_ATTACKS))
def test_a_binding_carries_no_labels_or_annotations_onto_the_pod(binder: Cluster, resource: str, attack: str) -> None:
    """k8s.io/kubernetes v1.36.3 merges a Binding's annotations (and labels, with PodTopologyLabels)
    into the pod with no pod UPDATE: every pod rule is bypassed, so the Binding is judged itself."""
    body = _binding("web-0", **_BOUND_ATTACKS[attack])
    plural, _, subresource = resource.partition("/")
    for who in (STRAY, SCHEDULER):
        outcome = binder.attempt(who, "CREATE", f"/v1/{plural}", copy.deepcopy(body), ACME_DEV, subresource=subresource)
        assert outcome.denied_by(BINDING_POLICY, "a binding sets the node"), (who, outcome)


def test_the_scheduler_and_the_platform_still_bind(binder: Cluster) -> None:
    """The twins: the default scheduler's Binding (no metadata), the one the PodTopologyLabels admission
    plugin fills with the node's zone and region, and the platform's."""
    stack = binder
    topology = {"topology.kubernetes.io/zone": "europe-west1-b", "topology.kubernetes.io/region": "europe-west1"}
    for body in (_binding("web-0"), _binding("web-0", labels=topology)):
        for resource in ("pods", "bindings"):
            subresource = "binding" if resource == "pods" else ""
            outcome = stack.attempt(
                SCHEDULER, "CREATE", f"/v1/{resource}", copy.deepcopy(body), ACME_DEV, subresource=subresource
            )
            assert outcome.stopped_by is None, outcome.decision.denials
            assert BINDING_POLICY in outcome.decision.applied
    platform = platform_identity(stack.stack)
    noted = _binding("web-0", annotations={"example.com/placed-by": "platform"})
    outcome = stack.attempt(platform, "CREATE", "/v1/pods", noted, ACME_DEV, subresource="binding")
    assert outcome.stopped_by is None, outcome.decision.denials


def test_the_registry_model_binds_metadata_too() -> None:
    """What the rule is for: the bound pod carries the Binding's annotations always and its labels under
    the PodTopologyLabelsAdmission gate (prod and prod-aws run 1.34, where it is alpha and off)."""
    pod = {"metadata": {"name": "web-0", "labels": {"app": "web"}}, "spec": {}}
    body = _binding("web-0", labels={"cnpg.io/instanceRole": "primary"}, annotations={"a": "b"})
    bound = bind(pod, body)
    assert bound["spec"]["nodeName"] == "n9"
    assert bound["metadata"]["labels"] == {"app": "web", "cnpg.io/instanceRole": "primary"}
    assert bound["metadata"]["annotations"] == {"a": "b"}
    assert bind(pod, body, topology_labels=False)["metadata"]["labels"] == {"app": "web"}
    with pytest.raises(ValueError, match="already assigned"):
        bind(bound, body)
