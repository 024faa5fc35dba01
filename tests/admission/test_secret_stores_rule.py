"""Shared platform secrets reach only entitled namespaces (issue 13 hole 2).

Played through the layers a real API server applies: RBAC lets a tenant admin write ExternalSecrets
(tests/rbac.py), then the `tenancy-secret-stores` and `tenancy-platform-owned` rules, evaluated by
cel-cpp through tests/cel_admission.py, decide. The ClusterSecretStore's conditions, which ESO
applies, are checked as rendered (no real ESO here)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.cel_admission import AdmissionChain, Request
from tests.rbac import Authorizer, Subject
from tests.support import kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

ADMIN_GROUP = "payer-admins"
# Admins write dev by hand; prod is written by the deployer (GitOps) under the same rules.
NS = "tenant-payer-dev"
RESOURCE = "external-secrets.io/v1/externalsecrets"
# The platform identities of Pulumi.prod.yaml and Pulumi.prod-aws.yaml.
PLATFORM = {
    "prod": ("tenancy-ci@tenancy-prod.iam.gserviceaccount.com", ["system:authenticated"]),
    "prod-aws": ("arn:aws:sts::111122223333:assumed-role/ci/x", ["tenancy-platform", "system:authenticated"]),
}
TENANTS = (
    tenant_document("payer", sharedSecrets=["registry-pull"], access={"admin": [ADMIN_GROUP]}),
    tenant_document("plain", access={"admin": ["plain-admins"]}),
)


@pytest.fixture(scope="module", params=["prod", "prod-aws"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return plan(request.param, write_tenants(tmp_path_factory.mktemp(request.param), *TENANTS))


@pytest.fixture(scope="module")
def chain(run: ProgramRun) -> AdmissionChain:
    return AdmissionChain(kubernetes_objects(run))


def _namespace(run: ProgramRun, name: str) -> dict[str, Any]:
    [ns] = [n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == name]
    return ns


def _request(
    run: ProgramRun,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
    *,
    platform: bool = False,
    operation: str | None = None,
) -> Request:
    username, groups = PLATFORM[run.stack] if platform else ("alice@payer", [ADMIN_GROUP, "system:authenticated"])
    return Request(
        operation or ("CREATE" if old is None else "UPDATE"),
        RESOURCE,
        "ExternalSecret",
        object=obj,
        old_object=old,
        namespace_object=_namespace(run, NS),
        username=username,
        groups=groups,
    )


def _external_secret(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "stolen", "namespace": NS},
        "spec": {"target": {"name": "stolen"}, **spec},
    }


REMOTE = {"remoteRef": {"key": "platform-registry-pull"}, "secretKey": "x"}
ATTACKS = {
    "secretStoreRef ClusterSecretStore": _external_secret(
        secretStoreRef={"name": "tenancy-shared", "kind": "ClusterSecretStore"}, data=[REMOTE]
    ),
    "data sourceRef.storeRef": _external_secret(
        secretStoreRef={"name": "tenancy-secrets"},
        data=[{**REMOTE, "sourceRef": {"storeRef": {"name": "tenancy-shared", "kind": "ClusterSecretStore"}}}],
    ),
    "dataFrom sourceRef.storeRef": _external_secret(
        dataFrom=[
            {
                "extract": {"key": "platform-registry-pull"},
                "sourceRef": {"storeRef": {"name": "tenancy-shared", "kind": "ClusterSecretStore"}},
            }
        ],
    ),
    "dataFrom ClusterGenerator": _external_secret(
        dataFrom=[{"sourceRef": {"generatorRef": {"kind": "ClusterGenerator", "name": "anything"}}}],
    ),
}
HARMLESS = {
    "own SecretStore": _external_secret(
        secretStoreRef={"name": "tenancy-secrets", "kind": "SecretStore"}, data=[REMOTE]
    ),
    "kind defaults to SecretStore": _external_secret(secretStoreRef={"name": "tenancy-secrets"}, data=[REMOTE]),
    "namespaced generator": _external_secret(
        dataFrom=[{"sourceRef": {"generatorRef": {"kind": "Password", "name": "pw"}}}],
    ),
}


def test_rbac_lets_the_tenant_admin_write_external_secrets(run: ProgramRun) -> None:
    # Without this, the admission rule would guard nothing reachable.
    authorizer = Authorizer(kubernetes_objects(run))
    assert authorizer.allowed(Subject("Group", ADMIN_GROUP), "create", "externalsecrets", NS, "external-secrets.io")
    assert not authorizer.allowed(Subject("Group", ADMIN_GROUP), "create", "secretstores", NS, "external-secrets.io")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_tenant_references_to_cluster_stores_are_denied(run: ProgramRun, chain: AdmissionChain, attack: str) -> None:
    decision = chain.admit(_request(run, ATTACKS[attack]))
    assert decision.denials and any("tenancy-secret-stores" in d for d in decision.denials), decision
    # Nor can an existing harmless object be turned into one.
    update = chain.admit(_request(run, ATTACKS[attack], HARMLESS["own SecretStore"]))
    assert not update.allowed


@pytest.mark.parametrize("case", sorted(HARMLESS))
def test_tenant_external_secrets_on_their_own_store_are_admitted(
    run: ProgramRun, chain: AdmissionChain, case: str
) -> None:
    assert chain.admit(_request(run, HARMLESS[case])).allowed


def _shared(run: ProgramRun) -> dict[str, Any]:
    [shared] = [
        es
        for es in objects_of_kind(run, "ExternalSecret", NS)
        if es["spec"]["secretStoreRef"]["kind"] == "ClusterSecretStore"
    ]
    return shared


def test_the_platform_shared_external_secret_is_platform_owned_and_admitted_for_the_platform(
    run: ProgramRun, chain: AdmissionChain
) -> None:
    shared = _shared(run)
    assert shared["metadata"]["labels"]["tenancy.io/platform-owned"] == "true"
    assert shared["spec"]["secretStoreRef"] == {"name": "tenancy-shared", "kind": "ClusterSecretStore"}
    assert chain.admit(_request(run, shared, platform=True)).allowed
    changed = copy.deepcopy(shared)
    changed["spec"]["refreshInterval"] = "5m"
    assert chain.admit(_request(run, changed, shared, platform=True)).allowed


def test_a_tenant_cannot_change_delete_or_forge_the_platform_shared_external_secret(
    run: ProgramRun, chain: AdmissionChain
) -> None:
    shared = _shared(run)
    stolen = copy.deepcopy(shared)
    stolen["spec"]["data"][0]["remoteRef"]["key"] = "platform-other-secret"
    update = chain.admit(_request(run, stolen, shared))
    assert any("tenancy-platform-owned" in d for d in update.denials), update
    # Even a change that names no other store (dropping the label to take it over) is denied.
    unlabelled = copy.deepcopy(shared)
    del unlabelled["metadata"]["labels"]["tenancy.io/platform-owned"]
    unlabelled["spec"]["secretStoreRef"] = {"name": "tenancy-secrets", "kind": "SecretStore"}
    assert any("tenancy-platform-owned" in d for d in chain.admit(_request(run, unlabelled, shared)).denials)
    delete = chain.admit(_request(run, None, shared, operation="DELETE"))
    assert any("tenancy-platform-owned" in d for d in delete.denials), delete
    # A copy dressed up as the platform's is denied by both rules.
    forged = copy.deepcopy(shared)
    forged["metadata"]["name"] = "forged"
    denials = chain.admit(_request(run, forged)).denials
    assert any("tenancy-platform-owned" in d for d in denials) and any("tenancy-secret-stores" in d for d in denials)


def test_cluster_secret_store_admits_exactly_the_entitled_namespaces(run: ProgramRun) -> None:
    [store] = objects_of_kind(run, "ClusterSecretStore")
    assert store["spec"]["conditions"] == [{"namespaces": ["tenant-payer-dev", "tenant-payer-prod"]}]
    # The tenant without sharedSecrets gets no shared ExternalSecret either.
    for environment in ("dev", "prod"):
        assert not [
            es
            for es in objects_of_kind(run, "ExternalSecret", f"tenant-plain-{environment}")
            if es["spec"]["secretStoreRef"]["kind"] == "ClusterSecretStore"
        ]


def test_with_no_entitled_tenant_the_store_admits_no_namespace(tmp_path: Path) -> None:
    stack = "prod"
    run = plan(stack, write_tenants(tmp_path, tenant_document("plain")))
    [store] = objects_of_kind(run, "ClusterSecretStore")
    [condition] = store["spec"]["conditions"]
    expressions = condition["namespaceSelector"]["matchExpressions"]
    # `Exists` and `DoesNotExist` on the same key: no namespace satisfies both.
    assert {e["operator"] for e in expressions} == {"Exists", "DoesNotExist"}
    assert len({e["key"] for e in expressions}) == 1 and set(condition) == {"namespaceSelector"}


def test_local_shared_secrets_are_copied_only_into_entitled_namespaces(tmp_path: Path) -> None:
    run = plan("dev", write_tenants(tmp_path, *TENANTS))
    copies = {
        s["metadata"]["namespace"]
        for s in objects_of_kind(run, "Secret")
        if s["metadata"]["name"] == "registry-pull" and s["metadata"]["namespace"].startswith("tenant-")
    }
    assert copies == {"tenant-payer-dev", "tenant-payer-prod"}
