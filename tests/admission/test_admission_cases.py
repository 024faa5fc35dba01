"""The e2e admission cases (tools/generators/admission_cases.py), judged offline on the dev stack.

scripts/e2e/admission.sh sends the same cases to a real cluster as server-side dry runs (creates,
and patches or replaces of the objects `up` left), impersonating the same identities, and expects
the same outcomes; here each is played
through the layers of tests/admission/layers.py (RBAC, mutating then validating admission with a
real CEL engine). The exported manifests must be current and valid against the Kubernetes schema
of the stack's version, so the real API server receives exactly what was judged here.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.catalog.stack_config import parse_settings
from tests.admission.layers import Cluster, Outcome, cluster
from tests.k8s_schema import is_builtin, validate_builtin, validate_custom
from tests.rbac import UserInfo
from tests.support import kubernetes_objects
from tools.generators import e2e_manifests
from tools.generators.admission_cases import ACCESS, CASES, LIVE_CLASSES, PERSONAS, STRAY_GRANT, Access, Case
from tools.plan.harness import ProgramRun, stack_config

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
        {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "create", "update", "delete"]},
    ],
}


def _controller_grants() -> list[dict[str, Any]]:
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


@pytest.fixture(scope="module")
def dev(dev_plan: ProgramRun) -> Cluster:
    # The stray identity's grant, as scripts/e2e/admission.sh applies it for the replay.
    return cluster(dev_plan, extra=[*STRAY_GRANT, *_controller_grants()])


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


def _live(dev: Cluster, case: Case) -> dict[str, Any]:
    """The object a patch or replace case is sent to, as `up` leaves it (a quota with the status
    its controller writes)."""
    [found] = [
        o
        for o in kubernetes_objects(dev.run)
        if o["kind"] == case.kind
        and o["metadata"]["name"] == case.target
        and o["metadata"].get("namespace", "") == case.namespace
    ]
    live = copy.deepcopy(found)
    if case.kind == "ResourceQuota":
        live["status"] = {"hard": dict(live["spec"]["hard"]), "used": {k: "0" for k in live["spec"]["hard"]}}
    return live


def _attempt(dev: Cluster, case: Case) -> Outcome:
    who = UserInfo(case.who.name, case.who.groups)
    if case.verb == "create":
        return dev.attempt(who, "CREATE", case.resource, e2e_manifests.manifest(case), case.namespace)
    old = _live(dev, case)
    new = merge_patch(old, case.obj)
    verb = "patch" if case.verb == "patch" else "update"
    return dev.attempt(
        who, "UPDATE", case.resource, new, case.namespace, old=old, subresource=case.subresource, verb=verb
    )


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_case_gets_its_outcome_offline(dev: Cluster, case: Case) -> None:
    outcome = _attempt(dev, case)
    if case.expect == "admit":
        assert outcome.stopped_by is None, outcome.decision.denials
    elif case.expect == "rbac":
        assert outcome.stopped_by == "rbac", outcome
    else:
        # Every policy the case names must deny it: the live server reports any one of them.
        for policy in case.policy.split("|"):
            assert outcome.denied_by(policy), (policy, outcome.stopped_by, outcome.decision.denials)


@pytest.mark.parametrize(
    "access", ACCESS, ids=lambda a: f"{a.persona}-{a.verb}-{a.plural}-{a.subresource}-{a.namespace}"
)
def test_access_matrix_row_holds_offline(dev: Cluster, access: Access) -> None:
    user = UserInfo(access.who.name, access.who.groups)
    target = f"{access.plural}/{access.subresource}" if access.subresource else access.plural
    assert dev.authz.allowed(user, access.verb, target, access.namespace, group=access.group) is access.allowed


def test_the_access_matrix_asks_every_persona_yes_and_no() -> None:
    for persona in PERSONAS:
        answers = {a.allowed for a in ACCESS if a.persona == persona}
        assert answers == {True, False}, persona


def test_exported_access_matrix_is_the_one_judged() -> None:
    lines = (e2e_manifests.CASES_DIR / e2e_manifests.CAN_I).read_text().splitlines()[1:]
    rows = [line.split("\t") for line in lines]
    assert [(r[0], r[3], r[4], r[6], r[7]) for r in rows] == [
        (a.persona, a.verb, a.kubectl_resource, a.namespace, "yes" if a.allowed else "no") for a in ACCESS
    ]


def test_every_outcome_and_every_writer_is_covered() -> None:
    assert {case.expect for case in CASES} == {"admit", "rbac", "deny"}
    assert len({case.id for case in CASES}) == len(CASES)
    assert len({case.who for case in CASES}) >= 2


def test_every_live_attack_class_has_an_attack_and_a_legitimate_use() -> None:
    by_id = {case.id: case for case in CASES}
    for name, ids in LIVE_CLASSES.items():
        assert set(ids) <= set(by_id), (name, set(ids) - set(by_id))
        outcomes = {by_id[i].expect == "admit" for i in ids}
        assert outcomes == {True, False}, name
    classified = {i for ids in LIVE_CLASSES.values() for i in ids}
    assert classified == set(by_id), set(by_id) - classified


def test_a_wrong_expectation_would_fail(dev: Cluster) -> None:
    # The judge is not a rubber stamp: the NodePort Service is denied, the ClusterIP one is not.
    [node_port] = [c for c in CASES if c.id == "service-node-port"]
    who = UserInfo(node_port.who.name, node_port.who.groups)
    outcome = dev.attempt(who, "CREATE", node_port.resource, e2e_manifests.manifest(node_port), node_port.namespace)
    assert outcome.stopped_by == "admission" and not outcome.denied_by("tenancy-scheduling-pods")


def test_exported_manifests_are_current() -> None:
    assert e2e_manifests.stale() == [], "run tenancy e2e-manifests --write"


def test_exported_manifests_are_the_cases_and_valid() -> None:
    directory = e2e_manifests.CASES_DIR
    index = [line.split("\t") for line in (directory / e2e_manifests.INDEX).read_text().splitlines()[1:]]
    assert [row[0] for row in index] == [case.id for case in CASES]
    config, _ = stack_config("dev")
    version = parse_settings(config, "Pulumi.dev.yaml").kubernetes_version
    for row, case in zip(index, CASES, strict=True):
        assert row[2:6] == [case.who.name, ",".join(case.who.groups), case.expect, case.policy or "-"]
        assert row[6:] == [case.verb, e2e_manifests.target(case), case.subresource or "-"]
        obj = yaml.safe_load((directory / row[1]).read_text())
        assert obj == e2e_manifests.manifest(case)
        if case.verb != "create":
            # Patches of live objects: the object they make is checked against the schema below.
            assert case.verb == "patch" or case.resource.startswith("/"), "replace reaches the core group only"
            continue
        # Custom resources against the CRDs the real run installs (../shared/crds): a schema error
        # would be refused live before admission, whatever the case expects.
        if is_builtin(obj):
            validate_builtin(obj, version)
        else:
            validate_custom(obj)


def test_check_reports_a_stale_or_stray_file(tmp_path: Path) -> None:
    e2e_manifests.write(tmp_path)
    assert e2e_manifests.stale(tmp_path) == []
    (tmp_path / "pod-own-pool.yaml").write_text("tampered\n")
    (tmp_path / "stray.yaml").write_text("{}\n")
    assert e2e_manifests.stale(tmp_path) == ["pod-own-pool.yaml", "stray.yaml"]
    assert e2e_manifests.main(["--check", "--dir", str(tmp_path)]) == 1
