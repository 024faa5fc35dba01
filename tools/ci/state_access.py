"""What each CI identity may do to the Pulumi state, per backend, as data that bootstrap grants.

The preview identity is the one every pull request from a branch of the repository runs under
(environment `<stack>-preview`, docs/adr/0031), so it must not be able to change the state:

- a DIY backend (gs://, s3://): `pulumi preview` takes no lock and writes nothing. In
  pulumi/pulumi pkg/backend/diy/backend.go `Preview` calls `backend.Preview` without `b.Lock`
  (only Update, Import, Refresh, Destroy and a non-dry-run apply lock), `apply` creates no snapshot
  manager when `opts.DryRun`, and `addToHistory`/`backupStack` run only `if !opts.DryRun`. The one
  write a DIY backend makes outside an update, `.pulumi/meta.yaml` (pkg/backend/diy/meta.go
  `ensurePulumiMeta`), happens at bootstrap's own `pulumi login`. Reading objects is enough;
- the secrets key: the stack's data key is wrapped by KMS; a preview unwraps it (decrypt) and never
  wraps a new one;
- Pulumi Cloud: a team token (pulumi/auth-actions, `urn:pulumi:token-type:access_token:team`), the
  team holding the "Stack Read" permission set, which Pulumi Cloud documents as "Basic read-only
  access to stacks. Allows for running previews." No organization token for any job.

The deploy identity gets read and write on objects (never bucket administration), encrypt and
decrypt on the key, and "Stack Write" on Pulumi Cloud.
"""

from __future__ import annotations

from typing import Any

ROLES = ("deploy", "preview")

# GCS predefined roles (https://cloud.google.com/storage/docs/access-control/iam-roles), with the
# object permissions each includes.
GCS_ROLES = {"deploy": "roles/storage.objectAdmin", "preview": "roles/storage.objectViewer"}
GCS_ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    "roles/storage.objectViewer": frozenset({"storage.objects.get", "storage.objects.list"}),
    "roles/storage.objectAdmin": frozenset(
        {
            "storage.objects.create",
            "storage.objects.delete",
            "storage.objects.get",
            "storage.objects.list",
            "storage.objects.update",
        }
    ),
}
# S3 actions on the bucket (ListBucket) and on its objects.
S3_OBJECT_ACTIONS = {
    "deploy": ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"),
    "preview": ("s3:GetObject",),
}
# KMS: Cloud KMS predefined roles and AWS KMS actions on the state key.
GCP_KEY_ROLES = {"deploy": "roles/cloudkms.cryptoKeyEncrypterDecrypter", "preview": "roles/cloudkms.cryptoKeyDecrypter"}
AWS_KEY_ACTIONS = {
    "deploy": ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"),
    "preview": ("kms:Decrypt",),
}
# Pulumi Cloud's default stack permission sets and their scopes (Pulumi Cloud docs, RBAC,
# "Permission sets"); the team named by PULUMI_CLOUD_TEAM in each GitHub environment holds one.
PULUMI_CLOUD_PERMISSION_SETS = {"deploy": "Stack Write", "preview": "Stack Read"}
_STACK_READ_SCOPES = frozenset(
    {
        "stack:read",
        "stack:export",
        "stack:encrypt",
        "stack:decrypt",
        "stack_deployment:read",
        "stack_deployment_settings:read",
        "stack_access:read",
        "stack_schedule:read",
    }
)
# Stack Write holds every scope of Stack Read and these.
PULUMI_CLOUD_SCOPES: dict[str, frozenset[str]] = {
    "Stack Read": _STACK_READ_SCOPES,
    "Stack Write": _STACK_READ_SCOPES | {"stack:import", "stack:cancel_update", "stack:write"},
}
# Writes to the state, per backend: what the preview identity must never hold.
STATE_WRITES = frozenset(
    {
        "storage.objects.create",
        "storage.objects.delete",
        "storage.objects.update",
        "s3:PutObject",
        "s3:DeleteObject",
        "kms:Encrypt",
        "kms:GenerateDataKey",
        "stack:write",
        "stack:import",
        "stack:cancel_update",
    }
)


def s3_state_policy(bucket: str, role: str) -> dict[str, Any]:
    """The inline policy on the state bucket for `role` (deploy | preview)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": f"arn:aws:s3:::{bucket}"},
            {"Effect": "Allow", "Action": list(S3_OBJECT_ACTIONS[role]), "Resource": f"arn:aws:s3:::{bucket}/*"},
        ],
    }


def aws_key_policy(key_arn: str, role: str) -> dict[str, Any]:
    """The inline policy on the state key for `role`."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": list(AWS_KEY_ACTIONS[role]), "Resource": key_arn}],
    }
