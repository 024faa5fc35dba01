"""What a namespace receives waits for its quota to be known (found by the real run).

ResourceQuota admission refuses every object a quota counts until the quota controller has written
the quota's `status.used` ("forbidden: status unknown for quota", k8s.io/apiserver
pkg/admission/plugin/resourcequota). So the quota is awaited until that field exists, and the
tenant's data, apps, edge objects and virtual clusters depend on it.
"""

from __future__ import annotations

from tools.plan.harness import ProgramRun


def test_every_quota_is_awaited_until_its_status_is_written(any_stack_plan: ProgramRun) -> None:
    quotas = any_stack_plan.of_type("kubernetes:core/v1:ResourceQuota")
    assert quotas
    for quota in quotas:
        annotations = quota.inputs["metadata"].get("annotations") or {}
        assert annotations.get("pulumi.com/waitFor") == "jsonpath={.status.used}", quota.urn


def test_objects_counted_by_the_quota_wait_for_it(dev_plan: ProgramRun) -> None:
    by_urn = dev_plan.by_urn()
    quotas = {r.inputs["metadata"]["namespace"]: r.urn for r in dev_plan.of_type("kubernetes:core/v1:ResourceQuota")}
    counted = (
        "postgresql.cnpg.io",
        "cert-manager.io",
        "gateway.networking.k8s.io",
        "helm.toolkit.fluxcd.io",
        "core/v1:Secret",
    )

    def waits_for(resource_urn: str, target: str, seen: set[str]) -> bool:
        if resource_urn in seen:
            return False
        seen.add(resource_urn)
        resource = by_urn[resource_urn]
        direct = [*resource.dependencies, *([resource.parent] if resource.parent else [])]
        return target in direct or any(waits_for(d, target, seen) for d in direct if d in by_urn)

    checked = 0
    for resource in dev_plan.resources:
        namespace = (resource.inputs.get("metadata") or {}).get("namespace")
        if namespace not in quotas or not any(token in resource.type for token in counted):
            continue
        if resource.type == "kubernetes:core/v1:ResourceQuota":
            continue
        assert waits_for(resource.urn, quotas[namespace], set()), resource.urn
        checked += 1
    assert checked > 10
