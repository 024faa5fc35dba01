"""The CI identities' grants on the Pulumi state, per backend: the preview's read, never write.

The preview identity runs for every pull request from a branch of the repository. On a DIY
backend a preview takes no lock and writes nothing (pulumi/pulumi pkg/backend/diy/backend.go:
`Preview` calls no `Lock`; `apply` persists only when not a dry run), so reading the state objects
and unwrapping the data key is all it needs; on Pulumi Cloud, "Stack Read ... Allows for running
previews" (Pulumi Cloud RBAC, permission sets). The grants bootstrap makes come from this data
(tests/scripts/test_bootstrap_recovery.py checks the commands it runs).
"""

from __future__ import annotations

import pytest

from tools.ci import state_access as access

BUCKET = "acme-state"


def _s3_actions(role: str) -> set[str]:
    return {action for statement in access.s3_state_policy(BUCKET, role)["Statement"] for action in statement["Action"]}


def grants(backend: str, role: str) -> set[str]:
    """Every permission `role` holds on the state of `backend` (gs, s3, pulumi-cloud)."""
    if backend == "gs":
        return set(access.GCS_ROLE_PERMISSIONS[access.GCS_ROLES[role]]) | {access.GCP_KEY_ROLES[role]}
    if backend == "s3":
        return _s3_actions(role) | set(access.AWS_KEY_ACTIONS[role])
    return set(access.PULUMI_CLOUD_SCOPES[access.PULUMI_CLOUD_PERMISSION_SETS[role]])


BACKENDS = ["gs", "s3", "pulumi-cloud"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_preview_identity_cannot_write_the_state(backend: str) -> None:
    assert not grants(backend, "preview") & access.STATE_WRITES
    assert "roles/cloudkms.cryptoKeyEncrypterDecrypter" not in grants(backend, "preview")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_preview_identity_can_read_what_a_preview_reads(backend: str) -> None:
    needs = {
        "gs": {"storage.objects.get", "storage.objects.list", "roles/cloudkms.cryptoKeyDecrypter"},
        "s3": {"s3:GetObject", "s3:ListBucket", "kms:Decrypt"},
        "pulumi-cloud": {"stack:read", "stack:decrypt"},
    }[backend]
    assert needs <= grants(backend, "preview")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_deploy_identity_can_write_it(backend: str) -> None:
    # An update takes the lock and writes checkpoints and history: the writes the preview lacks.
    writes = {
        "gs": {"storage.objects.create", "storage.objects.delete"},
        "s3": {"s3:PutObject", "s3:DeleteObject", "kms:GenerateDataKey"},
        "pulumi-cloud": {"stack:write", "stack:cancel_update"},
    }[backend]
    assert writes <= grants(backend, "deploy")


def test_the_s3_policy_scopes_objects_to_the_bucket() -> None:
    statements = access.s3_state_policy(BUCKET, "preview")["Statement"]
    assert [s["Resource"] for s in statements] == [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"]


def test_the_check_sees_a_write() -> None:
    # objectAdmin, what the preview identity had before: the test above would fail on it.
    assert set(access.GCS_ROLE_PERMISSIONS["roles/storage.objectAdmin"]) & access.STATE_WRITES
