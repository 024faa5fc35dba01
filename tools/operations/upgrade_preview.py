"""What the engine's first preview does to a deployed stack, judged offline from its state export.

`pulumi stack export` gives the resources a stack has (URN, type, inputs, outputs, protect); an
offline plan (tools.plan.harness) gives what the program registers now, with aliases and
`ignoreChanges`. This module pairs them the way the engine does (same URN, else an alias) and
names each step: same, update, replace, create or delete. The engine refuses to delete or replace
a protected resource, which stops the whole preview of an existing stack; those steps are
`refused` here.

What is modelled, and why it is enough for keys and identities: a property change replaces a
resource only where the provider says so, and those properties are listed in `REPLACED_BY` for the
types the tenant data registers (taken from the provider's documentation; an unlisted type is an
update). Values the cloud computes (ids, ARNs) are compared through the resources they come from:
a new resource that aliases an old one is the same cloud object, so its computed values are the
old ones. Nothing here runs a provider's diff; a real preview remains the proof.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tools.plan.harness import RecordedResource
from tools.plan.harness import _computed_outputs as mock_outputs

# Properties whose change makes the provider replace the resource (create a new cloud object).
REPLACED_BY: Mapping[str, tuple[str, ...]] = {
    "gcp:kms/cryptoKey:CryptoKey": ("name", "keyRing"),
    # A key ring is never deleted: a new name is a new ring (docs/adr/0016-own-key-ring.md).
    "gcp:kms/keyRing:KeyRing": ("name", "location"),
    "gcp:kms/keyRingIAMMember:KeyRingIAMMember": ("keyRingId", "role", "member"),
    "gcp:sql/databaseInstance:DatabaseInstance": ("name", "region", "encryptionKeyName"),
    # replication's customerManagedEncryption changes in place (google provider 4.80 onwards).
    "gcp:secretmanager/secret:Secret": ("secretId",),
    "gcp:serviceaccount/account:Account": ("accountId",),
    "gcp:serviceaccount/iAMBinding:IAMBinding": ("serviceAccountId", "role"),
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": ("cryptoKeyId", "role", "member"),
    "gcp:secretmanager/secretIamMember:SecretIamMember": ("secretId", "role", "member"),
    "aws:kms/key:Key": ("customerMasterKeySpec", "keyUsage"),
    "aws:kms/alias:Alias": ("name",),
    "aws:rds/instance:Instance": ("identifier", "kmsKeyId", "engine", "dbName", "username"),
    # kmsKeyId changes in place: Secrets Manager re-encrypts the labelled versions.
    "aws:secretsmanager/secret:Secret": ("name",),
    "aws:iam/role:Role": ("name", "namePrefix"),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ("clusterName", "namespace", "serviceAccount"),
}

StepKind = Literal["same", "update", "replace", "create", "delete"]


@dataclass(frozen=True)
class StateResource:
    """One resource of a `pulumi stack export`."""

    urn: str
    type: str
    id: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    protect: bool
    parent: str | None

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


@dataclass(frozen=True)
class Step:
    """What the engine does with one resource; `old` is the state URN it was matched with."""

    kind: StepKind
    urn: str
    type: str
    old: str | None
    protected: bool
    properties: tuple[str, ...] = ()

    @property
    def refused(self) -> bool:
        """The engine stops the preview here: a protected resource would be deleted or replaced."""
        return self.protected and self.kind in ("delete", "replace")


def read_state(path: Path) -> list[StateResource]:
    """The resources of a `pulumi stack export` file (version 3), providers and the stack left out."""
    document = json.loads(path.read_text(encoding="utf-8"))
    resources = (document.get("deployment") or {}).get("resources") or []
    return [
        StateResource(
            urn=item["urn"],
            type=item["type"],
            id=str(item.get("id", "")),
            inputs=item.get("inputs") or {},
            outputs=item.get("outputs") or {},
            protect=bool(item.get("protect", False)),
            parent=item.get("parent"),
        )
        for item in resources
        if item.get("custom", True) and not item["type"].startswith(("pulumi:providers:", "pulumi:pulumi:"))
    ]


def alias_urns(resource: RecordedResource) -> list[str]:
    """The URNs a new resource answers to besides its own (a name alias keeps parent and type)."""
    base = resource.urn.rsplit("::", 1)[0]
    return [alias if alias.startswith("urn:") else f"{base}::{alias}" for alias in resource.aliases]


def _computed(resource: RecordedResource) -> dict[str, str]:
    """Values the mocks computed for a new resource, by output name (`id` included)."""
    made = mock_outputs(resource.type, resource.name, dict(resource.inputs), reading=False)
    if made is None:
        return {}
    resource_id, extra = made
    values = {"id": resource_id}
    values.update({key: value for key, value in extra.items() if isinstance(value, str)})
    return values


def substitutions(pairs: Iterable[tuple[RecordedResource, StateResource]]) -> dict[str, str]:
    """Computed values of new resources -> the deployed object's, for every moved resource."""
    table: dict[str, str] = {}
    for new, old in pairs:
        for key, value in _computed(new).items():
            deployed = old.id if key == "id" else old.outputs.get(key)
            if isinstance(deployed, str) and deployed != value:
                table[value] = deployed
    return table


