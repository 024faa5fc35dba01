"""Issue 13 holes 5, 6 and 7 played through RBAC and admission on dev, prod and prod-aws.

Hole 5, scheduling: `spec.nodeName` and unlisted priority classes, in pods and pod templates.
Hole 6, secrets by the side door: the operator's pod-spec writes (RBAC), service-account token
Secrets and PVCs binding an existing volume (admission). Hole 7: the Namespace lock holds when an
UPDATE removes the tenant label. Each attack has its legitimate twin, admitted.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.core.labels import DISRUPTION_BUDGET_KEY, NODE_POOL_KEY, TENANT_KEY
from components.model.settings.storage import DEFAULT_CLASS
from tests.admission.layers import (
    ACME_ADMIN,
    ACME_DEV,
    ACME_OPERATOR,
    WRITERS,
    Cluster,
    cluster,
    platform_identity,
    stack_policy,
)
from tests.cel_admission import AdmissionChain, Request
from tests.rbac import Subject, UserInfo
from tests.support import plan
from tools.plan.harness import ProgramRun

PODS = "/v1/pods"


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


def pod_spec(**extra: Any) -> dict[str, Any]:
    """A pod spec every rule admits: hardened, limited, on acme's pool (required where nothing injects it)."""
    container = {
        "name": "app",
        "image": "registry.acme-corp.example/acme/app:1.0.0",
        "imagePullPolicy": "Always",
        "resources": {"limits": {"memory": "256Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    toleration = {"key": NODE_POOL_KEY, "operator": "Equal", "value": "customers", "effect": "NoSchedule"}
    return {
        "containers": [container],
        "nodeSelector": {NODE_POOL_KEY: "customers"},
        "tolerations": [toleration],
        **extra,
    }


def pod(**extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec(**extra)}


def deployment(**extra: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec(**extra)}
    spec = {"selector": {"matchLabels": {"app": "web"}}, "template": template}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": spec}


def cron_job(**extra: Any) -> dict[str, Any]:
    job = {"template": {"spec": {**pod_spec(**extra), "restartPolicy": "Never"}}}
    spec = {"schedule": "0 * * * *", "jobTemplate": {"spec": job}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"}, "spec": spec}


# --- Hole 5: nodeName --------------------------------------------------------------------------


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_node_name_is_denied_in_pods_and_templates(stack: Cluster, who: Subject, namespace: str) -> None:
    node = "gke-research-pool-1"
    for resource, obj, policy in [
        (PODS, pod(nodeName=node), "tenancy-scheduling-pods"),
        ("apps/v1/deployments", deployment(nodeName=node), "tenancy-scheduling-templates"),
        ("batch/v1/cronjobs", cron_job(nodeName=node), "tenancy-scheduling-cronjobs"),
    ]:
        outcome = stack.attempt(who, "CREATE", resource, obj, namespace)
        assert outcome.denied_by(policy, f"spec.nodeName {node} is not allowed for tenant acme"), outcome
    for resource, obj in [(PODS, pod()), ("apps/v1/deployments", deployment()), ("batch/v1/cronjobs", cron_job())]:
        outcome = stack.attempt(who, "CREATE", resource, obj, namespace)
        assert outcome.stopped_by is None, (resource, outcome.decision.denials)


def test_a_scheduled_pod_keeps_its_node_through_an_update(stack: Cluster) -> None:
    """The scheduler sets nodeName through pods/binding; a later label edit leaves it unchanged."""
    bound = pod(nodeName="gke-customers-pool-1")
    relabelled = copy.deepcopy(bound)
    relabelled["metadata"]["labels"] = {"release": "canary"}
    assert stack.attempt(ACME_ADMIN, "UPDATE", PODS, relabelled, ACME_DEV, old=bound).stopped_by is None
    moved = copy.deepcopy(bound)
    moved["spec"]["nodeName"] = "gke-research-pool-1"
    assert stack.attempt(ACME_ADMIN, "UPDATE", PODS, moved, ACME_DEV, old=bound).denied_by("tenancy-scheduling-pods")


# --- Hole 5: priority classes ------------------------------------------------------------------


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_no_priority_class_is_allowed_by_default(stack: Cluster, who: Subject, namespace: str) -> None:
    for name in ("system-cluster-critical", "high-priority"):
        outcome = stack.attempt(who, "CREATE", PODS, pod(priorityClassName=name), namespace)
        assert outcome.denied_by(
            "tenancy-scheduling-pods",
            f"priorityClassName {name} is not allowed for tenant acme (allowed: none; "
            "see tenancy:policy.allowedPriorityClasses)",
        ), outcome
    templated = stack.attempt(who, "CREATE", "apps/v1/deployments", deployment(priorityClassName="high"), namespace)
    assert templated.denied_by("tenancy-scheduling-templates", "priorityClassName high is not allowed")


@pytest.fixture(scope="module")
def with_classes() -> Cluster:
    return cluster(plan("prod", policy=stack_policy("prod", allowedPriorityClasses=["tenant-batch", "tenant-default"])))


def test_listed_priority_classes_are_admitted(with_classes: Cluster) -> None:
    for who, namespace in WRITERS:
        outcome = with_classes.attempt(who, "CREATE", PODS, pod(priorityClassName="tenant-batch"), namespace)
        assert outcome.stopped_by is None, outcome.decision.denials
        denied = with_classes.attempt(who, "CREATE", PODS, pod(priorityClassName="system-node-critical"), namespace)
        assert denied.denied_by("tenancy-scheduling-pods", "(allowed: tenant-batch, tenant-default;")


# --- Hole 6: the operator's side door ----------------------------------------------------------


def test_operator_cannot_run_a_pod_that_mounts_a_secret(stack: Cluster) -> None:
    mounting = pod(
        serviceAccountName="workload",
        volumes=[{"name": "db", "secret": {"secretName": "acme-db"}}],
    )
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "dump"},
        "spec": {"template": {"spec": {**mounting["spec"], "restartPolicy": "Never"}}},
    }
    assert stack.attempt(ACME_OPERATOR, "CREATE", "batch/v1/jobs", job, ACME_DEV).stopped_by == "rbac"
    assert stack.attempt(ACME_OPERATOR, "CREATE", PODS, mounting, ACME_DEV).stopped_by == "rbac"
    patched = deployment(volumes=mounting["spec"]["volumes"])
    assert stack.attempt(
        ACME_OPERATOR, "UPDATE", "apps/v1/deployments", patched, ACME_DEV, old=deployment()
    ).stopped_by == ("rbac")
    # The admin, who may read Secrets anyway, runs the same pod.
    assert stack.attempt(ACME_ADMIN, "CREATE", PODS, mounting, ACME_DEV).stopped_by is None


# --- Hole 6: service-account token Secrets -----------------------------------------------------


def secret(type_: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", **extra}, "type": type_}


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_token_secrets_are_denied_and_ordinary_secrets_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    token = secret(
        "kubernetes.io/service-account-token", annotations={"kubernetes.io/service-account.name": "deployer"}
    )
    outcome = stack.attempt(who, "CREATE", "/v1/secrets", token, namespace)
    assert outcome.denied_by("tenancy-service-account-token-secrets", "a token that never expires"), outcome
    for type_ in ("Opaque", "kubernetes.io/tls", "kubernetes.io/dockerconfigjson"):
        assert stack.attempt(who, "CREATE", "/v1/secrets", secret(type_), namespace).stopped_by is None


# --- Hole 6: PersistentVolumeClaims ------------------------------------------------------------

PVCS = "/v1/persistentvolumeclaims"


def claim(**spec: Any) -> dict[str, Any]:
    """A claim on the platform's default class (the only kind tenants may make)."""
    body = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": DEFAULT_CLASS,
        **spec,
    }
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}, "spec": body}


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_claims_may_not_pick_a_volume(stack: Cluster, who: Subject, namespace: str) -> None:
    assert stack.attempt(who, "CREATE", PVCS, claim(), namespace).stopped_by is None
    named = stack.attempt(who, "CREATE", PVCS, claim(volumeName="pvc-genomics-lab-data"), namespace)
    assert named.denied_by("tenancy-volume-claims", "may not set spec.volumeName (pvc-genomics-lab-data)"), named
    later = stack.attempt(who, "UPDATE", PVCS, claim(volumeName="pvc-x"), namespace, old=claim())
    assert later.denied_by("tenancy-volume-claims", "may not set spec.volumeName")
    source = {"apiGroup": "", "kind": "PersistentVolumeClaim", "name": "db", "namespace": "tenant-genomics-lab-prod"}
    cloned = stack.attempt(who, "CREATE", PVCS, claim(dataSourceRef=source), namespace)
    assert cloned.denied_by("tenancy-volume-claims", "dataSourceRef may not name another namespace")


