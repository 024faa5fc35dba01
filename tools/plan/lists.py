"""Field-by-field differences of two JSON values, with list entries matched by what they are.

A list compared by index turns one removed entry into a change of every entry after it: a
NetworkPolicy rule that loses two of its ten peers reads as twenty shifted fields. Most lists the
program renders say what each entry is: containers, env vars and volumes by `name`, ports by port
and protocol, tolerations and taints by key and effect. Entries are matched by that identity, so a
removed entry reads as one removed entry and a changed one as its changed fields. Lists whose
entries are nothing but their content (NetworkPolicy peers, RoleBinding subjects) are compared as
sets of entries: equal entries match, and when as many entries are left on each side they are
paired in order and compared field by field (one port changed in one rule stays one change);
otherwise the rest are whole entries added or removed. A list whose entries lack the key, or
repeat it, falls back to the index.
Lists of scalars stay one value (`verbs: [get, list]` reads better as one change).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Marks a list compared as a set of entries (no key: the whole entry is its identity).
CONTENT: tuple[str, ...] = ()

# List field name -> candidate identities, tried in order. The first key of a candidate must be
# present in every entry on both sides; the others may be absent (`protocol` defaults to TCP in
# the API, so an absent one is its own value here). Field names are the Kubernetes API's
# (core/v1 PodSpec, Container, ServicePort; networking/v1 NetworkPolicy; rbac/v1; Gateway API
# HTTPRoute) and the cloud providers' (`taints` of GKE node pools and EKS node groups).
IDENTITIES: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "containers": (("name",),),
    "initContainers": (("name",),),
    "ephemeralContainers": (("name",),),
    "env": (("name",),),
    "volumes": (("name",),),
    "volumeMounts": (("mountPath",),),
    "volumeDevices": (("devicePath",),),
    "volumeClaimTemplates": (("metadata.name",),),
    # Container ports, then Service and NetworkPolicy ports.
    "ports": (("containerPort", "protocol"), ("port", "protocol", "endPort")),
    # NetworkPolicy rules and their peers: selectors, CIDR blocks and ports, nothing to name them by.
    "ingress": (CONTENT,),
    "egress": (CONTENT,),
    "from": (CONTENT,),
    "to": (CONTENT,),
    "subjects": (CONTENT,),
    "envFrom": (CONTENT,),
    "tolerations": (("key", "effect"),),
    "taints": (("key", "effect"),),
    "matchExpressions": (("key", "operator"),),
    # Karpenter NodePool requirements (karpenter.sh/v1).
    "requirements": (("key", "operator"),),
    # Ingress rules and TLS entries, HTTPRoute paths and references.
    "rules": (("host",),),
    "tls": (("secretName",),),
    "paths": (("path",),),
    "parentRefs": (("name", "sectionName"),),
    "backendRefs": (("name", "port"),),
    # ValidatingAdmissionPolicy.
    "validations": (("expression",),),
    "matchConditions": (("name",),),
    "variables": (("name",),),
}
# Any other list of objects that all carry a distinct `name` is matched by it.
_GENERIC = ("name",)
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class FieldChange:
    """One field that differs: its path and both values (`None` where absent).

    `entry` marks a whole list entry added (`old` is None) or removed (`new` is None), named by
    its identity in the path (`containers[name=app]`) or, for lists of pure content, by the list's
    path alone (`spec.ingress[0].from`)."""

    path: str
    old: Any
    new: Any
    entry: bool = False


def join(prefix: str, key: str) -> str:
    """`a.b` for plain keys; `a["tenancy.io/tenant"]` for keys that hold dots or slashes (labels)."""
    if _PLAIN_KEY.match(key):
        return f"{prefix}.{key}" if prefix else key
    return f"{prefix}[{json.dumps(key)}]"


def _get(entry: dict[str, Any], dotted: str) -> Any:
    value: Any = entry
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def identity(field: str, old: list[Any], new: list[Any]) -> tuple[str, ...] | None:
    """The keys entries of this list are matched by (`CONTENT` for whole entries), or None: by index."""
    entries = [*old, *new]
    if not entries or not all(isinstance(entry, dict) for entry in entries):
        return None
    for keys in (*IDENTITIES.get(field, ()), _GENERIC):
        if keys == CONTENT:
            return CONTENT
        if not all(_get(entry, keys[0]) is not None for entry in entries):
            continue
        unique = all(
            len({_canonical([_get(entry, key) for key in keys]) for entry in side}) == len(side) for side in (old, new)
        )
        if unique:
            return keys
    return None


def _label(entry: dict[str, Any], keys: tuple[str, ...]) -> str:
    """`name=app`, `port=80,protocol=TCP`: the identity as it reads in a path."""
    parts = []
    for key in keys:
        value = _get(entry, key)
        if value is not None:
            parts.append(f"{key}={value if isinstance(value, str | int) else _canonical(value)}")
    return ",".join(parts)


def _is_structured_list(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(item, dict | list) for item in value)


def diff_values(old: Any, new: Any, path: str, field: str = "") -> list[FieldChange]:
    """Every difference between `old` and `new` under `path`; `field` is the key that holds them."""
    if old == new:
        return []
    # A mapping on one side and nothing on the other is walked too: each of its fields is one change.
    old_map = old if isinstance(old, dict) else ({} if old is None and isinstance(new, dict) else None)
    new_map = new if isinstance(new, dict) else ({} if new is None and isinstance(old, dict) else None)
    if old_map is not None and new_map is not None and (old_map or new_map):
        changes: list[FieldChange] = []
        for key in sorted(set(old_map) | set(new_map)):
            changes += diff_values(old_map.get(key), new_map.get(key), join(path, str(key)), str(key))
        return changes
    lists = isinstance(old or [], list) and isinstance(new or [], list)
    if lists and (_is_structured_list(old) or _is_structured_list(new)):
        return _diff_list(old or [], new or [], path, field)
    return [FieldChange(path, old, new)]


def _diff_list(old: list[Any], new: list[Any], path: str, field: str) -> list[FieldChange]:
    keys = identity(field, old, new)
    if keys is None:
        changes: list[FieldChange] = []
        for index in range(max(len(old), len(new))):
            before = old[index] if index < len(old) else None
            after = new[index] if index < len(new) else None
            changes += diff_values(before, after, f"{path}[{index}]")
        return changes
    if keys == CONTENT:
        return _diff_content(old, new, path)
    old_by = {_label(entry, keys): entry for entry in old}
    new_by = {_label(entry, keys): entry for entry in new}
    changes = []
    for label in [*old_by, *(label for label in new_by if label not in old_by)]:
        entry_path = f"{path}[{label}]"
        before, after = old_by.get(label), new_by.get(label)
        if before is None or after is None:
            changes.append(FieldChange(entry_path, before, after, entry=True))
        else:
            changes += diff_values(before, after, entry_path)
    return changes


def _unmatched(entries: list[Any], others: list[Any]) -> list[tuple[int, Any]]:
    """Entries (with their index) that have no equal entry among `others`, each used once."""
    available = Counter(_canonical(other) for other in others)
    left = []
    for index, entry in enumerate(entries):
        text = _canonical(entry)
        if available[text]:
            available[text] -= 1
        else:
            left.append((index, entry))
    return left


def _diff_content(old: list[Any], new: list[Any], path: str) -> list[FieldChange]:
    removed, added = _unmatched(old, new), _unmatched(new, old)
    if removed and len(removed) == len(added):
        changes: list[FieldChange] = []
        for (_, before), (index, after) in zip(removed, added, strict=True):
            changes += diff_values(before, after, f"{path}[{index}]")
        return changes
    return [FieldChange(path, entry, None, entry=True) for _, entry in removed] + [
        FieldChange(path, None, entry, entry=True) for _, entry in added
    ]
