"""Operator contracts (issue 24): what each operator the platform drives writes in a tenant
namespace, at the pinned version (tests/operators/writes.py, each write citing its upstream file),
played through the platform's own admission chain (the rendered ValidatingAdmissionPolicies and
MutatingAdmissionPolicies, tests/cel_admission.py) and Pod Security `restricted`
(tests/pod_security.py), for every example stack: all must be admitted. The platform must admit
its own machinery.

Pods go through what a real API server does first: defaulting (tests/api_defaults.py, inside the
chain), the LimitRanger with the namespace's LimitRange (tests/operators/limit_ranger.py), the
mutating policies, then the validating ones and Pod Security.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.cel_admission import AdmissionChain, Decision, Request
from tests.operators import writes
from tests.operators.limit_ranger import limit_ranged
from tests.operators.writes import (
    CERT_MANAGER_IDENTITY,
    Write,
    all_writes,
    cert_manager_writes,
    eso_writes,
    http01_solver_pod,
    platform_owned_external_secrets,
)
from tests.pod_security import restricted_violations
from tests.support import kubernetes_objects, objects_of_kind
from tools.plan.harness import ProgramRun, stack_config

STACKS = {"dev": "dev_plan", "prod": "prod_plan", "prod-aws": "prod_aws_plan"}


def play(run: ProgramRun, write: Write, chain: AdmissionChain | None = None) -> tuple[Decision, list[str]]:
    """Admission's decision on the write, and Pod Security's reasons to refuse it (pods only)."""
    chain = chain if chain is not None else AdmissionChain(kubernetes_objects(run))
    request = write.request
    source = request.object if request.object is not None else request.old_object
    assert source is not None
    namespace_name = source["metadata"]["namespace"]
    [namespace] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == namespace_name]
    request.namespace_object = namespace
    if write.is_pod and request.object is not None:
        [limits] = objects_of_kind(run, "LimitRange", namespace_name)
        request.object = limit_ranged(request.object, limits)
    decision = chain.admit(request)
    if not write.is_pod:
        return decision, []
    labels = namespace["metadata"].get("labels", {})
    assert labels.get("pod-security.kubernetes.io/enforce") == "restricted", namespace_name
    assert decision.object is not None
    return decision, restricted_violations(decision.object)


def _writes(run: ProgramRun) -> list[Write]:
    return all_writes(run)


@pytest.mark.parametrize("stack", list(STACKS))
def test_every_operator_write_is_admitted(stack: str, request: pytest.FixtureRequest) -> None:
    run: ProgramRun = request.getfixturevalue(STACKS[stack])
    chain = AdmissionChain(kubernetes_objects(run))
    played = _writes(run)
    refused: list[str] = []
    for write in played:
        decision, pod_security = play(run, write, chain)
        if not decision.allowed or pod_security:
            refused.append(f"{write.operator}: {write.what} ({write.source}): {decision.denials + pod_security}")
    assert refused == [], "\n".join(refused)


def test_the_contracts_cover_every_operator_on_some_stack(request: pytest.FixtureRequest) -> None:
    """A fixture set that silently renders nothing would admit everything: each operator must
    have writes on at least one example stack (an operator the stacks stop using fails here)."""
    operators: set[str] = set()
    for fixture in STACKS.values():
        operators |= {w.operator for w in _writes(request.getfixturevalue(fixture))}
    assert operators >= {
        "cloudnative-pg",
        "mariadb-operator",
        "external-secrets",
        "helm-controller",
        "kustomize-controller",
        "source-controller",
        "vcluster-syncer",
    }


def _first(candidates: list[Write], operator: str, text: str) -> Write:
    return next(w for w in candidates if w.operator == operator and text in w.what)


def test_each_write_cites_its_upstream_file(dev_plan: ProgramRun, prod_plan: ProgramRun) -> None:
    for write in [*_writes(dev_plan), *_writes(prod_plan)]:
        repository, tag, path = write.source.split(" ", 2)
        assert repository.count("/") == 1 and tag.startswith("v") and "." in path, write.source


def _denied(decision: Decision, pod_security: list[str]) -> list[str]:
    return [*decision.denials, *pod_security]


def test_without_the_mariadb_security_contexts_pod_security_refuses_its_pod(dev_plan: ProgramRun) -> None:
    write = _first(_writes(dev_plan), "mariadb-operator", "pod of MariaDB")
    assert _denied(*play(dev_plan, write)) == []
    assert write.request.object is not None
    for field, reason in [("securityContext", "allowPrivilegeEscalation"), ("podSecurityContext", "seccompProfile")]:
        # The pod as mariadb-operator builds it from a MariaDB that leaves the field out.

        [mariadb] = [m for m in objects_of_kind(dev_plan, "MariaDB")]
        stripped = {**mariadb, "spec": {k: v for k, v in mariadb["spec"].items() if k != field}}
        pod = writes.mariadb_pod(stripped)
        bare = Write(write.operator, write.what, write.source, _replace_object(write, pod))
        found = _denied(*play(dev_plan, bare))
        assert any(reason in f for f in found), (field, found)


def test_without_the_pooler_init_container_entry_always_pull_refuses_the_pooler(dev_plan: ProgramRun) -> None:

    write = _first(_writes(dev_plan), "cloudnative-pg", "pod of Pooler")
    assert _denied(*play(dev_plan, write)) == []
    pooler = objects_of_kind(dev_plan, "Pooler")[0]
    template = pooler["spec"]["template"]["spec"]
    stripped = {**pooler, "spec": {**pooler["spec"], "template": {"spec": {"containers": template["containers"]}}}}
    bare = Write(write.operator, write.what, write.source, _replace_object(write, writes.cnpg_pooler_pod(stripped)))
    found = _denied(*play(dev_plan, bare))
    assert any("container bootstrap-controller must set imagePullPolicy: Always" in f for f in found), found


def _replace_object(write: Write, obj: dict[str, Any]) -> Any:

    return dataclasses.replace(write.request, object=obj)


# --- External Secrets: the finalizer door is exactly as wide as ESO's patch ---------------------


def _eso_finalizer_write(run: ProgramRun) -> Write:

    owned = {e["metadata"]["name"] for e in platform_owned_external_secrets(run)}
    assert owned, "the stack renders platform-owned ExternalSecrets (shared secrets)"
    return next(
        w
        for w in eso_writes(run)
        if "cleanup finalizer" in w.what
        and w.request.object is not None
        and w.request.object["metadata"]["name"] in owned
    )


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_without_the_eso_door_its_finalizer_patch_is_denied(stack: str, request: pytest.FixtureRequest) -> None:
    run: ProgramRun = request.getfixturevalue(STACKS[stack])
    write = _eso_finalizer_write(run)
    assert play(run, write)[0].allowed
    manifests = kubernetes_objects(run)
    for manifest in manifests:
        if (
            manifest.get("kind") == "ValidatingAdmissionPolicy"
            and manifest["metadata"]["name"] == "tenancy-platform-owned"
        ):
            manifest["spec"]["validations"][0]["expression"] = "variables.platform"
    decision, _ = play(run, write, AdmissionChain(manifests))
    assert any(d.startswith("tenancy-platform-owned: ") for d in decision.denials), decision.denials


def test_the_eso_door_admits_nothing_but_its_finalizer(prod_plan: ProgramRun) -> None:

    write = _eso_finalizer_write(prod_plan)
    assert write.request.object is not None
    # ESO's identity changing the spec, or adding another finalizer: denied.
    changed = copy.deepcopy(write.request.object)
    changed["spec"]["refreshInterval"] = "1s"
    other = copy.deepcopy(write.request.object)
    other["metadata"]["finalizers"].append("example.com/hold")
    relabelled = copy.deepcopy(write.request.object)
    relabelled["metadata"]["labels"]["tenancy.io/platform-owned"] = "false"
    for obj in (changed, other, relabelled):
        decision, _ = play(
            prod_plan, Write(write.operator, write.what, write.source, dataclasses.replace(write.request, object=obj))
        )
        assert any(d.startswith("tenancy-platform-owned: ") for d in decision.denials), obj["metadata"]
    # Anyone else adding ESO's finalizer (a tenant admin holding `update` by some grant): denied.
    tenant = dataclasses.replace(write.request, username="alice", groups=["acme-admins", "system:authenticated"])
    decision, _ = play(prod_plan, Write(write.operator, write.what, write.source, tenant))
    assert any(d.startswith("tenancy-platform-owned: ") for d in decision.denials), decision.denials


# --- cert-manager ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", list(STACKS))
def test_cert_manager_writes_for_a_tenant_certificate_are_admitted(stack: str, request: pytest.FixtureRequest) -> None:

    run: ProgramRun = request.getfixturevalue(STACKS[stack])
    chain = AdmissionChain(kubernetes_objects(run))
    for write in cert_manager_writes("tenant-acme-dev", "shop.acme-corp.example"):
        decision, pod_security = play(run, write, chain)
        assert decision.allowed and not pod_security, (write.what, write.source, decision.denials)


def test_an_http01_solver_pod_in_a_tenant_namespace_would_be_refused(dev_plan: ProgramRun) -> None:
    """A known limit, not a defect of the rules: cert-manager v1.21.1 starts HTTP-01 solver pods in
    the Certificate's namespace with `imagePullPolicy: IfNotPresent` and no pool selector, and the
    issuer's podTemplate cannot change the pull policy. Issuers serving tenant namespaces must use
    DNS-01 (docs/admission.md says so); this test keeps that statement true."""

    pod = http01_solver_pod("tenant-acme-dev")
    write = Write(
        "cert-manager",
        "HTTP-01 solver pod",
        "cert-manager/cert-manager v1.21.1 pkg/issuer/acme/http/pod.go",
        Request("CREATE", "/v1/pods", "Pod", object=pod, username=CERT_MANAGER_IDENTITY),
    )
    decision, _ = play(dev_plan, write)
    assert any("acmesolver must set imagePullPolicy: Always" in d for d in decision.denials), decision.denials


def test_the_eso_identity_must_be_in_the_eso_namespace() -> None:
    """The door names ESO's account; one outside `data.secretsOperatorNamespace` is refused."""

    config, _ = stack_config("prod")
    policy = {"secretsOperatorIdentity": "system:serviceaccount:kube-system:external-secrets"}

    with pytest.raises(ConfigurationError) as caught:
        parse_settings({**config, "tenancy:policy": json.dumps(policy)}, "Pulumi.prod.yaml")
    assert [p.field for p in caught.value.problems] == ["tenancy:policy.secretsOperatorIdentity"]