def test_the_volume_binder_binds_and_tenants_resize_bound_claims(stack: Cluster) -> None:
    binder = UserInfo(
        "system:serviceaccount:kube-system:persistent-volume-binder",
        ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
    )
    bound = claim(volumeName="pvc-1234")
    decision = stack.chain.admit(
        Request(
            "UPDATE",
            PVCS,
            "PersistentVolumeClaim",
            object={**bound, "metadata": {"name": "data", "namespace": ACME_DEV}},
            old_object={**claim(), "metadata": {"name": "data", "namespace": ACME_DEV}},
            namespace_object=stack.namespace(ACME_DEV),
            username=binder.name,
            groups=list(binder.groups),
        )
    )
    assert decision.allowed, decision.denials
    resized = copy.deepcopy(bound)
    resized["spec"]["resources"]["requests"]["storage"] = "5Gi"
    assert stack.attempt(ACME_ADMIN, "UPDATE", PVCS, resized, ACME_DEV, old=bound).stopped_by is None


# --- Hole 7: the Namespace lock ----------------------------------------------------------------

# A cluster-wide identity that was granted more than it should: namespace writes, not platform.
STRAY_GRANT = [
    {
        "kind": "ClusterRole",
        "metadata": {"name": "namespace-editor"},
        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["update", "patch", "delete"]}],
    },
    {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "ops-namespaces"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "namespace-editor"},
        "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "ops"}],
    },
]
OPS_BOT = UserInfo("ops-bot", ("ops", "system:authenticated"))


