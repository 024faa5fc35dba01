"""Test helpers: run the real program on tenant files a test writes, and read what it rendered."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from tools.plan.harness import MOCK_SECRET_PREFIX, PROJECT_ROOT, ProgramRun, RecordedResource, run_stack
from tools.plan.run import is_kubernetes_object, manifest, write_plan

EXAMPLE_TENANTS = PROJECT_ROOT / "tenants"
# The day tests' decommissioned tenants were decommissioned, unless a test says otherwise.
DECOMMISSIONED_ON = "2026-01-15"


def tenant_document(name: str, **fields: Any) -> dict[str, Any]:
    """A minimal valid tenant file as a dict; keyword arguments override or add fields."""
    document: dict[str, Any] = {
        "name": name,
        "displayName": name.title(),
        "contact": f"team@{name}.example.org",
        "costCenter": f"cc-{name}",
    }
    document.update(fields)
    if document.get("lifecycle") == "decommissioned":
        # A decommissioned tenant file must say since when (components/model/tenant_file/consistency.py).
        document.setdefault("decommissionedOn", DECOMMISSIONED_ON)
    return document


def write_tenants(directory: Path, *documents: dict[str, Any], raw: dict[str, str] | None = None) -> Path:
    """Write tenant documents as `<name>.yaml` (and raw texts by file name) into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    for document in documents:
        (directory / f"{document['name']}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    for file_name, text in (raw or {}).items():
        (directory / file_name).write_text(text, encoding="utf-8")
    return directory


def plan(stack: str = "dev", tenants_dir: Path | None = None, **config: str) -> ProgramRun:
    """Run the program for `stack`; keyword arguments set `tenancy:<key>` config values."""
    overrides = {f"tenancy:{key}": value for key, value in config.items()}
    if tenants_dir is not None:
        overrides["tenancy:tenantsDir"] = str(tenants_dir)
    return run_stack(stack, overrides)


def kubernetes_objects(run: ProgramRun) -> list[dict[str, Any]]:
    return [manifest(r) for r in run.resources if is_kubernetes_object(r)]


def objects_of_kind(run: ProgramRun, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
    return [
        obj
        for obj in kubernetes_objects(run)
        if obj["kind"] == kind and (namespace is None or obj["metadata"].get("namespace") == namespace)
    ]


def resources_of_tenant(run: ProgramRun, tenant: str) -> list[RecordedResource]:
    return [r for r in run.resources if run.tenant_of(r) == tenant]


def assert_no_plain_secret(run: ProgramRun, directory: Path) -> None:
    """No generated credential appears in plain text in the written plan or the stack outputs
    (the mocks start every generated value with MOCK_SECRET_PREFIX)."""
    write_plan(run, directory)
    for path in directory.rglob("*"):
        if path.is_file():
            assert MOCK_SECRET_PREFIX not in path.read_text(encoding="utf-8"), path
    assert MOCK_SECRET_PREFIX not in json.dumps(run.outputs)


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (a reaped child no longer does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
