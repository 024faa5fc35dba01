"""Issue 33: the platform-owned lock follows the label on every kind the platform renders with it.

The attacker holds stray RBAC (a cluster-wide grant it should not have) and edits or deletes what
the platform renders with `tenancy.io/platform-owned`: every such object of every example stack
(SecurityGroupPolicy on prod-aws, FQDNNetworkPolicy on a GKE stack with hosts egress, the
vCluster's bindings and policies) is refused; so is a kind the platform does not render yet.
The legitimate twins: the platform itself passes, and the tenant's own unlabelled objects of the
same kinds are not the lock's business.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from components.model.core.labels import PLATFORM_OWNED_KEY
from tests.admission.layers import ACME_ADMIN, Cluster, cluster, platform_identity
from tests.guardrails.test_egress_hosts import _network, _tenants
from tests.support import kubernetes_objects, plan
from tools.plan.harness import ProgramRun

LOCK = "tenancy-platform-owned"
# A cluster-wide grant nobody should have given a tenant group.
STRAY = [
    {
        "kind": "ClusterRole",
        "metadata": {"name": "stray"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    },
    {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "stray"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "stray"},
        "subjects": [{"kind": "Group", "name": "acme-admins"}],
    },
]


def _resource(obj: dict[str, Any]) -> str:
    """`group/version/plural` of an object (the plural as the API registers these kinds)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    kind = obj["kind"].lower()
    plural = kind[:-1] + "ies" if kind.endswith("y") else kind + "s"
    return f"{group}/{version}/{plural}"


def _owned(run: ProgramRun) -> list[dict[str, Any]]:
    return [o for o in kubernetes_objects(run) if PLATFORM_OWNED_KEY in (o["metadata"].get("labels") or {})]


def _assert_locked(stack: Cluster, objects: list[dict[str, Any]]) -> set[str]:
    kinds = set()
    for obj in objects:
        namespace = obj["metadata"].get("namespace", "")
        changed = copy.deepcopy(obj)
        changed["metadata"].setdefault("annotations", {})["widened"] = "true"
        for operation, new, old in (("UPDATE", changed, obj), ("DELETE", None, obj), ("CREATE", obj, None)):
            outcome = stack.attempt(ACME_ADMIN, operation, _resource(obj), copy.deepcopy(new), namespace, old=old)
            assert outcome.denied_by(LOCK, "is managed by the tenancy platform"), (operation, obj["kind"], outcome)
        platform = stack.attempt(platform_identity(stack.stack), "UPDATE", _resource(obj), changed, namespace, old=obj)
        assert not any(d.startswith(f"{LOCK}: ") for d in platform.decision.denials), platform
        kinds.add(obj["kind"])
    return kinds


def test_every_kind_rendered_with_the_label_is_locked(any_stack_plan: ProgramRun) -> None:
    stack = cluster(any_stack_plan, extra=STRAY)
    kinds = _assert_locked(stack, _owned(any_stack_plan))
    assert {"RoleBinding", "NetworkPolicy", "ResourceQuota", "LimitRange"} <= kinds
    if any_stack_plan.stack == "prod-aws":
        assert "SecurityGroupPolicy" in kinds


@pytest.fixture(scope="module")
def fqdn_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    tenants: Path = _tenants(tmp_path_factory.mktemp("tenants"))
    return plan("prod", tenants, network=_network("prod"))


def test_fqdn_network_policies_are_locked(fqdn_run: ProgramRun) -> None:
    kinds = _assert_locked(cluster(fqdn_run, extra=STRAY), _owned(fqdn_run))
    assert "FQDNNetworkPolicy" in kinds


def test_a_kind_not_rendered_yet_is_locked_by_its_label(prod_plan: ProgramRun) -> None:
    stack = cluster(prod_plan, extra=STRAY)
    widget = {
        "apiVersion": "widgets.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "tenant-acme-dev", "labels": {PLATFORM_OWNED_KEY: "true"}},
    }
    assert _assert_locked(stack, [widget]) == {"Widget"}


def test_the_tenants_own_objects_of_the_same_kinds_are_not_locked(prod_plan: ProgramRun) -> None:
    stack = cluster(prod_plan)
    own = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "chart-policy"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {}}]}]},
    }
    outcome = stack.attempt(ACME_ADMIN, "CREATE", "networking.k8s.io/v1/networkpolicies", own, "tenant-acme-dev")
    assert outcome.stopped_by is None, outcome.decision.denials
    assert LOCK not in outcome.decision.applied