def test_removing_the_tenant_label_does_not_unlock_the_namespace(any_stack_plan: ProgramRun) -> None:
    stack = cluster(any_stack_plan, STRAY_GRANT)
    old = stack.namespace(ACME_DEV)
    unlabelled = copy.deepcopy(old)
    del unlabelled["metadata"]["labels"][TENANT_KEY]
    unlabelled["metadata"]["labels"][NODE_POOL_KEY] = "research"
    # First layer: tenant identities hold no namespace writes at all.
    assert stack.attempt(ACME_ADMIN, "UPDATE", "/v1/namespaces", unlabelled, "", old=old).stopped_by == "rbac"
    # Second lock: the over-granted identity passes RBAC and is stopped by admission.
    outcome = stack.attempt(OPS_BOT, "UPDATE", "/v1/namespaces", unlabelled, "", old=old)
    assert outcome.denied_by(
        "tenancy-platform-owned-namespaces", "Namespace tenant-acme-dev is managed by the tenancy platform"
    ), outcome
    deleted = stack.attempt(OPS_BOT, "DELETE", "/v1/namespaces", None, "", old=old)
    assert deleted.denied_by("tenancy-platform-owned-namespaces", "ops-bot may not delete it")
    # The platform offboards a tenant; other namespaces are not the bundle's business.
    platform = platform_identity(stack.stack)
    assert stack.attempt(platform, "UPDATE", "/v1/namespaces", unlabelled, "", old=old).stopped_by is None
    other: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "tools", "labels": {"team": "ops"}},
    }
    relabelled = copy.deepcopy(other)
    relabelled["metadata"]["labels"]["team"] = "sre"
    assert stack.attempt(OPS_BOT, "UPDATE", "/v1/namespaces", relabelled, "", old=other).stopped_by is None


def test_a_namespace_selector_alone_would_miss_the_label_removal(dev_plan: ProgramRun) -> None:
    """Why the lock uses objectSelector: the API server's namespaceSelector sees only the new labels."""
    namespace = cluster(dev_plan).namespace(ACME_DEV)
    unlabelled = copy.deepcopy(namespace)
    del unlabelled["metadata"]["labels"][TENANT_KEY]
    selector = {"matchExpressions": [{"key": TENANT_KEY, "operator": "Exists"}]}
    results = {}
    for key in ("namespaceSelector", "objectSelector"):
        policy = {
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": key},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {"apiGroups": [""], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["namespaces"]}
                    ],
                    key: selector,
                },
                "validations": [{"expression": "false", "message": "locked"}],
            },
        }
        binding = {
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": key},
            "spec": {"policyName": key, "validationActions": ["Deny"]},
        }
        chain = AdmissionChain([policy, binding])
        request = Request("UPDATE", "/v1/namespaces", "Namespace", object=unlabelled, old_object=namespace)
        results[key] = chain.admit(request).allowed
    assert results == {"namespaceSelector": True, "objectSelector": False}


BUDGETS = "policy/v1/poddisruptionbudgets"
BUDGET_POLICY = "tenancy-scheduling-disruption-budgets"


