"""Validate rendered objects: built-in kinds against the official OpenAPI schema of the configured
Kubernetes version (kubernetes-validate, strict: unknown fields fail), custom resources against the
upstream CRDs in ../shared/crds (override with TENANCY_CRDS_DIR)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tools.plan.harness import PROJECT_ROOT

CRDS_DIR = Path(os.environ.get("TENANCY_CRDS_DIR", PROJECT_ROOT.parent / "shared" / "crds"))


def validate_builtin(obj: dict[str, Any], kubernetes_version: str) -> None:
    """Raise kubernetes_validate.ValidationError if `obj` violates the official schema."""
    kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)


@functools.cache
def _crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    schemas: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(CRDS_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text(encoding="utf-8"))
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schemas[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return schemas


def require_crds() -> None:
    """Skip, saying why, where the upstream CRDs are not beside the project."""
    if not CRDS_DIR.is_dir() or not any(CRDS_DIR.glob("*.yaml")):
        pytest.skip(f"upstream CRDs not found at {CRDS_DIR} (set TENANCY_CRDS_DIR)")


def has_crd(obj: dict[str, Any]) -> bool:
    return (obj["apiVersion"], obj["kind"]) in _crd_schemas()


def validate_custom(obj: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError if `obj` violates its upstream CRD's schema."""
    require_crds()
    key = (obj["apiVersion"], obj["kind"])
    schema = _crd_schemas().get(key)
    if schema is None:
        raise LookupError(f"no CRD for {key} in {CRDS_DIR}")
    jsonschema.validate(obj, schema, cls=jsonschema.Draft7Validator)


# SIG projects whose APIs are CRDs, though their groups end in `.k8s.io` (validated against ../shared/crds).
CRD_GROUPS = frozenset({"gateway.networking.k8s.io", "policy.networking.k8s.io"})


def is_builtin(obj: dict[str, Any]) -> bool:
    group = obj["apiVersion"].rpartition("/")[0]
    if group in CRD_GROUPS:
        return False
    return group == "" or group.endswith(".k8s.io") or group in {"apps", "batch", "autoscaling", "policy"}
