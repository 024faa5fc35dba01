"""Compare two offline plans and say, per tenant, what a change adds, removes and changes.

    python -m tools.plan.diff BASE_DIR HEAD_DIR [--title TEXT]
    python -m tools.plan --stack dev --out HEAD_DIR --diff BASE_DIR

Both directories are what `python -m tools.plan --out` writes (`resources.json`, `outputs.json`).
This is what reviewers read on a pull request, including pull requests from forks that have no
cloud credentials, so it works on the offline plan alone: resources are matched by URN, grouped by
their `tenant` field (cluster-wide parts under `_cluster`), and every changed input or resource
option is listed by its field path with the old and the new value, as Markdown.

Secrets stay `[secret]`: the harness redacts them before they reach resources.json, and this module
never reads anything else. A change to a secret's value is therefore invisible here (both sides say
`[secret]`); the real `pulumi preview` shows that the resource changes, never the value.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.model.core.errors import ConfigurationError
from components.model.core.labels import NAMESPACE_PREFIX, QUOTA_TIER_KEY
from tools.plan.cost import cost_line
from tools.plan.dirs import deployed_tenants, read_stack_outputs
from tools.plan.lists import FieldChange, diff_values, join
from tools.plan.refusals import EXIT_REFUSED, refusals

# FieldChange and EXIT_REFUSED are part of this module's interface (the plan command and tests use them).
__all__ = [
    "CLUSTER_SCOPE",
    "EXIT_REFUSED",
    "FieldChange",
    "PlanDiff",
    "TenantChanges",
    "diff_dirs",
    "diff_records",
    "field_changes",
    "main",
    "refusal_lines",
    "render_markdown",
    "report_refusals",
    "urn_label",
]

CLUSTER_SCOPE = "_cluster"
SECRET_PLACEHOLDER = "[secret]"
# Resource options a reviewer must see change (protection is what keeps tenant data alive).
_OPTION_FIELDS = ("protect", "retainOnDelete", "deletedWith", "ignoreChanges", "parent", "custom")
# What the engine orders and routes a resource by (tools/plan/harness.py): its explicit provider (a URN,
# or null for a default provider) and the URNs it waits for. Compared only where both plans
# record them, so a plan written before they were recorded does not list every resource.
_ENGINE_FIELDS = ("provider", "dependencies")
# Keep table cells readable: long values (certificates, policy expressions) are cut.
_MAX_VALUE_CHARS = 80
_MAX_ENTRY_CHARS = 200


@dataclass
class TenantChanges:
    """What changes for one tenant (or the cluster-wide scope)."""

    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    changed: list[tuple[dict[str, Any], list[FieldChange]]] = field(default_factory=list)
    # The base plan's record of each changed resource, by URN (its cost inputs before the change).
    before: dict[str, dict[str, Any]] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


@dataclass
class PlanDiff:
    """The whole comparison: changes per scope and changed stack outputs."""

    scopes: dict[str, TenantChanges]
    outputs: list[FieldChange]
    base_count: int
    head_count: int
    # The tenants the stack's last deployment exported (`--stack-outputs`); None: not known, so the
    # base plan stands for what is deployed. A tenant outside it was never deployed: removing its
    # file deletes nothing, so it is never refused.
    deployed: frozenset[str] | None = None
    # Tenants the plan was told to forget (`tenancy plan --forget`): only ever planned, never deployed.
    forgotten: frozenset[str] = frozenset()
    # The tenants the head plan has resources of: a scope outside it is a tenant whose file is gone.
    head_tenants: frozenset[str] = frozenset()

    def never_deployed(self, scope: str) -> bool:
        if scope == CLUSTER_SCOPE:
            return False
        return scope in self.forgotten or (self.deployed is not None and scope not in self.deployed)

    def empty(self) -> bool:
        return not self.outputs and all(changes.empty() for changes in self.scopes.values())


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """Leaf paths of a JSON value (stack outputs). Lists of scalars stay one leaf."""
    if isinstance(value, dict) and value:
        for key in sorted(value):
            _flatten(value[key], join(prefix, str(key)), out)
    elif isinstance(value, list) and any(isinstance(item, dict | list) for item in value):
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}[{index}]", out)
    else:
        out[prefix] = value


def field_changes(old: dict[str, Any], new: dict[str, Any]) -> list[FieldChange]:
    """Changed fields of two records: inputs under `inputs.` (list entries matched by identity,
    tools/plan/lists.py), then the resource options and engine fields."""
    changes = diff_values(old.get("inputs", {}), new.get("inputs", {}), "inputs")
    old_leaves: dict[str, Any] = {}
    new_leaves: dict[str, Any] = {}
    for option in _OPTION_FIELDS:
        old_leaves[option] = old.get(option)
        new_leaves[option] = new.get(option)
    for engine_field in _ENGINE_FIELDS:
        if engine_field in old and engine_field in new:
            old_leaves[engine_field] = old[engine_field]
            new_leaves[engine_field] = new[engine_field]
    for path in sorted(set(old_leaves) | set(new_leaves)):
        before, after = old_leaves.get(path), new_leaves.get(path)
        if before != after:
            changes.append(FieldChange(path, before, after))
    return changes


def _load(directory: Path, file_name: str, default: Any) -> Any:
    path = directory / file_name
    if not path.exists():
        if file_name == "resources.json":
            raise FileNotFoundError(f"{path} not found: write plans with `python -m tools.plan --out DIR`")
        return default
    return json.loads(path.read_text(encoding="utf-8"))


def diff_records(base: list[dict[str, Any]], head: list[dict[str, Any]]) -> dict[str, TenantChanges]:
    """Changes per scope between two resources.json record lists, matched by URN."""
    base_by_urn = {record["urn"]: record for record in base}
    head_by_urn = {record["urn"]: record for record in head}
    scopes: dict[str, TenantChanges] = defaultdict(TenantChanges)
    for urn in sorted(set(base_by_urn) | set(head_by_urn)):
        before, after = base_by_urn.get(urn), head_by_urn.get(urn)
        if before is None and after is not None:
            scopes[after.get("tenant") or CLUSTER_SCOPE].added.append(after)
        elif after is None and before is not None:
            scopes[before.get("tenant") or CLUSTER_SCOPE].removed.append(before)
        elif before is not None and after is not None:
            changes = field_changes(before, after)
            if changes:
                scope = scopes[after.get("tenant") or CLUSTER_SCOPE]
                scope.changed.append((after, changes))
                scope.before[urn] = before
    return {scope: scopes[scope] for scope in sorted(scopes)}


def diff_dirs(base_dir: Path, head_dir: Path) -> PlanDiff:
    """Compare the plans written under `base_dir` and `head_dir`."""
    base = _load(base_dir, "resources.json", [])
    head = _load(head_dir, "resources.json", [])
    old_outputs: dict[str, Any] = {}
    new_outputs: dict[str, Any] = {}
    _flatten(_load(base_dir, "outputs.json", {}), "", old_outputs)
    _flatten(_load(head_dir, "outputs.json", {}), "", new_outputs)
    outputs = [
        FieldChange(path, old_outputs.get(path), new_outputs.get(path))
        for path in sorted(set(old_outputs) | set(new_outputs))
        if old_outputs.get(path) != new_outputs.get(path)
    ]
    head_tenants = frozenset(record["tenant"] for record in head if record.get("tenant"))
    return PlanDiff(diff_records(base, head), outputs, len(base), len(head), head_tenants=head_tenants)


def _value(value: Any, limit: int = _MAX_VALUE_CHARS) -> str:
    """A value as an inline code span, cut to fit a table cell; `[secret]` shows as is."""
    if value is None:
        return "_(none)_"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("|", "\\|").replace("`", "'").replace("\n", " ")
    return f"`{text}`"


def urn_label(urn: str) -> str:
    """A URN as a reviewer reads it: `name` (`type`), the type without its parents' types."""
    qualified_type, _, name = urn.rpartition("::")
    return f"`{name}` (`{qualified_type.rpartition('$')[2].rpartition('::')[2]}`)"


