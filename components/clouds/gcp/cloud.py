"""GCP: Cloud SQL, Secret Manager and KMS, workload identity, ESO delivery.

`pulumi_gcp` is imported where it is used, not here: the registry imports every cloud, and the
SDK takes seconds to import on stacks that never touch GCP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.clouds import legacy_keys
from components.clouds.base import DataBackend, Guard
from components.clouds.eso import shared_secret_store
from components.clouds.gcp.checks import database_rules, shared_instance_problems
from components.clouds.gcp.cloud_sql import END_OF_STANDARD_SUPPORT, PAST_SUPPORT_REASON
from components.clouds.gcp.key_reuse import key_generation_problems
from components.clouds.gcp.key_ring import key_ring_problems
from components.clouds.gcp.network import NETWORK
from components.model.checks.capabilities import CloudCapabilities
from components.model.core.errors import Problem
from components.model.core.labels import MANAGED_BY_VALUE
from components.model.settings.clouds import GcpSettings
from components.model.settings.data import DataSettings
from components.model.settings.network import CloudNetworkFacts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

CAPABILITIES = CloudCapabilities(
    engine_versions={
        "postgres": frozenset({"13", "14", "15", "16", "17"}),
        "mysql": frozenset({"5.7", "8.0", "8.4"}),
    },
    placements=frozenset({"dedicated", "shared"}),
    shared_engines=frozenset({"postgres", "mysql"}),
    pool_kinds=("gke", "existing"),
    up_identity_hint=(
        "GKE authenticates `pulumi up` as a Google account (users: [ci@<project>.iam.gserviceaccount.com]) "
        "and never puts it in system:masters"
    ),
    storage_provisioner="pd.csi.storage.gke.io",
    pooled_placements=frozenset({"dedicated"}),
    storage_parameters={"type": "pd-balanced"},
    database_rules=database_rules,
    # FQDNNetworkPolicy, on Dataplane V2 clusters with `--enable-fqdn-network-policy`
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/fqdn-network-policies).
    egress_hosts=True,
    # MySQL 8.0 and 5.7 are in paid extended support on Cloud SQL (cloud_sql.py EXTENDED_SUPPORT).
    end_of_standard_support=END_OF_STANDARD_SUPPORT,
    past_support_reason=PAST_SUPPORT_REASON,
)


@dataclass(frozen=True)
class GcpCloud:
    """`Cloud` for GCP."""

    gcp: GcpSettings
    cluster_name: str
    data: DataSettings
    name: str = "gcp"
    capabilities: CloudCapabilities = CAPABILITIES
    # Identity endpoints and data operators the network model opens (network.py beside this file).
    network: CloudNetworkFacts = NETWORK

    def provider(self) -> pulumi.ProviderResource | None:
        import pulumi_gcp

        # The platform's labels on everything it creates, whatever the resource forgets.
        return pulumi_gcp.Provider(
            "gcp",
            project=self.gcp.project,
            region=self.gcp.region,
            default_labels={"managed-by": MANAGED_BY_VALUE},
        )

    def platform_data(
        self, *, guard: Guard, labels: dict[str, str], shared_namespaces: Sequence[str]
    ) -> dict[str, Any]:
        from components.clouds.gcp import platform

        values = platform.platform(self.gcp, self.data, labels, guard)
        shared_secret_store(
            self.data.shared_secrets,
            guard,
            shared_namespaces,
            lambda: platform.shared_store_provider(self.gcp, self.cluster_name, self.data, guard),
        )
        return values

    def data_backend(self, *, values: pulumi.Output[Any] | dict[str, Any], opts: pulumi.ResourceOptions) -> DataBackend:
        from components.clouds.gcp import data

        return data.GcpData(self.gcp, self.cluster_name, self.data, data.GcpPlatform(values), opts)

    def database_problems(self) -> list[str]:
        if self.gcp.network is None:
            return ["Cloud SQL needs tenancy:gcp.network (private IP only, no public address)"]
        return []

    def stack_problems(self, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
        # A stack deployed before keys were per environment must say where each old key goes; the
        # platform's key ring is never the ring of the stack's state key (key_ring.py).
        # Shared instances get the edition, machine type and version Cloud SQL takes (checks.py).
        return (
            legacy_keys.unlisted_problems(specs, settings)
            + key_ring_problems(self.gcp, settings.source)
            + key_generation_problems(self.gcp, specs, settings)
            + shared_instance_problems(settings)
        )
