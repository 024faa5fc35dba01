"""What a reviewer reads after the run: the live objects with status and managedFields, and the logs.

After the first `up` and its checks (also when `up` failed) the run writes `.realrun/run/evidence/`:
every live object of the platform's and tenants' namespaces and every cluster-scoped object the stack owns, as JSON with
`status` and `managedFields` (so which manager wrote each status is visible), each controller's log,
and `status-writers.json`, which lists per object the field managers of its status. Secret values are
replaced by their length (the keys stay): the evidence is for reading, not a second copy of the
stack's credentials. The whole folder stays under a cap (50 MB); what would not fit is named in
`index.json` instead of written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

from tools.realrun.kube import dynamic

CAP_BYTES = 50 * 1024 * 1024
# Of each log, at most this much (its end: where a failure is) goes in.
LOG_CAP_BYTES = 4 * 1024 * 1024
# Namespaces that are the control plane's own, not the platform's or a tenant's.
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease", "default"})
# Kinds left out: events are the controllers' chatter (their logs are here), leases their heartbeats.
SKIPPED_GROUPS_KINDS = frozenset({("", "Event"), ("events.k8s.io", "Event"), ("coordination.k8s.io", "Lease")})


@dataclass
class Written:
    """What went in, and what the cap kept out."""

    objects: int = 0
    size: int = 0
    left_out: list[str] = field(default_factory=list)


def redacted(item: Mapping[str, Any]) -> dict[str, Any]:
    """A Secret with each value replaced by `<N bytes>`; any other object as it is."""
    copy = dict(item)
    if copy.get("kind") == "Secret":
        for key in ("data", "stringData"):
            if copy.get(key):
                copy[key] = {k: f"<{len(v or '')} bytes>" for k, v in copy[key].items()}
    return copy


def status_writers(item: Mapping[str, Any]) -> list[str]:
    """The field managers that wrote the object's status (its `status` subresource entries)."""
    return sorted(
        {
            m.get("manager", "")
            for m in item.get("metadata", {}).get("managedFields") or []
            if m.get("subresource") == "status"
        }
    )


def _key(item: Mapping[str, Any]) -> str:
    meta = item.get("metadata", {})
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{item.get('apiVersion')} {item.get('kind')} {where}{meta.get('name')}"


def write(
    folder: Path, objects: Iterable[Mapping[str, Any]], logs: Mapping[str, Path], cap: int = CAP_BYTES
) -> Written:
    """Write the logs (each capped) and then the objects, one JSON file per namespace (`_cluster` for
    cluster-scoped ones), never past `cap` bytes in all; returns what was written and left out."""
    folder.mkdir(parents=True, exist_ok=True)
    written = Written()
    # The index and the status writers are written last and reserved for: an eighth of the cap.
    budget = cap - cap // 8
    (folder / "logs").mkdir(exist_ok=True)
    for name, path in sorted(logs.items()):
        data = path.read_bytes() if path.exists() else b""
        data = data[-min(LOG_CAP_BYTES, budget // 4) :] if data else b""
        if written.size + len(data) > budget:
            written.left_out.append(f"log {name} ({len(data)} bytes)")
            continue
        (folder / "logs" / f"{name}.log").write_bytes(data)
        written.size += len(data)
    by_namespace: dict[str, list[str]] = {}
    writers: dict[str, list[str]] = {}
    for item in objects:
        text = json.dumps(redacted(item), sort_keys=True)
        if written.size + len(text) + 2 > budget:
            written.left_out.append(_key(item))
            continue
        namespace = item.get("metadata", {}).get("namespace") or "_cluster"
        by_namespace.setdefault(namespace, []).append(text)
        written.size += len(text) + 2
        written.objects += 1
        if item.get("status") is not None:
            writers[_key(item)] = status_writers(item)
    (folder / "objects").mkdir(exist_ok=True)
    for namespace, texts in sorted(by_namespace.items()):
        (folder / "objects" / f"{namespace}.json").write_text("[\n" + ",\n".join(texts) + "\n]\n")
    tail = json.dumps(writers, indent=1, sort_keys=True)
    index = json.dumps(
        {"objects": written.objects, "bytes": written.size, "cap": cap, "left_out": written.left_out},
        indent=1,
    )
    if written.size + len(tail) + len(index) > cap:
        tail = json.dumps({"left_out": "status-writers.json would pass the cap"})
    (folder / "status-writers.json").write_text(tail)
    (folder / "index.json").write_text(index)
    written.size += len(tail) + len(index)
    return written


def live_objects(api: client.ApiClient, owned_cluster_objects: set[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Every object of every namespace but the control plane's own, and each cluster-scoped object
    whose (apiVersion, kind, name) is in `owned_cluster_objects` (the stack's and the controllers')."""
    dyn = dynamic(api)
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for resource in dyn.resources.search(preferred=True):
        verbs = getattr(resource, "verbs", None) or []
        if "/" in resource.name or "list" not in verbs or (resource.group, resource.kind) in seen:
            continue
        if (resource.group, resource.kind) in SKIPPED_GROUPS_KINDS:
            continue
        seen.add((resource.group, resource.kind))
        try:
            items = resource.get().to_dict().get("items", [])
        except Exception:  # a kind that lists nothing to an administrator (e.g. reviews): not evidence
            continue
        for item in items:
            item.setdefault("apiVersion", resource.group_version)
            item.setdefault("kind", resource.kind)
            meta = item.get("metadata", {})
            if resource.namespaced:
                if meta.get("namespace") not in SYSTEM_NAMESPACES:
                    found.append(item)
            elif (item["apiVersion"], item["kind"], meta.get("name")) in owned_cluster_objects:
                found.append(item)
    return found


def stack_cluster_objects(deployment: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    """(apiVersion, kind, name) of each Kubernetes object in the stack's state (its `outputs`)."""
    owned = set()
    for resource in deployment.get("resources") or []:
        outputs = resource.get("outputs") or {}
        meta = outputs.get("metadata") or {}
        if outputs.get("apiVersion") and outputs.get("kind") and meta.get("name") and not meta.get("namespace"):
            owned.add((str(outputs["apiVersion"]), str(outputs["kind"]), str(meta["name"])))
    return owned
