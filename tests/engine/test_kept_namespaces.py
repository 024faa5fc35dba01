"""Every tenant namespace that holds data keeps its isolation in every lifecycle state, on every stack.

A decommissioned tenant on a cloud that keeps data in namespaces (`local`: CloudNativePG clusters,
MariaDB, Kubernetes Secrets) keeps those namespaces for the retention period (components/lifecycle.py).
For as long as they hold data they keep their quota, their limits and their isolation policy, are open
to the platform's operators only (not to ingress controllers, gateways, peers or granted egress), and
nobody but the platform has access (no RoleBinding, no deployer account). The guard rails are retained
with the namespace, so they stay when the tenant file is removed afterwards.

Judged on the mixes of tests/engine/mixes.py: the example tenants plus a shared-placement tenant, all
in one lifecycle state, per example stack.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.model.core.labels import PLATFORM_INGRESS_KEY
from components.model.tenant_file.spec import Lifecycle
from tests.engine.conftest import Mixes
from tests.engine.mixes import LIFECYCLES, STACKS
from tools.plan.harness import ProgramRun, RecordedResource
from tools.plan.run import is_kubernetes_object, manifest

MIXES = [(stack, lifecycle) for stack in STACKS for lifecycle in LIFECYCLES]
# What a namespace holding data keeps, whatever the state.
GUARDS = ("ResourceQuota", "LimitRange")
# Objects that are the guard rails themselves, not data.
GUARD_KINDS = {*GUARDS, "NetworkPolicy", "Namespace"}


def _objects(run: ProgramRun) -> list[tuple[RecordedResource, dict[str, Any]]]:
    return [(r, manifest(r)) for r in run.resources if is_kubernetes_object(r)]


def _namespace_of(obj: dict[str, Any]) -> str | None:
    metadata = obj["metadata"]
    return str(metadata["name"]) if obj["kind"] == "Namespace" else metadata.get("namespace")


def data_namespaces(run: ProgramRun) -> set[str]:
    """Tenant namespaces holding data: something in them is protected or retained (a database, a
    Secret), or the namespace itself is, which it is only because it holds data."""
    return {
        namespace
        for resource, obj in _objects(run)
        if (namespace := _namespace_of(obj)) is not None
        and namespace.startswith("tenant-")
        and (resource.protect or resource.retain_on_delete)
        and (obj["kind"] not in GUARD_KINDS or obj["kind"] == "Namespace")
    }


def _in(run: ProgramRun, namespace: str) -> list[tuple[RecordedResource, dict[str, Any]]]:
    return [(r, o) for r, o in _objects(run) if o["metadata"].get("namespace") == namespace]


def _isolation(run: ProgramRun, namespace: str) -> list[tuple[RecordedResource, dict[str, Any]]]:
    """The namespace's isolation policy: a NetworkPolicy in it, or a ClusterNetworkPolicy naming it."""
    own = [(r, o) for r, o in _in(run, namespace) if o["kind"] == "NetworkPolicy"]
    cluster = [
        (r, o) for r, o in _objects(run) if o["kind"] == "ClusterNetworkPolicy" and f'"{namespace}"' in json.dumps(o)
    ]
    return own + cluster


def _ingress_namespaces(policy: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for rule in policy["spec"].get("ingress", []):
        for peer in rule.get("from", []):
            labels = (peer.get("namespaceSelector") or {}).get("matchLabels") or {}
            if "kubernetes.io/metadata.name" in labels:
                names.add(labels["kubernetes.io/metadata.name"])
            assert "ipBlock" not in peer, f"kept namespace admits addresses: {peer}"
    return names


@pytest.mark.parametrize(("stack", "lifecycle"), MIXES)
def test_every_namespace_holding_data_keeps_quota_limits_and_isolation(
    mix_plans: Mixes, stack: str, lifecycle: Lifecycle
) -> None:
    run = mix_plans[(stack, lifecycle)]
    holding = data_namespaces(run)
    if stack == "dev":
        # Data lives in namespaces here in every state, decommissioned included: the test judges something.
        assert holding, "no namespace holds data in the dev mix"
    for namespace in sorted(holding):
        kinds = {o["kind"] for _, o in _in(run, namespace)}
        missing = [kind for kind in GUARDS if kind not in kinds]
        assert not missing, f"{stack}/{lifecycle}: {namespace} holds data without {', '.join(missing)}"
        assert _isolation(run, namespace), f"{stack}/{lifecycle}: {namespace} holds data without isolation"


@pytest.mark.parametrize("stack", STACKS)
def test_kept_namespaces_are_open_to_the_platform_only(mix_plans: Mixes, stack: str) -> None:
    run = mix_plans[(stack, "decommissioned")]
    active = mix_plans[(stack, "active")]
    kept = sorted(data_namespaces(run))
    if stack != "dev":
        # The cloud keeps the data: a decommissioned tenant keeps no namespace at all.
        assert not [o for _, o in _objects(run) if o["kind"] == "Namespace" and _namespace_of(o) in kept]
    for namespace in kept:
        inside = _in(run, namespace)
        access = [o["kind"] for _, o in inside if o["kind"] in ("RoleBinding", "ServiceAccount", "Role")]
        assert not access, f"{stack}: kept {namespace} still grants access: {access}"
        # Ingress controllers and gateways (the platform paths an active namespace opens) are shut out.
        active_ns = next(o for _, o in _objects(active) if o["kind"] == "Namespace" and _namespace_of(o) == namespace)
        platform = {
            entry.split("@")[0]
            for entry in active_ns["metadata"]["annotations"][PLATFORM_INGRESS_KEY].split(",")
            if entry
        }
        assert platform, f"{stack}: the active {namespace} opens no platform path; the comparison judges nothing"
        for _, policy in _isolation(run, namespace):
            admitted = _ingress_namespaces(policy)
            assert not admitted & platform, f"{stack}: kept {namespace} admits {sorted(admitted & platform)}"
            assert not [n for n in admitted if n.startswith("tenant-")], f"{stack}: kept {namespace} admits peers"
        # Retained with the namespace: removing the tenant file afterwards leaves them in place.
        for resource, obj in inside:
            if obj["kind"] in GUARD_KINDS:
                assert resource.retain_on_delete, f"{stack}: {obj['kind']} in kept {namespace} is not retained"
        quota = next(o for _, o in inside if o["kind"] == "ResourceQuota")
        assert quota["spec"]["hard"]["pods"] == "0"
