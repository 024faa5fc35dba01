"""Which changes of a plan diff the engine will refuse: protected resources deleted or replaced.

The engine stops an update that would delete a `protect`ed resource (pulumi/pulumi
`pkg/resource/deploy/step.go`, `DeleteStep.Apply`: "unable to delete resource ... as it is
currently marked for protection", judged on the deployed `protect`), and one that would replace a
resource protected both before and after the change (`pkg/resource/deploy/step_generator.go`:
"unable to replace resource ..."; unprotecting and replacing in one update is allowed).
Data (databases, keys, secrets) is protected until its tenant is decommissioned, so removing the
file of an active tenant, or a database from it, fails the real `pulumi up` halfway through a
review that looked harmless. This module reads that from the two offline plans, so the plan and
the diff can say so and exit with `EXIT_REFUSED`, one line per tenant.

A decommissioned tenant's data is unprotected and retained on delete
(components/lifecycle.py): removing its file takes the data out of Pulumi's state and leaves it in
the cloud, which is the documented second step of offboarding, not a refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from tools.operations.upgrade_preview import REPLACED_BY
from tools.plan.lists import FieldChange

# Exit code of `tools.plan.run` and `tools.plan.diff` when the engine would refuse the change
# (2 is invalid input; docs/ci.md "Plan diff").
EXIT_REFUSED = 3
OFFBOARDING = "docs/operations.md#offboarding-a-tenant"
RENAMING = "docs/data-and-secrets.md#renaming-or-removing-a-database"


class ScopeChanges(Protocol):
    """What one scope of a plan diff removes and changes (tools/plan/diff.py `TenantChanges`)."""

    removed: list[dict[str, Any]]
    changed: list[tuple[dict[str, Any], list[FieldChange]]]


@dataclass
class Refusal:
    """The protected resources of one scope (tenant, or `_cluster`) the change would delete or replace."""

    scope: str
    deleted: list[dict[str, Any]] = field(default_factory=list)
    replaced: list[tuple[dict[str, Any], tuple[str, ...]]] = field(default_factory=list)

    def line(self, cluster_scope: str, *, removed: bool = True, deployed_known: bool = False) -> str:
        """One line naming the tenant and every protected resource, and what to do instead. `removed`:
        the tenant's file is gone (else a part of it, a database say, is); `deployed_known`: the stack's
        real outputs say the tenant was deployed, so forgetting it is no way out."""
        who = "cluster-wide" if self.scope == cluster_scope else f"tenant {self.scope}"
        parts = []
        if self.deleted:
            names = ", ".join(_name(record) for record in self.deleted)
            parts.append(f"would delete {len(self.deleted)} protected resource(s): {names}")
        if self.replaced:
            names = ", ".join(f"{_name(record)} (changes {', '.join(props)})" for record, props in self.replaced)
            parts.append(f"would replace {len(self.replaced)} protected resource(s): {names}")
        return f"refused: {who} {'; '.join(parts)}; {self._advice(cluster_scope, removed, deployed_known)}"

    def _advice(self, cluster_scope: str, removed: bool, deployed_known: bool) -> str:
        """What to do instead: offboard a removed tenant, put a renamed database's name back, or forget
        a tenant that was only ever planned."""
        if not self.deleted or self.scope == cluster_scope:
            return "the engine refuses to delete a protected resource"
        if removed:
            advice = f"put its file back and set lifecycle: decommissioned first ({OFFBOARDING})"
        else:
            advice = (
                "an entry's name is its identity: renaming or removing an entry of `databases`, `secrets` or "
                "`environments` deletes what it holds (a renamed database is a new, empty one); put the entry back "
                f"under its old name, and add a new name beside it ({RENAMING})"
            )
        if deployed_known:
            return advice
        return (
            f"{advice}; if tenant {self.scope} was only ever planned, never deployed, drop it from the baseline "
            f"with `tenancy plan ... --forget {self.scope}` (`make plan FORGET={self.scope}`)"
        )


def _name(record: dict[str, Any]) -> str:
    return f"{record['name']} ({record['type'].rpartition(':')[2]})"


def _replacing(record: dict[str, Any], paths: list[str]) -> tuple[str, ...]:
    """Top-level inputs among the changed `paths` whose change makes the provider replace `record`."""
    replaced_by = REPLACED_BY.get(record.get("type", ""), ())
    changed = {
        path.removeprefix("inputs.").split(".", 1)[0].split("[", 1)[0] for path in paths if path.startswith("inputs.")
    }
    return tuple(name for name in replaced_by if name in changed)


def refusals(scopes: Mapping[str, ScopeChanges]) -> list[Refusal]:
    """Per scope, the protected resources the engine would have to delete or replace; empty when none."""
    found: list[Refusal] = []
    for scope, changes in scopes.items():
        refusal = Refusal(scope)
        refusal.deleted = [record for record in changes.removed if record.get("protect")]
        for record, fields in changes.changed:
            # Refused only when protected before and after: the base plan's flag and the head's.
            protect_change = next((change for change in fields if change.path == "protect"), None)
            before = protect_change.old if protect_change is not None else record.get("protect")
            props = _replacing(record, [change.path for change in fields])
            if before and record.get("protect") and props:
                refusal.replaced.append((record, props))
        if refusal.deleted or refusal.replaced:
            found.append(refusal)
    return found
