"""Judge the e2e admission cases offline on the dev stack: the policies that deny each one.

The API server runs the validating policies in its own order (k8s.io/apiserver v0.36
policy/generic/policy_source.go `policiesToBindings` builds them from a Go map) and reports the
first that denies, so a request several policies deny is reported live by any of them, and which
one may change from run to run. A hand-written list of deniers drifts the moment a new rule also
denies an old case (that is how the replay once failed on a case a second lock had come to deny).
So the exporter (tools/generators/e2e_manifests.py) writes, for every case, the full set this
judgement finds; scripts/e2e/admission.sh accepts any of them, and
tests/admission/test_admission_cases.py requires the set to be exactly the policies that deny.

The judgement is the attack tests' layered evaluator (tests/admission/layers.py: RBAC, then
mutating and validating admission through the real CEL engine) over the dev stack's plan, with the
stray identity's grant and kube-controller-manager's controller roles planted as the replay has them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from tests.admission.layers import Cluster, Outcome, cluster
from tests.rbac import UserInfo
from tests.support import kubernetes_objects, plan
from tools.generators.admission_cases import CASES, CONTROL_PLANE_POD, FIXTURES, STRAY_GRANT, Case, manifest
from tools.plan.harness import ProgramRun

# kube-controller-manager's own roles for the controllers the cases impersonate (k8s.io/kubernetes
# v1.36.3 plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go), which the API server
# creates at start; the real run's controller manager runs one service account per controller.
CONTROLLER_ROLES = {
    "namespace-controller": [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch", "delete"]},
        {"apiGroups": [""], "resources": ["namespaces/finalize", "namespaces/status"], "verbs": ["update"]},
    ],
    "resourcequota-controller": [{"apiGroups": [""], "resources": ["resourcequotas/status"], "verbs": ["update"]}],
    "statefulset-controller": [
        {
            "apiGroups": ["apps"],
            "resources": ["controllerrevisions"],
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
        },
        {"apiGroups": ["apps"], "resources": ["statefulsets/status"], "verbs": ["update"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "create", "delete", "update", "patch"]},
        {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "create", "update", "delete"]},
    ],
}


def controller_grants() -> list[dict[str, Any]]:
    """CONTROLLER_ROLES as the ClusterRoles and bindings the API server makes at start."""
    objects: list[dict[str, Any]] = []
    for name, rules in CONTROLLER_ROLES.items():
        role = f"system:controller:{name}"
        objects.append({"kind": "ClusterRole", "metadata": {"name": role}, "rules": rules})
        objects.append(
            {
                "kind": "ClusterRoleBinding",
                "metadata": {"name": role},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}],
            }
        )
    return objects


def replay_cluster(run: ProgramRun) -> Cluster:
    """The dev stack as the replay finds it: the plan, the stray grant and the controllers' roles."""
    return cluster(run, extra=[*STRAY_GRANT, *controller_grants()])


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as `kubectl patch --type=merge` and the API server apply it."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def live_object(dev: Cluster, case: Case) -> dict[str, Any]:
    """The object a patch or replace case is sent to, as the replay finds it: what `up` left (a quota
    with the status its controller writes), a fixture the replay plants, or what a controller made of one."""
    [found] = [
        o
        for o in [*kubernetes_objects(dev.run), *FIXTURES, CONTROL_PLANE_POD]
        if o["kind"] == case.kind
        and o["metadata"]["name"] == case.target
        and o["metadata"].get("namespace", "") == case.namespace
    ]
    live = copy.deepcopy(found)
    if case.kind == "ResourceQuota":
        live["status"] = {"hard": dict(live["spec"]["hard"]), "used": {k: "0" for k in live["spec"]["hard"]}}
    return live


def attempt(dev: Cluster, case: Case) -> Outcome:
    """The case's request through RBAC and admission."""
    who = UserInfo(case.who.name, case.who.groups)
    if case.verb == "create":
        return dev.attempt(who, "CREATE", case.resource, manifest(case), case.namespace)
    old = live_object(dev, case)
    new = merge_patch(old, case.obj)
    verb = "patch" if case.verb == "patch" else "update"
    return dev.attempt(
        who, "UPDATE", case.resource, new, case.namespace, old=old, subresource=case.subresource, verb=verb
    )


def denying_policies(outcome: Outcome) -> tuple[str, ...]:
    """Every validating policy that denied the request, by name, sorted (none when admitted or
    stopped by RBAC). Each denial reads `<policy>: <message>` (tests/cel_admission.py)."""
    if outcome.stopped_by != "admission":
        return ()
    return tuple(sorted({denial.split(": ", 1)[0] for denial in outcome.decision.denials}))


def judge(dev: Cluster, cases: list[Case] = CASES) -> dict[str, tuple[str, ...]]:
    """The denying policies of every case, by case id."""
    return {case.id: denying_policies(attempt(dev, case)) for case in cases}


def judge_dev() -> Mapping[str, tuple[str, ...]]:
    """The judgement on a fresh plan of the dev stack (what `tenancy e2e-manifests` writes)."""
    return judge(replay_cluster(plan("dev")))
