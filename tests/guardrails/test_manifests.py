"""Every Kubernetes object the example stacks render passes the official schema of the stack's
Kubernetes version (strict: unknown fields fail), and custom resources pass their upstream CRDs."""

from __future__ import annotations

import pytest

from components.model.catalog.stack_config import parse_settings
from tests.k8s_schema import is_builtin, validate_builtin, validate_custom
from tests.support import kubernetes_objects
from tools.plan.harness import ProgramRun, stack_config


def _version(stack: str) -> str:
    return parse_settings(stack_config(stack)[0], f"Pulumi.{stack}.yaml").kubernetes_version


def test_builtin_objects_pass_the_official_schema(example_plan: ProgramRun) -> None:
    version = _version(example_plan.stack)
    objects = [o for o in kubernetes_objects(example_plan) if is_builtin(o)]
    assert len(objects) > 20
    for obj in objects:
        # Redacted Secrets keep their keys (values read "[secret]"), so they are validated as they are.
        validate_builtin(obj, version)


def test_custom_resources_pass_their_crds(example_plan: ProgramRun) -> None:
    custom = [o for o in kubernetes_objects(example_plan) if not is_builtin(o)]
    if not custom:
        pytest.skip("this plan renders no custom resources yet")
    for obj in custom:
        validate_custom(obj)


def test_the_validator_rejects_unknown_fields() -> None:
    """Guard against a validator that accepts anything (strict mode must be on)."""
    import kubernetes_validate

    bad = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spec": {"bogus": True}}
    with pytest.raises(kubernetes_validate.ValidationError):
        validate_builtin(bad, "1.34")
