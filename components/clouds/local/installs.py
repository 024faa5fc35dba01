"""Placeholder sources for shared secrets on a local cluster (`tenancy:installs.sharedSecretPlaceholders`).

A local cluster keeps shared secrets as Secrets in `tenancy:data.sharedSecretsNamespace`, which the
plan reads once per stack (delivery.py). On a fresh kind cluster nobody has created them yet, so
the first `up` would fail at the read. With placeholders on, the platform creates each source
Secret with harmless content: an empty registry login for `kubernetes.io/dockerconfigjson`, a
random value otherwise. Their content is the platform team's: Pulumi ignores later changes to it.

The read takes the created Secret's id, which is unknown until it exists: a first preview skips
the read instead of failing on a Secret that is about to be created.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import Guard, InNamespace
from components.clouds.local.passwords import program_password
from components.model.core.labels import platform_labels
from components.model.settings.data import DataSettings

DOCKER_CONFIG = "kubernetes.io/dockerconfigjson"
# A valid registry login that logs in nowhere: what the API server accepts for the type.
EMPTY_DOCKER_CONFIG = json.dumps({"auths": {}})


def placeholder_secrets(data: DataSettings, guard: Guard) -> dict[str, pulumi.Output[str]]:
    """Create the namespace and a placeholder source Secret per shared secret; their ids by name."""
    if not data.shared_secrets:
        return {}
    namespace = k8s.core.v1.Namespace(
        "shared-secrets-namespace",
        metadata={"name": data.shared_secrets_namespace, "labels": platform_labels()},
        # It holds the platform team's real credentials once they replace the placeholders.
        opts=guard.data(),
    )
    ids: dict[str, pulumi.Output[str]] = {}
    for name, shared in sorted(data.shared_secrets.items()):
        content: pulumi.Input[str] = EMPTY_DOCKER_CONFIG if shared.type == DOCKER_CONFIG else program_password(32)
        secret = k8s.core.v1.Secret(
            f"shared-secret-{name}-placeholder",
            metadata={
                "name": shared.remote_key,
                "namespace": data.shared_secrets_namespace,
                "labels": platform_labels(),
            },
            type=shared.type,
            string_data={shared.key: content},
            opts=guard.data(
                # It holds data: never deleted with the namespace, its own delete (InNamespace).
                **InNamespace(namespace, holds_data=True).options(),
                # The platform team replaces the content out of band (docs/runbooks/kind.md).
                ignore_changes=["data", "stringData"],
            ),
        )
        ids[name] = secret.id
    return ids