def _change_text(change: FieldChange) -> str:
    """One changed field. Dependencies are URN lists: the URNs added and removed, by name; a
    provider is a URN, shown by name too (a cut URN would hide exactly the part that changed)."""
    if change.path == "dependencies":
        old, new = set(change.old or []), set(change.new or [])
        parts = []
        if added := sorted(new - old):
            parts.append("now waits for " + ", ".join(urn_label(urn) for urn in added))
        if removed := sorted(old - new):
            parts.append("no longer waits for " + ", ".join(urn_label(urn) for urn in removed))
        return f"`dependencies`: {'; '.join(parts)}"
    if change.path == "provider":
        old_text = urn_label(change.old) if change.old else "_(default provider)_"
        new_text = urn_label(change.new) if change.new else "_(default provider)_"
        return f"`provider`: {old_text} → {new_text}"
    if change.entry:
        # A whole list entry: its content is what names it (a peer's selector), so it gets more room.
        verb, value = ("added entry", change.new) if change.old is None else ("removed entry", change.old)
        return f"`{change.path}`: {verb} {_value(value, _MAX_ENTRY_CHARS)}"
    return f"`{change.path}`: {_value(change.old)} → {_value(change.new)}"


def _resource_label(record: dict[str, Any]) -> str:
    inputs: dict[str, Any] = record.get("inputs") or {}
    metadata: dict[str, Any] = inputs["metadata"] if isinstance(inputs.get("metadata"), dict) else {}
    kind_name = ""
    if "kind" in inputs and metadata.get("name"):
        namespace = f"{metadata['namespace']}/" if metadata.get("namespace") else ""
        kind_name = f" ({inputs['kind']} {namespace}{metadata['name']})"
    environment = _environment(record, metadata)
    where = f" in environment `{environment}`" if environment else ""
    return f"`{record['name']}` `{record['type']}`{kind_name}{where}"


