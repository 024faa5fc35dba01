"""How secrets reach a tenant namespace on a local cluster: they are written there.

Databases' credentials and tenant secrets are Kubernetes Secrets in the namespace already (no
cloud secret manager, no ESO), so only shared secrets need delivering: a copy of the platform
team's Secret, read once per stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.clouds.base import DeliveryTarget
from components.model.settings.data import DataSettings, SharedSecret


def shared_sources(
    data: DataSettings, opts: pulumi.ResourceOptions, ids: pulumi.Output[Any] | None = None
) -> dict[str, pulumi.Output[Any]]:
    """The shared secrets' source data: read once per stack from the namespace the platform team
    keeps them in. `ids` (name -> Secret id) are the platform's placeholders where it created them
    (installs.py): unknown until they exist, so a first preview skips the read instead of failing."""

    def source_id(name: str, remote_key: str) -> pulumi.Input[str]:
        default = f"{data.shared_secrets_namespace}/{remote_key}"
        return default if ids is None else ids.apply(lambda known: (known or {}).get(name, default))

    return {
        name: k8s.core.v1.Secret.get(f"shared-secret-{name}", source_id(name, shared.remote_key), opts=opts).data
        for name, shared in sorted(data.shared_secrets.items())
    }


@dataclass(frozen=True)
class LocalDelivery:
    """`SecretDelivery` on a local cluster: nothing to deliver but copies of shared secrets."""

    shared_secrets: Mapping[str, SharedSecret]
    sources: Mapping[str, pulumi.Output[Any]]

    def workload_account(self, target: DeliveryTarget, *, stores: bool) -> pulumi.Resource | None:
        # No cloud identity to carry: pods read their own namespace's Secrets.
        return None

    def database(self, target: DeliveryTarget, *, prefix: str, secret_name: str, credentials: str) -> None:
        # The credentials Secret was written into the namespace with the database.
        return None

    def secret(self, target: DeliveryTarget, *, prefix: str, name: str, key: str, remote: str) -> None:
        # The Secret was written into the namespace when it was stored.
        return None

    def shared_secret(self, target: DeliveryTarget, *, name: str) -> None:
        # A copy of the platform's Secret; its data stays a Pulumi secret end to end.
        k8s.core.v1.Secret(
            f"{target.prefix}-shared-{name}",
            metadata={"name": name, "namespace": target.namespace, "labels": target.labels},
            type=self.shared_secrets[name].type,
            data=pulumi.Output.secret(self.sources[name]),
            opts=target.opts,
        )
