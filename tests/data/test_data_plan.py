"""Tenant data on the three clouds: protection, lifecycle, no plain-text secrets, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.model.core.errors import ConfigurationError
from tests.k8s_schema import validate_custom
from tests.support import assert_no_plain_secret, kubernetes_objects, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

DATA_TYPES = (
    "gcp:sql/databaseInstance",
    "gcp:kms/cryptoKey:CryptoKey",
    "gcp:secretmanager/secret:",
    "aws:rds/instance",
    "aws:kms/key",
    "aws:secretsmanager/secret:",
    "postgresql.cnpg.io/v1:Cluster",
    "k8s.mariadb.com",
)


def _tenant(lifecycle: str = "active") -> dict[str, object]:
    return tenant_document(
        "acme",
        lifecycle=lifecycle,
        databases=[{"name": "orders", "engine": "postgres", "version": "16"}],
        secrets=[{"name": "session-key", "source": "generated"}],
    )


@pytest.fixture(scope="module", params=["dev", "prod", "prod-aws"])
def cloud_plan(request: pytest.FixtureRequest) -> ProgramRun:
    return plan(request.param)


def _data(run: ProgramRun) -> list[object]:
    """Data resources the program manages. Reads (`.get()`, e.g. the platform team's out-of-band GCP
    shared secrets) are left out, as the policy pack leaves them out (policy_pack/offline.py): the
    engine takes no `protect` for a read, and dropping one from the program never deletes it."""
    return [r for r in run.resources if any(token in r.type for token in DATA_TYPES) and not r.read]


def test_data_resources_are_protected(cloud_plan: ProgramRun) -> None:
    data = _data(cloud_plan)
    assert data
    assert all(r.protect and not r.retain_on_delete for r in data)  # type: ignore[attr-defined]


def test_data_typed_reads_create_nothing(cloud_plan: ProgramRun) -> None:
    # What _data leaves out is only read, by id: no inputs, so nothing of it is created or changed.
    reads = [r for r in cloud_plan.resources if any(token in r.type for token in DATA_TYPES) and r.read]
    assert all(r.inputs == {} and not r.retain_on_delete for r in reads), [r.name for r in reads]


def test_no_secret_in_plain_text(cloud_plan: ProgramRun, tmp_path: Path) -> None:
    assert_no_plain_secret(cloud_plan, tmp_path)
    if cloud_plan.stack != "dev":
        assert any("randomPassword" in r.type for r in cloud_plan.resources)
        return
    # Local: no random provider; each password is a Pulumi secret written once into its Secret
    # (docs/adr/0040-local-passwords-without-a-provider.md), never rotated by a later run.
    assert not any(r.type.startswith("random:") for r in cloud_plan.resources)
    holders = [
        r
        for r in cloud_plan.resources
        if r.type == "kubernetes:core/v1:Secret" and "password" in (r.inputs.get("data") or {})
    ]
    assert holders
    for secret in holders:
        # Through `data`: the provider folds `stringData` into `data` in the inputs it records, so
        # a `stringData` path would never match and every run would replace the Secret.
        assert secret.inputs["data"]["password"] == "[secret]", secret.urn
        assert "password" not in (secret.inputs.get("stringData") or {}), secret.urn
        assert 'data["password"]' in secret.ignore_changes, secret.urn


def test_custom_resources_validate(cloud_plan: ProgramRun) -> None:
    custom = [
        o
        for o in kubernetes_objects(cloud_plan)
        if o["apiVersion"]
        .split("/")[0]
        .endswith(("external-secrets.io", "postgresql.cnpg.io/v1:Cluster", "k8s.mariadb.com"))
    ]
    assert custom
    for obj in custom:
        validate_custom(obj)


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_decommissioned_releases_data(stack: str, tmp_path: Path) -> None:
    run = plan(stack, write_tenants(tmp_path, _tenant("decommissioned")))
    data = [r for r in _data(run) if run.tenant_of(r) == "acme"]  # type: ignore[arg-type]
    assert data
    assert all(r.retain_on_delete and not r.protect for r in data)  # type: ignore[attr-defined]


def test_local_namespace_with_data_is_protected(tmp_path: Path) -> None:
    run = plan("dev", write_tenants(tmp_path, _tenant()))
    # The Gateway's namespace holds no tenant data (tests/edge/).
    namespaces = [r for r in run.resources if r.type == "kubernetes:core/v1:Namespace" and "PlatformEdge" not in r.urn]
    assert namespaces and all(r.protect for r in namespaces)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"sharedSecrets": ["nope"]}, "'nope' is not a shared secret of this stack"),
        (
            {"databases": [{"name": "a", "engine": "postgres", "version": "9.6"}]},
            "postgres 9.6 is not available on local",
        ),
        (
            {
                "databases": [{"name": "orders", "engine": "postgres", "version": "16"}],
                "secrets": [{"name": "db-orders", "source": "generated"}],
            },
            "clashes with the credentials Secret of database 'orders'",
        ),
        (
            {
                "databases": [
                    {"name": "a", "engine": "postgres", "version": "16"},
                    {"name": "a", "engine": "mysql", "version": "8.0"},
                ]
            },
            "names must be unique; repeated: a",
        ),
    ],
)
def test_bad_data_input(fields: dict[str, object], message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        plan("dev", write_tenants(tmp_path, tenant_document("acme", **fields)))
    assert message in str(error.value)
