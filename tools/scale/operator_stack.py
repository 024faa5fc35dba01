"""Pulumi Kubernetes Operator manifests for a split stack: everything `kubectl apply` needs to run it.

`tenancy shards write` calls `operator_manifest` for deploy/operator/<stack>.yaml. The file
holds, in apply order: the workspace's ServiceAccount (with the cloud identity it acts as on GKE or
EKS), its RBAC, and one `Stack` (pulumi.com/v1, operator v2) per stack of the split. Each Stack
names its state backend, the base stack's secrets provider, how the workspace authenticates to git,
and a memory request sized from the benchmark (docs/scale.md), so the operator can run it as is
once the operator and the two Secrets named below exist (docs/scale.md, "Run the shards with the
operator").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.model.checks.stack import OPERATOR_NAMESPACE, OPERATOR_SERVICE_ACCOUNT
from components.model.settings.stack import ShardSettings
from tools.plan.harness import PROJECT_NAME, PROJECT_ROOT
from tools.scale.shard_budget import load_figures

RESYNC_SECONDS = 600
PULUMI_CLOUD = "https://api.pulumi.com"
# Secrets the platform team creates once in the operator's namespace (docs/scale.md).
GIT_SECRET = "tenancy-git"  # key `accessToken` (https repositories) or `sshPrivateKey` (ssh)
PULUMI_SECRET = "tenancy-pulumi"  # key `accessToken` (Pulumi Cloud), `passphrase` (passphrase stacks)

# The workspace image. Left out, the operator defaults it to `pulumi/pulumi:latest-nonroot` (its
# Workspace defaulter, SecurityProfileRestrictedDefaultImage, pulumi/pulumi-kubernetes-operator v2),
# a CLI that floats away from `requiredPulumiVersion` and CI's pin. The `-nonroot` tag of the exact
# CLI version requirements.txt pins (the SDK pin; CI installs the same CLI) keeps the three equal.
WORKSPACE_IMAGE_REPOSITORY = "pulumi/pulumi"


def pulumi_version(root: Path = PROJECT_ROOT) -> str:
    """The Pulumi version requirements.txt pins (`pulumi==X.Y.Z`), which the CLI everywhere must match."""
    for line in (root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^pulumi==([0-9]+\.[0-9]+\.[0-9]+)\b", line)
        if match:
            return match.group(1)
    raise ValueError(f"{root / 'requirements.txt'}: no pulumi==X.Y.Z pin")


def workspace_image(root: Path = PROJECT_ROOT) -> str:
    """The workspace image at the pinned CLI version, non-root (the operator's restricted profile)."""
    return f"{WORKSPACE_IMAGE_REPOSITORY}:{pulumi_version(root)}-nonroot"


# The CLI and the provider plugins run beside the program in the workspace pod; the benchmark runs
# under mocks and does not measure them, so this allowance is an estimate to check with `kubectl top`.
ENGINE_AND_PLUGINS_MIB = 1024


@dataclass(frozen=True)
class OperatorSource:
    """Where the operator fetches the program and keeps the state."""

    org: str
    repo: str
    branch: str = "main"
    # State backend URL (gs://bucket, s3://bucket?region=..., or Pulumi Cloud).
    backend: str = PULUMI_CLOUD
    # The cloud identity the workspace acts as: a Google service account e-mail (GKE workload
    # identity) or an IAM role ARN (EKS IRSA); None on local clusters or with EKS Pod Identity.
    cloud_identity: str | None = None


def program_peak_mib(resources: int) -> int:
    """The program's peak memory for a stack of `resources`, from the benchmark's measured figures
    (tools/scale/scale_figures.json, written by `tenancy bench --figures`; docs/scale.md)."""
    return round(load_figures().megabytes(resources))


def memory_request_mib(resource_budget: int) -> int:
    """What a workspace of a stack up to `resource_budget` resources asks for."""
    return program_peak_mib(resource_budget) + ENGINE_AND_PLUGINS_MIB


def service_account(cloud_identity: str | None) -> dict[str, Any]:
    """The workspace's ServiceAccount; the annotation lets it act as the cloud identity."""
    annotations: dict[str, str] = {}
    if cloud_identity and cloud_identity.startswith("arn:aws:iam::"):
        annotations["eks.amazonaws.com/role-arn"] = cloud_identity
    elif cloud_identity:
        annotations["iam.gke.io/gcp-service-account"] = cloud_identity
    metadata: dict[str, Any] = {"name": OPERATOR_SERVICE_ACCOUNT, "namespace": OPERATOR_NAMESPACE}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata}


