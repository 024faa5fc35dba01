"""Turn one tenant namespace's live objects into its observed status, and tenants into verdicts.

Pure functions over the API's JSON (tools/operations/status_read.py reads it), so every rule is tested on
fixtures that validate against the upstream CRDs. What the plan renders for the namespace is the
expectation: a Flux object, ExternalSecret or database the program registers but the cluster
lacks is a problem, and a suspended tenant's Flux objects must be suspended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tools.operations.status_read import NamespaceObjects

FLUX_KINDS = {"GitRepository", "OCIRepository", "HelmRepository", "Kustomization", "HelmRelease"}
DATABASE_KINDS = {"Cluster", "MariaDB"}


@dataclass
class ObjectStatus:
    """One custom object: Ready or not, its revision or phase, and its last condition change."""

    kind: str
    name: str
    ready: bool
    detail: str = ""
    last: str | None = None
    suspended: bool = False

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v not in (None, "")}


@dataclass
class EnvironmentStatus:
    """One tenant environment as observed."""

    environment: str
    namespace: str
    present: bool
    quota: dict[str, dict[str, str]] = field(default_factory=dict)
    objects: list[ObjectStatus] = field(default_factory=list)
    pods_not_ready: list[str] = field(default_factory=list)
    running_pods: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def last_reconcile(self) -> str | None:
        """The latest condition change of the environment's Flux objects: Flux records when a
        reconcile changed something (Ready flipped, a new revision applied), not every run."""
        times = [o.last for o in self.objects if o.kind in FLUX_KINDS and o.last]
        return max(times) if times else None


def _condition(obj: dict[str, Any], kind: str = "Ready") -> dict[str, Any] | None:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), None)


def _last_change(obj: dict[str, Any]) -> str | None:
    times = [
        c["lastTransitionTime"]
        for c in (obj.get("status") or {}).get("conditions") or []
        if c.get("lastTransitionTime")
    ]
    return max(times) if times else None


def _revision(kind: str, status: dict[str, Any]) -> str:
    if kind == "Kustomization":
        return str(status.get("lastAppliedRevision") or "")
    if kind == "HelmRelease":
        history = status.get("history") or []
        return str(history[0].get("chartVersion", "")) if history else str(status.get("lastAttemptedRevision") or "")
    return str((status.get("artifact") or {}).get("revision") or "")


def object_status(kind: str, obj: dict[str, Any]) -> ObjectStatus:
    """Ready, revision or phase, and last change of one Flux object, ExternalSecret or database."""
    name, status = obj["metadata"]["name"], obj.get("status") or {}
    ready_condition = _condition(obj)
    ready = ready_condition is not None and ready_condition.get("status") == "True"
    if kind in FLUX_KINDS:
        detail = _revision(kind, status)
    elif kind == "Cluster":
        # CloudNativePG: healthy when every instance is ready (its phase says so in words).
        instances = (obj.get("spec") or {}).get("instances", 0)
        ready = bool(instances) and status.get("readyInstances") == instances
        detail = f"{status.get('phase', 'no phase')} ({status.get('readyInstances', 0)}/{instances} ready)"
    elif kind == "ExternalSecret":
        detail = f"refreshed {status['refreshTime']}" if status.get("refreshTime") else ""
    else:
        detail = str(ready_condition.get("message", "")) if ready_condition else "no Ready condition"
    suspended = bool((obj.get("spec") or {}).get("suspend"))
    return ObjectStatus(kind, name, ready, detail, _last_change(obj), suspended)


def _pod_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") == "Succeeded":
        return True
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    return status.get("phase") == "Running" and ready is not None and ready.get("status") == "True"


def _quota(quotas: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """`resource -> {used, hard}` of the namespace's quotas (the platform's `tenancy-quota`)."""
    result: dict[str, dict[str, str]] = {}
    for quota in quotas:
        status = quota.get("status") or {}
        for resource, hard in sorted((status.get("hard") or {}).items()):
            result[resource] = {"used": str((status.get("used") or {}).get(resource, "0")), "hard": str(hard)}
    return result


def environment_status(
    environment: str, namespace: str, live: NamespaceObjects, expected: list[dict[str, Any]], *, suspended: bool
) -> EnvironmentStatus:
    """Compare one namespace's live objects with what the plan registers there."""
    result = EnvironmentStatus(environment, namespace, live.namespace is not None)
    if live.namespace is None:
        result.problems.append(f"namespace {namespace} is missing")
        return result
    result.quota = _quota(live.quotas)
    for key, objects in sorted(live.custom.items()):
        kind = key.rsplit("/", 1)[1]
        result.objects += [object_status(kind, obj) for obj in objects]
    seen = {(o.kind, o.name) for o in result.objects}
    for obj in expected:
        if (obj["kind"], obj["metadata"]["name"]) not in seen:
            result.problems.append(f"{obj['kind']} {obj['metadata']['name']} is missing")
    planned = {(obj["kind"], obj["metadata"]["name"]) for obj in expected}
    for status in result.objects:
        if suspended and status.kind in FLUX_KINDS and (status.kind, status.name) in planned:
            if not status.suspended:
                result.problems.append(f"{status.kind} {status.name} is not suspended")
        elif not suspended and not status.ready and not status.suspended:
            result.problems.append(f"{status.kind} {status.name} is not Ready ({status.detail or 'no detail'})")
    pods = [p for p in live.pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    result.running_pods = len(pods)
    result.pods_not_ready = sorted(p["metadata"]["name"] for p in pods if not _pod_ready(p))
    if result.pods_not_ready and not suspended:
        result.problems.append(f"{len(result.pods_not_ready)} pod(s) not ready: {', '.join(result.pods_not_ready)}")
    return result


def verdict(lifecycle: str, environments: list[EnvironmentStatus]) -> tuple[str, bool]:
    """A tenant's one-word verdict and whether it counts as healthy (the exit code's input).

    Suspended and decommissioned tenants are healthy when their state holds (Flux suspended; the
    namespaces that hold retained data present): they are meant not to serve.
    """
    problems = [p for env in environments for p in env.problems]
    if problems:
        return "NotReady", False
    return {"active": "Ready", "suspended": "Suspended", "decommissioned": "Decommissioned"}[lifecycle], True
