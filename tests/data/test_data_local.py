"""Local external secrets: the Secret exists for workloads to mount, its team fills it in, and
Pulumi neither writes nor reverts its data."""

from __future__ import annotations

from pathlib import Path

from tests.k8s_schema import validate_builtin
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, RecordedResource

EXTERNAL = {"name": "payment-api-key", "source": "external", "key": "api-key"}


def _secret(run: ProgramRun, name: str) -> RecordedResource:
    matches = [r for r in run.of_type("kubernetes:core/v1:Secret") if r.name == name]
    assert len(matches) == 1, [r.name for r in run.of_type("kubernetes:core/v1:Secret")]
    return matches[0]


def test_external_secret_is_created_empty_with_how_to_fill_it(tmp_path: Path) -> None:
    run = plan("dev", write_tenants(tmp_path, tenant_document("shop", secrets=[EXTERNAL])))
    for environment in ("dev", "prod"):
        secret = _secret(run, f"shop-{environment}-secret-payment-api-key-secret")
        namespace = f"tenant-shop-{environment}"
        assert "data" not in secret.inputs and "stringData" not in secret.inputs
        assert secret.inputs["type"] == "Opaque"
        metadata = secret.inputs["metadata"]
        assert (metadata["name"], metadata["namespace"]) == ("payment-api-key", namespace)
        assert metadata["annotations"] == {
            "tenancy.io/fill-with": f"kubectl -n {namespace} patch secret payment-api-key "
            """-p '{"stringData":{"api-key":"<value>"}}'"""
        }
        # What the team writes is never reverted, and the Secret is kept like other data.
        assert secret.ignore_changes == ["data", "stringData"]
        assert secret.protect and not secret.retain_on_delete
        # Its namespace holds data (protected): the Secret gets its own delete (InNamespace).
        assert secret.deleted_with is None
        validate_builtin({"apiVersion": "v1", "kind": "Secret", **secret.inputs}, "1.36")
    assert run.outputs["tenants"]["shop"]["data"]["secrets"] == {
        "dev": ["payment-api-key"],
        "prod": ["payment-api-key"],
    }


def test_external_secret_is_released_with_a_decommissioned_tenant(tmp_path: Path) -> None:
    tenant = tenant_document("shop", lifecycle="decommissioned", secrets=[EXTERNAL])
    run = plan("dev", write_tenants(tmp_path, tenant))
    secret = _secret(run, "shop-prod-secret-payment-api-key-secret")
    assert secret.retain_on_delete and not secret.protect


def test_generated_secret_is_written_once_through_data(tmp_path: Path) -> None:
    # The local cloud draws the value in the program (ADR 0040): the first `up` writes it and later
    # runs never change it; through `data`, since the provider folds `stringData` into `data` in the
    # inputs it records and a `stringData` path would never match (found by the real run).
    tenant = tenant_document("shop", secrets=[{"name": "session-key", "source": "generated"}])
    secret = _secret(plan("dev", write_tenants(tmp_path, tenant)), "shop-prod-secret-session-key-secret")
    assert secret.inputs["data"] == {"value": "[secret]"} and "stringData" not in secret.inputs
    assert secret.ignore_changes == ['data["value"]']
