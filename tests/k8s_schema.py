"""Validate rendered objects: built-in kinds against the official OpenAPI schema of the configured
Kubernetes version (kubernetes-validate, strict: unknown fields fail), custom resources against the
upstream CRDs in ../shared/crds (override with TENANCY_CRDS_DIR).

Both are loaded once per process: the suite validates thousands of objects, and reading the
schemas again for each one (6 MB of CRD YAML, a definitions file of several MB per call inside
kubernetes-validate) was most of what these checks cost.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from kubernetes_validate import utils as kubernetes_validate_utils

from components.model.core.yaml_text import load_yaml
from tools.plan.harness import PROJECT_ROOT

CRDS_DIR = Path(os.environ.get("TENANCY_CRDS_DIR", PROJECT_ROOT.parent / "shared" / "crds"))

# kubernetes-validate parses the kind's schema and the version's `_definitions.json` (several MB)
# from its package data on every `validate` call; the files never change, so each is parsed once.
# Its validation itself (version choice, strict schemas, errors) stays the library's own.
if not hasattr(kubernetes_validate_utils.schema_contents, "cache_info"):
    kubernetes_validate_utils.schema_contents = functools.cache(kubernetes_validate_utils.schema_contents)


def validate_builtin(obj: dict[str, Any], kubernetes_version: str) -> None:
    """Raise kubernetes_validate.ValidationError if `obj` violates the official schema."""
    kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)


@functools.cache
def crd_documents() -> tuple[dict[str, Any], ...]:
    """Every upstream CRD document in CRDS_DIR, by file name; parsed once (libyaml) per process."""
    return tuple(load_yaml(path.read_text(encoding="utf-8")) for path in sorted(CRDS_DIR.glob("*.yaml")))


@functools.cache
def _crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    schemas: dict[tuple[str, str], dict[str, Any]] = {}
    for crd in crd_documents():
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
    if key not in _crd_schemas():
        raise LookupError(f"no CRD for {key} in {CRDS_DIR}")
    error = jsonschema.exceptions.best_match(_crd_validator(key).iter_errors(obj))
    if error is not None:
        raise error


@functools.cache
def _crd_validator(key: tuple[str, str]) -> Any:
    """The Draft 7 validator of a CRD's schema, the schema itself checked once against the
    metaschema (what `jsonschema.validate` does on every call)."""
    schema = _crd_schemas()[key]
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


# SIG projects whose APIs are CRDs, though their groups end in `.k8s.io` (validated against ../shared/crds).
CRD_GROUPS = frozenset({"gateway.networking.k8s.io", "policy.networking.k8s.io"})


def is_builtin(obj: dict[str, Any]) -> bool:
    group = obj["apiVersion"].rpartition("/")[0]
    if group in CRD_GROUPS:
        return False
    return group == "" or group.endswith(".k8s.io") or group in {"apps", "batch", "autoscaling", "policy"}