def cluster_role_bindings() -> list[dict[str, Any]]:
    """The workspace's RBAC.

    `system:auth-delegator`: the operator v2 talks to the workspace's agent, which checks the
    operator's token with a TokenReview. `cluster-admin`: the program owns cluster-wide objects
    (admission policies, ClusterRoles, namespaces of every tenant), the same reach CI's identity
    has; the platform-owned admission rule lets it through because the shard stack files list
    this ServiceAccount in `platformIdentities` (tools/scale/shards.py).
    """
    subject = {"kind": "ServiceAccount", "name": OPERATOR_SERVICE_ACCOUNT, "namespace": OPERATOR_NAMESPACE}
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{OPERATOR_SERVICE_ACCOUNT}:{role.removeprefix('system:')}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [subject],
        }
        for role in ("system:auth-delegator", "cluster-admin")
    ]


def git_auth(repo: str) -> dict[str, Any]:
    """SSH key for ssh URLs, an access token for https ones; both from the git Secret."""
    if repo.startswith(("git@", "ssh://")):
        key = {"type": "Secret", "secret": {"name": GIT_SECRET, "key": "sshPrivateKey"}}
        return {"sshAuth": {"sshPrivateKey": key}}
    return {"accessToken": {"type": "Secret", "secret": {"name": GIT_SECRET, "key": "accessToken"}}}


def stack_object(
    name: str, source: OperatorSource, secrets_provider: str | None, memory_mib: int, prerequisite: str | None
) -> dict[str, Any]:
    """One Stack: refresh first, resync periodically so drift is corrected; never destroy on delete."""
    env_refs: dict[str, Any] = {}
    if source.backend.startswith("https://"):
        env_refs["PULUMI_ACCESS_TOKEN"] = {"type": "Secret", "secret": {"name": PULUMI_SECRET, "key": "accessToken"}}
    # No secrets provider named: Pulumi Cloud encrypts for its stacks, other backends use a passphrase.
    if secrets_provider == "passphrase" or (secrets_provider is None and not source.backend.startswith("https://")):
        env_refs["PULUMI_CONFIG_PASSPHRASE"] = {
            "type": "Secret",
            "secret": {"name": PULUMI_SECRET, "key": "passphrase"},
        }
    spec: dict[str, Any] = {
        "stack": f"{source.org}/{PROJECT_NAME}/{name}",
        "projectRepo": source.repo,
        "branch": source.branch,
        "gitAuth": git_auth(source.repo),
        "backend": source.backend,
        "refresh": True,
        "continueResyncOnCommitMatch": True,
        "resyncFrequencySeconds": RESYNC_SECONDS,
        "destroyOnFinalize": False,
        "serviceAccountName": OPERATOR_SERVICE_ACCOUNT,
        "envRefs": env_refs,
        "workspaceTemplate": {
            "spec": {
                "image": workspace_image(),
                "securityProfile": "restricted",
                "resources": {
                    "requests": {"memory": f"{memory_mib}Mi"},
                    "limits": {"memory": f"{2 * memory_mib}Mi"},
                },
            }
        },
    }
    if secrets_provider not in (None, "passphrase"):
        spec["secretsProvider"] = secrets_provider
    if prerequisite is not None:
        spec["prerequisites"] = [{"name": prerequisite, "requirement": {"succeededWithinDuration": "24h"}}]
    return {
        "apiVersion": "pulumi.com/v1",
        "kind": "Stack",
        "metadata": {"name": f"tenancy-{name}", "namespace": OPERATOR_NAMESPACE},
        "spec": spec,
    }


def operator_objects(
    stacks: list[str], source: OperatorSource, secrets_provider: str | None, resource_budget: int
) -> list[dict[str, Any]]:
    """The ServiceAccount, its bindings and a Stack per name; the first is the one the others wait for."""
    memory = memory_request_mib(resource_budget)
    platform, *shards = stacks
    objects = [service_account(source.cloud_identity), *cluster_role_bindings()]
    objects.append(stack_object(platform, source, secrets_provider, memory, None))
    objects += [stack_object(name, source, secrets_provider, memory, f"tenancy-{platform}") for name in shards]
    return objects


def operator_manifest(stack: str, base: dict[str, Any], stacks: list[str], source: OperatorSource) -> str:
    """deploy/operator/<stack>.yaml from the base stack file's document: the objects above, in order."""
    shards = ShardSettings.model_validate((base.get("config") or {}).get("tenancy:shards") or {})
    secrets_provider = base.get("secretsprovider")
    header = (
        f"# Generated by `tenancy shards write --stack {stack}`: the workspace's ServiceAccount and RBAC,\n"
        "# then one Pulumi Kubernetes Operator Stack per stack; shards wait for the platform stack.\n"
    )
    objects = operator_objects(stacks, source, secrets_provider, shards.resource_budget)
    return header + yaml.safe_dump_all(objects, sort_keys=True)
