"""The e2e admission cases (tools/generators/admission_cases.py), judged offline on the dev stack.

scripts/e2e/admission.sh sends the same cases to a real cluster as server-side dry runs (creates,
and patches or replaces of the objects `up` left), impersonating the same identities, and expects
the same outcomes; here each is played
through the layers of tests/admission/layers.py (RBAC, mutating then validating admission with a
real CEL engine). The exported manifests must be current and valid against the Kubernetes schema
of the stack's version, so the real API server receives exactly what was judged here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.model.catalog.stack_config import parse_settings
from tests.admission.layers import Cluster
from tests.k8s_schema import is_builtin, validate_builtin, validate_custom
from tests.rbac import UserInfo
from tests.support import kubernetes_objects
from tools.generators import case_judgement, e2e_manifests
from tools.generators.admission_cases import (
    ACCESS,
    CASES,
    CONTROL_PLANE_POD,
    FIXTURES,
    LIVE_CLASSES,
    PERSONAS,
    PLATFORM,
    STATEFULSET_CONTROLLER,
    Access,
    Case,
    manifest,
)
from tools.plan.harness import ProgramRun, stack_config


@pytest.fixture(scope="module")
def dev(dev_plan: ProgramRun) -> Cluster:
    # The stray identity's grant, as scripts/e2e/admission.sh applies it for the replay.
    return case_judgement.replay_cluster(dev_plan)


@pytest.fixture(scope="module")
def denials(dev: Cluster) -> dict[str, tuple[str, ...]]:
    return case_judgement.judge(dev)


def _exported_policies() -> dict[str, str]:
    """The policies column of the exported index, by case id."""
    lines = (e2e_manifests.CASES_DIR / e2e_manifests.INDEX).read_text().splitlines()[1:]
    return {row[0]: row[5] for row in (line.split("\t") for line in lines)}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_case_gets_its_outcome_offline(dev: Cluster, case: Case) -> None:
    outcome = case_judgement.attempt(dev, case)
    denied_by = case_judgement.denying_policies(outcome)
    if case.expect == "admit":
        assert outcome.stopped_by is None, outcome.decision.denials
    elif case.expect == "rbac":
        assert outcome.stopped_by == "rbac", outcome
    else:
        # The policy the case is written about denies it, and the index names exactly the policies
        # that do: the live server reports any one of them (its order is a Go map's).
        assert outcome.denied_by(case.policy), (case.policy, outcome.stopped_by, outcome.decision.denials)
    assert _exported_policies()[case.id] == ("|".join(denied_by) or "-")


def test_a_case_two_policies_deny_names_both(denials: dict[str, tuple[str, ...]]) -> None:
    # The installer's account is both platform-owned and reserved by the control plane's lock; the
    # case is written about one, and the index must name both or the replay fails when the API
    # server happens to report the other.
    [case] = [c for c in CASES if c.id == "deployer-annotates-installer-account"]
    both = ("tenancy-platform-owned", "tenancy-vcluster-control-plane")
    assert case.policy in both and denials[case.id] == both
    assert _exported_policies()[case.id] == "|".join(both)
    assert e2e_manifests.policies(case, denials) == "|".join(both)


def test_every_patch_is_sent_by_an_identity_that_reads_its_target(dev: Cluster) -> None:
    # `kubectl patch` reads the object (or the subresource) before it patches: an identity that may
    # patch but not `get` it is refused by RBAC before admission sees anything (the real run, on
    # 2026-11-29: the syncer's `pods/status` patch). Such a request is sent as a PUT (`replace`),
    # whose read of the main object scripts/e2e/admission.sh makes as the run's admin.
    unread = []
    for case in CASES:
        if case.verb != "patch":
            continue
        group, _, plural = case.resource.split("/")
        target = f"{plural}/{case.subresource}" if case.subresource else plural
        if not dev.authz.allowed(UserInfo(case.who.name, case.who.groups), "get", target, case.namespace, group=group):
            unread.append(case.id)
    assert unread == []


def test_no_admitted_create_names_an_object_the_replay_finds(dev: Cluster) -> None:
    # A dry-run create of a name that exists passes admission and is then refused as AlreadyExists
    # (k8s.io/apiserver registry/generic/registry/store.go `Create`: validation, then the dry-run
    # storage's existence check), so an admitted create must name no object of the replay's cluster:
    # what `up` leaves, the fixtures, and what the StatefulSet controller makes of them.
    live = [*kubernetes_objects(dev.run), *FIXTURES, CONTROL_PLANE_POD]
    existing = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in live}
    clashes = [
        case.id
        for case in CASES
        if case.verb == "create"
        and case.expect == "admit"
        and (case.obj["kind"], case.namespace, case.obj["metadata"]["name"]) in existing
    ]
    assert clashes == []


def test_the_fixtures_are_what_the_platform_and_its_controller_may_write(dev: Cluster) -> None:
    # The replay plants them as the run's admin (a platform identity); the StatefulSet controller
    # makes vcluster-0 of the first: each must be admitted, or the cases sent to them judge nothing.
    config, _ = stack_config("dev")
    version = parse_settings(config, "Pulumi.dev.yaml").kubernetes_version
    platform = UserInfo(PLATFORM.name, PLATFORM.groups)
    for fixture in FIXTURES:
        validate_builtin(fixture, version)
        plural = {"StatefulSet": "apps/v1/statefulsets", "Service": "/v1/services", "Secret": "/v1/secrets"}
        outcome = dev.attempt(platform, "CREATE", plural[fixture["kind"]], fixture, fixture["metadata"]["namespace"])
        assert outcome.stopped_by is None, (fixture["kind"], outcome)
    controller = UserInfo(STATEFULSET_CONTROLLER.name, STATEFULSET_CONTROLLER.groups)
    pod = CONTROL_PLANE_POD
    validate_builtin(pod, version)
    outcome = dev.attempt(controller, "CREATE", "/v1/pods", pod, pod["metadata"]["namespace"])
    assert outcome.stopped_by is None, outcome.decision.denials


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
    outcome = dev.attempt(who, "CREATE", node_port.resource, manifest(node_port), node_port.namespace)
    assert outcome.stopped_by == "admission" and not outcome.denied_by("tenancy-scheduling-pods")


def test_exported_manifests_are_current(denials: dict[str, tuple[str, ...]]) -> None:
    assert e2e_manifests.stale(denials) == [], "run tenancy e2e-manifests --write"


def test_exported_manifests_are_the_cases_and_valid() -> None:
    directory = e2e_manifests.CASES_DIR
    index = [line.split("\t") for line in (directory / e2e_manifests.INDEX).read_text().splitlines()[1:]]
    assert [row[0] for row in index] == [case.id for case in CASES]
    config, _ = stack_config("dev")
    version = parse_settings(config, "Pulumi.dev.yaml").kubernetes_version
    for row, case in zip(index, CASES, strict=True):
        assert row[2:5] == [case.who.name, ",".join(case.who.groups), case.expect]
        assert row[6:] == [case.verb, e2e_manifests.target(case), case.subresource or "-"]
        obj = yaml.safe_load((directory / row[1]).read_text())
        assert obj == manifest(case)
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


def test_check_reports_a_stale_or_stray_file(
    tmp_path: Path, denials: dict[str, tuple[str, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    e2e_manifests.write(denials, tmp_path)
    assert e2e_manifests.stale(denials, tmp_path) == []
    (tmp_path / "pod-own-pool.yaml").write_text("tampered\n")
    (tmp_path / "stray.yaml").write_text("{}\n")
    assert e2e_manifests.stale(denials, tmp_path) == ["pod-own-pool.yaml", "stray.yaml"]
    # The command judges the cases itself (a plan of its own); the module's judgement stands in.
    monkeypatch.setattr(case_judgement, "judge_dev", lambda: denials)
    assert e2e_manifests.main(["--check", "--dir", str(tmp_path)]) == 1
    # A judgement that changes a case's deniers makes the index stale.
    changed = {**denials, "service-node-port": ("tenancy-services", "tenancy-other")}
    assert e2e_manifests.stale(changed, tmp_path) == [
        "index.tsv",
        "pod-own-pool.yaml",
        "service-node-port.yaml",
        "stray.yaml",
    ]
