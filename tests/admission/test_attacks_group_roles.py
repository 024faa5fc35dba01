"""The per-environment RBAC lock (issue 26) reads the pairs the platform grants from the Namespace
annotation `tenancy.io/group-roles`: whoever can write that annotation decides what `tenancy-rbac`
admits. So the annotation must be as locked as the bindings. Attacked (review of issue 26) as the
tenant's own admin, its deployer and a stray identity holding cluster-wide rights on Namespaces:
writing the annotation onto a tenant namespace, creating a tenant namespace carrying it, and taking
the tenant label off in the same update (so that the lock's objectSelector would no longer match
the new object) are all refused; the platform identity still writes it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.core.labels import GROUP_ROLES_KEY, TENANT_KEY
from tests.admission.layers import ACME_ADMIN, ACME_DEV, ACME_PROD, Cluster, cluster, platform_identity
from tests.rbac import Subject, UserInfo
from tools.plan.harness import ProgramRun

NS = "/v1/namespaces"
STRAY = UserInfo("ns-robot@example.com", ("system:authenticated",))
FORGED = "tenancy-tenant-admin=acme-admins"


def _stray_grant() -> list[dict[str, Any]]:
    role = {
        "kind": "ClusterRole",
        "metadata": {"name": "stray-namespaces"},
        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["*"]}],
    }
    binding = {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "stray-namespaces"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "stray-namespaces"},
        "subjects": [{"kind": "User", "name": STRAY.name}],
    }
    return [role, binding]


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan, extra=_stray_grant())


def _forged(namespace: dict[str, Any], drop_tenant_label: bool = False) -> dict[str, Any]:
    changed = copy.deepcopy(namespace)
    annotations = changed["metadata"].setdefault("annotations", {})
    current = annotations.get(GROUP_ROLES_KEY, "")
    assert FORGED not in current.split(","), "acme's prod namespace must not grant admin already"
    annotations[GROUP_ROLES_KEY] = ",".join(x for x in [current, FORGED] if x)
    if drop_tenant_label:
        changed["metadata"]["labels"].pop(TENANT_KEY)
    return changed


def test_the_annotation_is_not_written_by_tenant_identities(stack: Cluster) -> None:
    prod = stack.namespace(ACME_PROD)
    for who in [
        ACME_ADMIN,
        Subject("ServiceAccount", "deployer", ACME_DEV),
        Subject("ServiceAccount", "deployer", ACME_PROD),
    ]:
        outcome = stack.attempt(who, "UPDATE", NS, _forged(prod), "", old=copy.deepcopy(prod))
        assert outcome.stopped_by is not None, (stack.stack, who, outcome)


@pytest.mark.parametrize("drop_tenant_label", [False, True])
def test_a_stray_identity_cannot_forge_the_annotation(stack: Cluster, drop_tenant_label: bool) -> None:
    prod = stack.namespace(ACME_PROD)
    outcome = stack.attempt(STRAY, "UPDATE", NS, _forged(prod, drop_tenant_label), "", old=copy.deepcopy(prod))
    assert outcome.denied_by("tenancy-platform-owned-namespaces"), (stack.stack, outcome)


def test_a_stray_identity_cannot_create_a_tenant_namespace_carrying_it(stack: Cluster) -> None:
    fresh = _forged(stack.namespace(ACME_PROD))
    fresh["metadata"]["name"] = "tenant-acme-staging"
    fresh["metadata"]["labels"]["kubernetes.io/metadata.name"] = "tenant-acme-staging"
    outcome = stack.attempt(STRAY, "CREATE", NS, fresh, "")
    assert outcome.denied_by("tenancy-platform-owned-namespaces"), (stack.stack, outcome)


def test_the_platform_identity_writes_it(stack: Cluster) -> None:
    prod = stack.namespace(ACME_PROD)
    outcome = stack.attempt(platform_identity(stack.stack), "UPDATE", NS, _forged(prod), "", old=copy.deepcopy(prod))
    assert outcome.stopped_by is None, outcome.decision.denials