def _budget(name: str = "web", selector: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A budget in the one shape tenants write (`tenancy.io/disruption-budget: <name>`) unless told."""
    chosen = {"matchLabels": {DISRUPTION_BUDGET_KEY: name}} if selector is None else selector
    body = {"selector": chosen, **spec}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": body}


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_a_budget_that_allows_no_disruption_is_denied(stack: Cluster, who: Subject, namespace: str) -> None:
    """Drains of the budget's nodes, shared pools included, would wait forever."""
    for blocking in BLOCKING_BUDGETS:
        outcome = stack.attempt(who, "CREATE", BUDGETS, _budget(**blocking), namespace)
        assert outcome.denied_by(BUDGET_POLICY, "allows no disruption"), blocking
        assert outcome.denied_by(BUDGET_POLICY, "`maxUnavailable: 1`"), blocking
    for allowing in ALLOWING_BUDGETS:
        outcome = stack.attempt(who, "CREATE", BUDGETS, _budget(**allowing), namespace)
        assert outcome.stopped_by is None, (allowing, outcome.decision.denials)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_a_budget_with_min_available_is_denied(stack: Cluster, who: Subject, namespace: str) -> None:
    """Issue 33: any `minAvailable` can equal the replica count (3 of a 3-replica Deployment; 50% of
    one pod rounds up to one), which the rule cannot read: then no pod may be evicted."""
    for minimum in MIN_AVAILABLE:
        outcome = stack.attempt(who, "CREATE", BUDGETS, _budget(minAvailable=minimum), namespace)
        assert outcome.denied_by(BUDGET_POLICY, "sets minAvailable, which can equal the replica count"), minimum
        assert outcome.denied_by(BUDGET_POLICY, f"`selector: {{matchLabels: {{{DISRUPTION_BUDGET_KEY}: web}}}}`")
    outcome = stack.attempt(who, "CREATE", BUDGETS, _budget(maxUnavailable=1), namespace)
    assert outcome.stopped_by is None, outcome.decision.denials


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_budgets_that_could_cover_the_same_pods_are_denied(stack: Cluster, who: Subject, namespace: str) -> None:
    """Issue 33: the eviction API evicts no pod that two budgets select. `app: web` and
    `tier: front` (or a broader `app` Exists) overlap on a pod labelled with both; only the one
    label whose value is the budget's own name cannot."""
    for name, selector, text in OVERLAPPING_SELECTORS:
        outcome = stack.attempt(who, "CREATE", BUDGETS, _budget(name, selector, maxUnavailable=1), namespace)
        assert outcome.denied_by(BUDGET_POLICY, text), (name, selector, outcome.decision.denials)
        assert outcome.denied_by(BUDGET_POLICY, f"`metadata.name: {name}`"), (name, selector)
    for name in ("web", "worker", "api-v2"):
        outcome = stack.attempt(who, "CREATE", BUDGETS, _budget(name, maxUnavailable=1), namespace)
        assert outcome.stopped_by is None, (name, outcome.decision.denials)
    explicit = _budget("web", {"matchLabels": {DISRUPTION_BUDGET_KEY: "web"}, "matchExpressions": []}, maxUnavailable=1)
    assert stack.attempt(who, "CREATE", BUDGETS, explicit, namespace).stopped_by is None


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_a_budget_written_before_the_rule_can_still_be_finalized(stack: Cluster, who: Subject, namespace: str) -> None:
    """An UPDATE that leaves the spec as it was (a label, a finalizer the garbage collector removes) is
    not judged again; one that changes it is, whoever was first."""
    old = _budget(selector={"matchLabels": {"app": "web"}}, minAvailable=2)
    relabelled = copy.deepcopy(old)
    relabelled["metadata"]["labels"] = {"team": "shop"}
    outcome = stack.attempt(who, "UPDATE", BUDGETS, relabelled, namespace, old=old)
    assert outcome.stopped_by is None, outcome.decision.denials
    changed = copy.deepcopy(old)
    changed["spec"]["minAvailable"] = 3
    outcome = stack.attempt(who, "UPDATE", BUDGETS, changed, namespace, old=old)
    assert outcome.denied_by(BUDGET_POLICY, "sets minAvailable"), outcome.decision.denials


# Every spelling the API server accepts for "no disruption" (any `^[0-9]+%$`, read by
# intstr.GetScaledValueFromIntOrPercent as strconv.Atoi of the digits), and spellings it refuses
# itself (`+0%`, `0.0%`, `1e0%`), which the rule never reads as allowing; and no maxUnavailable at all.
BLOCKING_BUDGETS: list[dict[str, Any]] = [
    {"maxUnavailable": 0},
    {"maxUnavailable": "0%"},
    {"maxUnavailable": "00%"},
    {"maxUnavailable": "000000%"},
    {"maxUnavailable": "+0%"},
    {"maxUnavailable": "0.0%"},
    {"maxUnavailable": "0"},
    {"maxUnavailable": "1e0%"},
    {"maxUnavailable": "99999999999999999999999%"},
    {},
]
# maxUnavailable percentages are rounded up by the disruption controller: 1% of one pod is one pod.
ALLOWING_BUDGETS: list[dict[str, Any]] = [
    {"maxUnavailable": 1},
    {"maxUnavailable": 3},
    {"maxUnavailable": "25%"},
    {"maxUnavailable": "01%"},
    {"maxUnavailable": "1%"},
    {"maxUnavailable": "0025%"},
    {"maxUnavailable": "100%"},
]
# Refused now, whatever the number: before issue 33 `2`, `0`, `50%` and `099%` were admitted, and
# each equals or rounds up to the replica count of some workload (2 of 2 replicas; 50% or 99% of 1).
# `0` lets every pod go, but a budget that protects nothing has no use: write maxUnavailable.
MIN_AVAILABLE: list[Any] = [2, 1, 0, "50%", "099%", "100%", "0100%", "000100%", "1e2%", "99999999999999999999999%"]
OVERLAPPING_SELECTORS: list[tuple[str, dict[str, Any], str]] = [
    ("web", {"matchLabels": {"app": "web"}}, "selects pods by something other than the one label"),
    ("web", {"matchLabels": {DISRUPTION_BUDGET_KEY: "web", "tier": "front"}}, "other than the one label"),
    (
        "web",
        {"matchLabels": {DISRUPTION_BUDGET_KEY: "web"}, "matchExpressions": [{"key": "app", "operator": "Exists"}]},
        "other than the one label",
    ),
    (
        "web",
        {"matchExpressions": [{"key": DISRUPTION_BUDGET_KEY, "operator": "In", "values": ["web", "api"]}]},
        "other than the one label",
    ),
    ("web", {"matchExpressions": [{"key": DISRUPTION_BUDGET_KEY, "operator": "Exists"}]}, "other than the one label"),
    ("web", {}, "other than the one label"),
    (
        "web-2",
        {"matchLabels": {DISRUPTION_BUDGET_KEY: "web"}},
        f"selects {DISRUPTION_BUDGET_KEY}: web, not its own name",
    ),
]


def _with_memory_limit(limit: str) -> dict[str, Any]:
    obj = pod()
    obj["spec"]["containers"][0]["resources"] = {"limits": {"memory": limit}, "requests": {"memory": "0"}}
    return obj


# Zero in every spelling the quantity grammar allows (k8s.io/apimachinery/pkg/api/resource/quantity.go):
# the kubelet sets no cgroup limit for a zero memory limit, and the quota charges nothing for it.
ZERO_MEMORY = ["0", "0Mi", "0Gi", "0.0", "+0", "000", ".0", "0e3", "0E9", "0m", "0.000Ki", "-0"]
SOME_MEMORY = ["1", "256Mi", "0.5Gi", "1e3", "1000m", "0.001Ki", "+1Gi", "01Mi", "1E6"]


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_a_zero_memory_limit_counts_as_no_limit(stack: Cluster, who: Subject, namespace: str) -> None:
    for limit in ZERO_MEMORY:
        outcome = stack.attempt(who, "CREATE", PODS, _with_memory_limit(limit), namespace)
        assert outcome.denied_by("tenancy-workloads", "has no memory limit"), limit
    for limit in SOME_MEMORY:
        outcome = stack.attempt(who, "CREATE", PODS, _with_memory_limit(limit), namespace)
        assert outcome.stopped_by is None, (limit, outcome.decision.denials)


# --- Issue 43: a tenant pod under an operator's budget as well as its own ---------------------

OPERATOR_LABELS_POLICY = "tenancy-scheduling-operator-labels"
# CloudNativePG's primary budget selects these (tests/operators/writes.py, pkg/specs/poddisruptionbudget.go).
PRIMARY = {"cnpg.io/cluster": "db", "cnpg.io/instanceRole": "primary"}
CNPG = UserInfo("system:serviceaccount:cnpg-system:cloudnative-pg", ("system:serviceaccounts", "system:authenticated"))
REPLICASET_CONTROLLER = UserInfo("system:serviceaccount:kube-system:replicaset-controller", ("system:masters",))


def _labelled_pod(labels: dict[str, str]) -> dict[str, Any]:
    obj = pod()
    obj["metadata"]["labels"] = labels
    return obj


def _labelled_deployment(labels: dict[str, str]) -> dict[str, Any]:
    obj = deployment()
    obj["spec"]["template"]["metadata"]["labels"] = {"app": "web", **labels}
    return obj


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_tenant_pods_may_not_carry_an_operators_budget_labels(stack: Cluster, who: Subject, namespace: str) -> None:
    """With its own budget label too, the pod would be under two budgets: the eviction API answers
    500 and drains wait."""
    labels = {**PRIMARY, DISRUPTION_BUDGET_KEY: "web"}
    for resource, obj in ((PODS, _labelled_pod(labels)), ("apps/v1/deployments", _labelled_deployment(labels))):
        outcome = stack.attempt(who, "CREATE", resource, obj, namespace)
        assert outcome.denied_by(OPERATOR_LABELS_POLICY, "carries cnpg.io/cluster=db, cnpg.io/instanceRole=primary"), (
            resource,
            outcome,
        )
    # Nor gained later, through an UPDATE of the pod's labels.
    old = _labelled_pod({DISRUPTION_BUDGET_KEY: "web"})
    outcome = stack.attempt(who, "UPDATE", PODS, _labelled_pod(labels), namespace, old=old)
    assert outcome.denied_by(OPERATOR_LABELS_POLICY), outcome


def test_a_stray_status_write_may_not_add_them(any_stack_plan: ProgramRun) -> None:
    """pods/status keeps the labels a request carries (podStatusStrategy restores the spec only)."""
    grant = [
        {
            "kind": "ClusterRole",
            "metadata": {"name": "stray-pod-status"},
            "rules": [{"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]}],
        },
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "stray-pod-status"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "stray-pod-status"},
            "subjects": [{"kind": "Group", "name": "acme-admins"}],
        },
    ]
    stack = cluster(any_stack_plan, extra=grant)
    old = _labelled_pod({DISRUPTION_BUDGET_KEY: "web"})
    new = _labelled_pod({**PRIMARY, DISRUPTION_BUDGET_KEY: "web"})
    outcome = stack.attempt(ACME_ADMIN, "UPDATE", PODS, new, ACME_DEV, old=old, subresource="status")
    assert outcome.denied_by(OPERATOR_LABELS_POLICY), outcome


def test_the_operator_and_the_controllers_still_label_their_pods(dev_plan: ProgramRun) -> None:
    """dev lists CloudNativePG's account in `operatorIdentities`: its instance pods and Pooler
    templates carry the labels, and the ReplicaSet controller follows the templates it wrote."""
    stack = cluster(dev_plan, extra=[])
    for who in (CNPG, REPLICASET_CONTROLLER):
        outcome = stack.attempt(who, "CREATE", PODS, _labelled_pod(PRIMARY), ACME_DEV, verb="create")
        assert OPERATOR_LABELS_POLICY not in " ".join(outcome.decision.denials), (who, outcome)
    # A tenant editing another label of a pod that has them (kubelets' status writes likewise) passes.
    old = _labelled_pod(PRIMARY)
    relabelled = _labelled_pod({**PRIMARY, "team": "db"})
    outcome = stack.attempt(ACME_ADMIN, "UPDATE", PODS, relabelled, ACME_DEV, old=old)
    assert outcome.stopped_by is None, outcome.decision.denials


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_tenant_pods_with_their_own_budget_label_are_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    obj = _labelled_deployment({DISRUPTION_BUDGET_KEY: "web", "app.kubernetes.io/part-of": "shop"})
    outcome = stack.attempt(who, "CREATE", "apps/v1/deployments", obj, namespace)
    assert outcome.stopped_by is None, outcome.decision.denials
    assert OPERATOR_LABELS_POLICY in outcome.decision.applied


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_the_tenants_budget_label_may_not_go_on_an_operators_pod(stack: Cluster, who: Subject, namespace: str) -> None:
    """The mirror image: the operator's pod (created with its labels) given the tenant's budget label."""
    old = _labelled_pod(PRIMARY)
    outcome = stack.attempt(
        who, "UPDATE", PODS, _labelled_pod({**PRIMARY, DISRUPTION_BUDGET_KEY: "web"}), namespace, old=old
    )
    assert outcome.denied_by(OPERATOR_LABELS_POLICY, f"and {DISRUPTION_BUDGET_KEY}: web"), outcome
