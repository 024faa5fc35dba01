"""The lifecycle of docs/operations.md, on the real engine and API server.

acme (databases, secrets, two environments) goes through every step: suspended, decommissioned,
then removed for good; genomics-lab's file is removed while it is active (refused: protected
data; nothing of it may stay live outside the state). The checks read the live cluster and the
state after each `up`, never the program's own opinion of what happened.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tools.realrun.kube import dynamic

if TYPE_CHECKING:
    from tools.realrun.checks import Run

TENANT = "acme"


def _namespaces(run: Run) -> dict[str, dict[str, Any]]:
    api = dynamic(run.api).resources.get(api_version="v1", kind="Namespace")
    items = api.get(label_selector=f"tenancy.io/tenant={TENANT}").to_dict()["items"]
    return {n["metadata"]["name"]: n for n in items}


def _state_urns(run: Run) -> list[str]:
    exported = run.stack.export_stack().deployment or {}
    return [r["urn"] for r in exported.get("resources", [])]


def _state_objects(run: Run) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """The namespaced Kubernetes objects in the state: `(apiVersion, kind)` to `(namespace, name)`s.
    Every kind the program renders (from the URNs' types, `kubernetes:<group>/<version>:<Kind>`)
    appears, even with no object of it."""
    exported = run.stack.export_stack().deployment or {}
    found: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for resource in exported.get("resources", []):
        kind = object_kind(str(resource.get("type", "")))
        if kind is None:
            continue
        objects = found.setdefault(kind, set())
        for fields in (resource.get("outputs"), resource.get("inputs")):
            metadata = fields.get("metadata") if isinstance(fields, dict) else None
            if isinstance(metadata, dict) and metadata.get("namespace") and metadata.get("name"):
                objects.add((str(metadata["namespace"]), str(metadata["name"])))
                break
    return found


def object_kind(type_token: str) -> tuple[str, str] | None:
    """`(apiVersion, kind)` of a Pulumi Kubernetes type token; None for what is no API object
    (providers, Helm releases, components)."""
    package, _, rest = type_token.partition(":")
    group_version, _, kind = rest.partition(":")
    group, _, version = group_version.partition("/")
    if package != "kubernetes" or not version or not kind or group in ("helm.sh", "yaml", "kustomize"):
        return None
    return (version if group == "core" else f"{group}/{version}", kind)


def untracked(run: Run, tenant: str, kinds: set[tuple[str, str]]) -> list[str]:
    """The tenant's objects (labelled `tenancy.io/tenant`) of the program's namespaced `kinds` that
    are live but not in the state: what a later `up` would create again and Server-Side Apply refuse."""
    state = _state_objects(run)
    found = []
    for api_version, kind in sorted(kinds):
        resource = dynamic(run.api).resources.get(api_version=api_version, kind=kind)
        if not resource.namespaced:
            continue
        for item in resource.get(label_selector=f"tenancy.io/tenant={tenant}").to_dict()["items"]:
            key = (item["metadata"]["namespace"], item["metadata"]["name"])
            if key not in state.get((api_version, kind), set()):
                found.append(f"{kind} {key[0]}/{key[1]}")
    return found


def _wait_namespaces_gone(run: Run, names: set[str], timeout: float = 120) -> set[str]:
    """Namespaces still present after `timeout` (the namespace controller empties and deletes them)."""
    deadline = time.monotonic() + timeout
    left = names
    while time.monotonic() < deadline:
        left = names & set(_namespaces(run))
        if not left:
            break
        time.sleep(2)
    return left


def _live_secrets(run: Run, tenant: str) -> list[str]:
    """The tenant's Secrets, as live on the cluster."""
    resource = dynamic(run.api).resources.get(api_version="v1", kind="Secret")
    items = resource.get(label_selector=f"tenancy.io/tenant={tenant}").to_dict()["items"]
    return sorted(f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in items)


def _data_secret_names(run: Run) -> set[str]:
    """The Secrets that are acme's data: its databases' credentials and its own secrets (its copies
    of the platform's shared secrets are delivery, and go with the namespace's other deliveries)."""
    import yaml

    from components.model.tenant_file.data import credentials_secret_name

    document = (
        yaml.safe_load((run.tenants / f"{TENANT}.yaml").read_text())
        if (run.tenants / f"{TENANT}.yaml").exists()
        else {}
    )
    names = {credentials_secret_name(d["name"]) for d in document.get("databases", [])}
    return names | {secret["name"] for secret in document.get("secrets", [])}


def _live_data(run: Run, names: set[str]) -> list[str]:
    """acme's database objects and data Secrets (`names`), as live on the cluster."""
    found = []
    kinds = (("postgresql.cnpg.io/v1", "Cluster"), ("k8s.mariadb.com/v1alpha1", "MariaDB"), ("v1", "Secret"))
    for api_version, kind in kinds:
        resource = dynamic(run.api).resources.get(api_version=api_version, kind=kind)
        for item in resource.get(label_selector=f"tenancy.io/tenant={TENANT}").to_dict()["items"]:
            if kind == "Secret" and item["metadata"]["name"] not in names:
                continue
            found.append(f"{kind} {item['metadata']['namespace']}/{item['metadata']['name']}")
    return sorted(found)


def _error(error: str) -> str:
    return f"; {error[-800:]}" if error else ""


def run_lifecycle(run: Run, while_suspended: Callable[[], object] | None = None) -> None:
    """The lifecycle steps in order; `while_suspended` runs while acme is suspended (the data
    plane measures the suspended namespaces there)."""
    report = run.report
    original = (run.tenants / f"{TENANT}.yaml").read_text()
    data_names = _data_secret_names(run)
    data_before = _live_data(run, data_names)

    # Suspended: namespaces labelled, traffic and new workloads stopped, data kept.
    run.edit_tenant(TENANT, lambda t: t.update({"lifecycle": "suspended"}))
    result, _, error = run.up("suspend")
    labelled = [
        n
        for n, ns in _namespaces(run).items()
        if ns["metadata"].get("labels", {}).get("tenancy.io/suspended") == "true"
    ]
    report.check(
        "suspension labels the namespaces and keeps the data",
        result is not None and bool(labelled) and _live_data(run, data_names) == data_before,
        f"suspended namespaces {sorted(labelled)}; data objects {len(data_before)}"
        + (f"; {error[-800:]}" if error else ""),
    )
    if while_suspended is not None and result is not None:
        while_suspended()
    (run.tenants / f"{TENANT}.yaml").write_text(original)
    result, _, error = run.up("unsuspend")
    report.check("unsuspension converges", result is not None, error[-800:])

    # Decommissioned: the namespaces without data go; the data is released and stays live.
    today = datetime.date.today().isoformat()
    run.edit_tenant(TENANT, lambda t: t.update({"lifecycle": "decommissioned", "decommissionedOn": today}))
    before = set(_namespaces(run))
    result, _, error = run.up("decommission")
    outputs = run.stack.outputs()
    tenant_output = outputs["tenants"].value.get(TENANT, {}) if "tenants" in outputs else {}
    kept = set(_namespaces(run))
    report.check(
        "decommissioning releases the data and keeps it live",
        result is not None
        and _live_data(run, data_names) == data_before
        and tenant_output.get("lifecycle") == "decommissioned",
        f"namespaces {len(before)} -> {len(kept)} kept {sorted(kept)}; "
        f"data objects live {len(_live_data(run, data_names))}"
        f"/{len(data_before)}; retained {json.dumps(tenant_output.get('retained', {}))[:300]}"
        + (f"; {error[-800:]}" if error else ""),
    )

    # Removing the decommissioned tenant's file: released resources leave the state, stay live.
    (run.tenants / f"{TENANT}.yaml").unlink()
    result, _, error = run.up("remove-decommissioned")
    in_state = [u for u in _state_urns(run) if f"::{TENANT}" in u or f"${TENANT}" in u]
    report.check(
        "removing the decommissioned file leaves the data live and out of the state",
        result is not None and not in_state and _live_data(run, data_names) == data_before,
        f"{len(in_state)} {TENANT} resources left in the state; "
        f"data objects live {len(_live_data(run, data_names))}/{len(data_before)}" + _error(error),
    )
    # acme's file stays away: its name is released (re-using it is refused while its data may live).

    # Removing the file of an active tenant with protected data (genomics-lab's external secret):
    # the engine refuses to delete the protected resources and the update fails there. What it did
    # delete before is gone from the cluster and the state alike; nothing stays live outside the
    # state (objects `deleted_with` the protected namespace did, before: docs/real-run.md).
    other = "genomics-lab"
    original = (run.tenants / f"{other}.yaml").read_text()
    protected = _live_secrets(run, other)
    kinds = set(_state_objects(run))
    (run.tenants / f"{other}.yaml").unlink()
    result, _, error = run.up("remove-active")
    refused = result is None and "protected" in error
    orphans = untracked(run, other, kinds)
    report.check(
        "removing an active tenant's file fails at its protected data",
        refused and _live_secrets(run, other) == protected and not orphans,
        (
            "refused: " + next((line.strip() for line in error.splitlines() if "protected" in line), "")[:300]
            if refused
            else f"not refused ({error[-500:]})"
        )
        + f"; {len(orphans)} live objects missing from the state {orphans[:12]}",
    )
    (run.tenants / f"{other}.yaml").write_text(original)
    result, _, error = run.up("restore")
    # Before InNamespace (components/clouds/base.py) this failed: the objects dropped from the state
    # were created again and Server-Side Apply refused them (docs/real-run.md#what-the-real-run-found).
    report.check("restoring the file converges again", result is not None, _error(error)[:400])