def _environment(record: dict[str, Any], metadata: dict[str, Any]) -> str | None:
    """The tenant environment a Kubernetes object is in, from its namespace `tenant-<tenant>-<env>`
    (a Namespace: its own name), so a change from `overrides.prod` (a stack) reads with the
    environment whose namespace it changes."""
    tenant = record.get("tenant")
    namespace = metadata.get("namespace") or (
        metadata.get("name") if record.get("inputs", {}).get("kind") == "Namespace" else None
    )
    prefix = f"{NAMESPACE_PREFIX}{tenant}-"
    if not tenant or not isinstance(namespace, str) or not namespace.startswith(prefix):
        return None
    return namespace.removeprefix(prefix)


def _removal_note(record: dict[str, Any], never_deployed: bool = False, forgotten: bool = False) -> str:
    if forgotten:
        return " — forgotten (`--forget`): only ever planned, nothing to delete"
    if never_deployed:
        return " — never deployed (not in the stack's last outputs): nothing to delete"
    if record.get("protect"):
        return " — **protected: the engine will refuse to delete it**"
    if record.get("retainOnDelete"):
        return " — retained: leaves Pulumi's state, stays in the cloud"
    return ""


_QUOTA = "kubernetes:core/v1:ResourceQuota"
_LIMITS = "kubernetes:core/v1:LimitRange"
# Amounts shown in a guard summary line before "and N more", compute and storage first.
_MAX_AMOUNTS = 6
_FIRST = ("requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "requests.storage", "pods")


def _amounts(record: dict[str, Any] | None) -> dict[str, Any]:
    """A quota's `hard` amounts, or a LimitRange's per-container amounts as `default.cpu`, `max.memory`."""
    spec = ((record or {}).get("inputs") or {}).get("spec") or {}
    if record is not None and record.get("type") == _QUOTA:
        return dict(spec.get("hard") or {})
    amounts: dict[str, Any] = {}
    for limit in spec.get("limits") or []:
        for section in ("defaultRequest", "default", "max", "min", "maxLimitRequestRatio"):
            for resource, value in (limit.get(section) or {}).items():
                amounts[f"{section}.{resource}"] = value
    return amounts


def _tier(record: dict[str, Any] | None) -> Any:
    metadata = ((record or {}).get("inputs") or {}).get("metadata") or {}
    return (metadata.get("annotations") or {}).get(QUOTA_TIER_KEY)


def guard_summary(record: dict[str, Any], before: dict[str, Any] | None) -> str | None:
    """One line for a changed quota or LimitRange: its tier change and the amounts that change, so a
    tier change reads as one line before the field-by-field detail; None for other resources."""
    if record.get("type") not in (_QUOTA, _LIMITS):
        return None
    metadata = (record.get("inputs") or {}).get("metadata") or {}
    what = "quota" if record["type"] == _QUOTA else "limits"
    parts = []
    if record["type"] == _QUOTA and _tier(before) != _tier(record):
        parts.append(f"tier {_tier(before) or '(none)'} → {_tier(record) or '(none)'}")
    old, new = _amounts(before), _amounts(record)
    changed = sorted(
        (key for key in set(old) | set(new) if old.get(key) != new.get(key)),
        key=lambda key: (_FIRST.index(key) if key in _FIRST else len(_FIRST), key),
    )
    amounts = [f"{key} {old.get(key, '(none)')} → {new.get(key, '(none)')}" for key in changed[:_MAX_AMOUNTS]]
    if len(changed) > _MAX_AMOUNTS:
        amounts.append(f"and {len(changed) - _MAX_AMOUNTS} more")
    if amounts:
        parts.append(", ".join(amounts))
    if not parts:
        return None
    return f"**{what}** `{metadata.get('namespace', '')}`: {'; '.join(parts)}"


def _cpu_words(value: Any) -> str:
    """A CPU amount as a reviewer reads it: `500m`, `1 core`, `500 cores`."""
    text = str(value)
    if text.endswith("m") or not text.replace(".", "", 1).isdigit():
        return text
    return f"{text} core" if text == "1" else f"{text} cores"


def quota_amounts(record: dict[str, Any]) -> str | None:
    """A new quota's amounts, compute and storage first, CPU in cores (`cpu: "500"` reads `500 cores`):
    a new tenant's diff shows what it may use, not only that it gets a quota. None for other resources."""
    if record.get("type") != _QUOTA:
        return None
    amounts = _amounts(record)
    keys = sorted(amounts, key=lambda key: (_FIRST.index(key) if key in _FIRST else len(_FIRST), key))
    shown = [
        f"{key} {_cpu_words(amounts[key]) if key.endswith('.cpu') else amounts[key]}" for key in keys[:_MAX_AMOUNTS]
    ]
    if len(keys) > _MAX_AMOUNTS:
        shown.append(f"and {len(keys) - _MAX_AMOUNTS} more")
    return ", ".join(shown) if shown else None


def refusal_lines(diff: PlanDiff) -> list[str]:
    """One line per tenant (or cluster-wide) whose protected resources the change deletes or replaces."""
    scopes = {scope: changes for scope, changes in diff.scopes.items() if not diff.never_deployed(scope)}
    known = diff.deployed is not None
    return [
        refusal.line(CLUSTER_SCOPE, removed=refusal.scope not in diff.head_tenants, deployed_known=known)
        for refusal in refusals(scopes)
    ]


def render_markdown(diff: PlanDiff, title: str = "Plan diff", *, refusals_first: bool = True) -> str:
    """The diff as Markdown: a summary line, then per tenant the added, removed, changed resources.
    `refusals_first`: lead with what the engine will refuse (the pull request comment); the terminal
    prints those lines last instead (tools/plan/text.py)."""
    added = sum(len(s.added) for s in diff.scopes.values())
    removed = sum(len(s.removed) for s in diff.scopes.values())
    changed = sum(len(s.changed) for s in diff.scopes.values())
    lines = [f"## {title}", ""]
    lines.append(
        f"{diff.base_count} → {diff.head_count} resources: **{added} to add, {removed} to remove, "
        f"{changed} to change**."
    )
    if diff.empty():
        lines += ["", "No changes."]
        return "\n".join(lines) + "\n"
    if refusals_first and (refused := refusal_lines(diff)):
        lines += ["", f"**The engine will refuse this change** (exit code {EXIT_REFUSED}):", ""]
        lines += [f"- {line}" for line in refused]
    for scope, changes in diff.scopes.items():
        if changes.empty():
            continue
        heading = "cluster-wide" if scope == CLUSTER_SCOPE else f"tenant `{scope}`"
        counts = f"{len(changes.added)} added, {len(changes.removed)} removed, {len(changes.changed)} changed"
        lines += ["", f"### {heading} ({counts})", ""]
        for record, _ in changes.changed:
            if line := guard_summary(record, changes.before.get(record["urn"])):
                lines.append(f"- {line}")
        for record in changes.added:
            lines.append(f"- **added** {_resource_label(record)}")
            if amounts := quota_amounts(record):
                lines.append(f"  - quota: {amounts}")
            if cost := cost_line(record):
                lines.append(f"  - cost: {cost}")
        for record in changes.removed:
            note = _removal_note(record, diff.never_deployed(scope), scope in diff.forgotten)
            lines.append(f"- **removed** {_resource_label(record)}{note}")
        for record, fields in changes.changed:
            lines.append(f"- **changed** {_resource_label(record)}")
            if cost := cost_line(record, changes.before.get(record["urn"])):
                lines.append(f"  - cost: {cost}")
            for change in fields:
                lines.append(f"  - {_change_text(change)}")
    if diff.outputs:
        lines += ["", "### stack outputs", ""]
        for change in diff.outputs:
            lines.append(f"- `{change.path}`: {_value(change.old)} → {_value(change.new)}")
    lines += ["", f"_Secret values are never shown; they read `{SECRET_PLACEHOLDER}` on both sides._"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy diff", description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path, help="plan directory of the base branch (`tenancy plan --out`)")
    parser.add_argument("head", type=Path, help="plan directory of the change")
    parser.add_argument("--title", default="Plan diff", help="Markdown heading")
    parser.add_argument(
        "--stack-outputs",
        type=Path,
        metavar="FILE",
        help="the stack's last outputs (`pulumi stack output --json`): tenants they do not list were never "
        "deployed, and removing them is not refused",
    )
    args = parser.parse_args(argv)
    try:
        diff = diff_dirs(args.base, args.head)
        if args.stack_outputs is not None:
            diff.deployed = deployed_tenants(read_stack_outputs(args.stack_outputs))
    except FileNotFoundError as error:
        print(str(error), file=sys.stderr)
        return 2
    except ConfigurationError as error:
        print(str(error), file=sys.stderr)
        return 2
    sys.stdout.write(render_markdown(diff, args.title))
    return report_refusals(diff)


def report_refusals(diff: PlanDiff) -> int:
    """Print each refusal line to stderr; the exit code: EXIT_REFUSED when there is one, else 0."""
    lines = refusal_lines(diff)
    for line in lines:
        print(line, file=sys.stderr)
    return EXIT_REFUSED if lines else 0


if __name__ == "__main__":
    raise SystemExit(main())