def _resolve(value: Any, table: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, list):
        return [_resolve(item, table) for item in value]
    if isinstance(value, dict):
        return {key: _resolve(item, table) for key, item in value.items()}
    return value


def _changed(old: StateResource, new: RecordedResource, table: Mapping[str, str]) -> tuple[str, ...]:
    """Top-level inputs that differ, ignoring those under `ignoreChanges` (the engine keeps the
    deployed value for them)."""
    ignored = {path.split(".", 1)[0] for path in new.ignore_changes}
    names = sorted(set(old.inputs) | set(new.inputs))
    return tuple(
        name
        for name in names
        if name not in ignored
        and not name.startswith("__")
        and _resolve(new.inputs.get(name), table) != old.inputs.get(name)
    )


def _matches(state: list[StateResource], resources: list[RecordedResource]) -> dict[str, StateResource]:
    """New URN -> the deployed resource it is (same URN, else the first alias found in the state)."""
    by_urn = {item.urn: item for item in state}
    matched: dict[str, StateResource] = {}
    for resource in _managed(resources):
        for urn in [resource.urn, *alias_urns(resource)]:
            if urn in by_urn:
                matched[resource.urn] = by_urn[urn]
                break
    return matched


def _managed(resources: list[RecordedResource]) -> list[RecordedResource]:
    return [resource for resource in resources if resource.custom and not resource.read]


def preview(state: list[StateResource], resources: list[RecordedResource]) -> list[Step]:
    """Every step of the first preview of `resources` over `state`, deletes last.

    A kept resource keeps its computed values (the mocks' stand-ins are read as the deployed
    ones); a replaced one gets new values, so what refers to it is judged again until stable."""
    matched = _matches(state, resources)
    by_urn = {resource.urn: resource for resource in _managed(resources)}
    replaced: set[str] = set()
    while True:
        table = substitutions((by_urn[urn], old) for urn, old in matched.items() if urn not in replaced)
        steps = [_step(resource, matched.get(resource.urn), table) for resource in _managed(resources)]
        now = {step.urn for step in steps if step.kind == "replace"}
        if now == replaced:
            break
        replaced = now
    kept = {old.urn for old in matched.values()}
    steps += [Step("delete", item.urn, item.type, item.urn, item.protect) for item in state if item.urn not in kept]
    return steps


def _step(resource: RecordedResource, old: StateResource | None, table: Mapping[str, str]) -> Step:
    if old is None:
        return Step("create", resource.urn, resource.type, None, resource.protect)
    changed = _changed(old, resource, table)
    replacing = tuple(name for name in changed if name in REPLACED_BY.get(resource.type, ()))
    kind: StepKind = "replace" if replacing else "update" if changed else "same"
    return Step(kind, resource.urn, resource.type, old.urn, old.protect, replacing or changed)
