"""Tenant files and runs shared by the virtual cluster tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from components.vcluster.previous import DEFAULT_ORGANIZATION
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import PREVIOUS_STACK_OUTPUTS, PROJECT_NAME, ProgramRun, stack_config

HARD = "tenant-hard-dev"
HARD_PROD = "tenant-hard-prod"
SOFT = "tenant-soft-dev"
HARD_ADMIN = "idp:hard-admins"


def hard_tenant(**fields: Any) -> dict[str, Any]:
    """A tenant whose environments are virtual clusters, on the research pool, with GitOps."""
    document = tenant_document(
        "hard",
        access={"admin": [HARD_ADMIN], "viewer": ["idp:hard-members"]},
        nodePool="research",
        isolation="virtual-cluster",
        gitops={"url": "https://git.example.org/hard/clusters.git", "refs": {"prod": {"tag": "v1.0.0"}}},
    )
    document.update(fields)
    return document


def soft_tenant() -> dict[str, Any]:
    return tenant_document("soft", access={"admin": ["idp:soft-admins"]}, nodePool="research")


def run_tenants(tmp_path: Path, *documents: dict[str, Any], stack: str = "dev", **config: str) -> ProgramRun:
    return plan(stack, write_tenants(tmp_path / "tenants", *documents), **config)


@contextmanager
def previous_outputs(stack: str, outputs: dict[str, Any]) -> Iterator[None]:
    """What the engine answers as this stack's last deployed outputs, for one test."""
    name = f"{DEFAULT_ORGANIZATION}/{PROJECT_NAME}/{stack}"
    PREVIOUS_STACK_OUTPUTS[name] = outputs
    try:
        yield
    finally:
        del PREVIOUS_STACK_OUTPUTS[name]


def stack_virtual_clusters(stack: str, **changes: Any) -> str:
    """The stack's own `tenancy:virtualClusters` (JSON) with `changes` on top, for `plan(..., virtualClusters=...)`."""
    config, _ = stack_config(stack)
    return json.dumps({**json.loads(config.get("tenancy:virtualClusters", "{}")), **changes})
