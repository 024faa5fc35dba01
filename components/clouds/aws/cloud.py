"""AWS: RDS, Secrets Manager and KMS, IAM roles per tenant (Pod Identity or IRSA), ESO delivery.

`pulumi_aws` is imported where it is used, not here: the registry imports every cloud, and the
SDK takes seconds to import on stacks that never touch AWS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.clouds import legacy_keys
from components.clouds.aws import checks, engine_rules
from components.clouds.aws.network import NETWORK
from components.clouds.base import DataBackend, Guard, PlatformValues
from components.clouds.eso import shared_secret_store
from components.model.checks.capabilities import CloudCapabilities
from components.model.core.errors import Problem
from components.model.core.labels import MANAGED_BY_VALUE
from components.model.settings.clouds import AwsSettings
from components.model.settings.data import DataSettings
from components.model.settings.network import CloudNetworkFacts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

CAPABILITIES = CloudCapabilities(
    engine_versions={
        "postgres": frozenset({"13", "14", "15", "16", "17"}),
        "mysql": frozenset({"8.0", "8.4"}),
    },
    placements=frozenset({"dedicated", "shared"}),
    shared_engines=frozenset({"postgres", "mysql"}),
    pool_kinds=("eks", "karpenter", "existing"),
    up_identity_hint=(
        "EKS authenticates `pulumi up` through an access entry of an IAM role; give that entry a "
        "Kubernetes group (groups: [tenancy-platform]) or a fixed username, since EKS puts no access-entry "
        "identity in system:masters"
    ),
    storage_provisioner="ebs.csi.aws.com",
    storage_parameters={"type": "gp3", "encrypted": "true"},
    # RDS refuses a new instance past these dates with Extended Support disabled (engine_rules.py).
    end_of_standard_support=engine_rules.END_OF_STANDARD_SUPPORT,
)


@dataclass(frozen=True)
class AwsCloud:
    """`Cloud` for AWS."""

    aws: AwsSettings
    cluster_name: str
    data: DataSettings
    name: str = "aws"
    capabilities: CloudCapabilities = CAPABILITIES
    # Identity endpoints and data operators the network model opens (network.py beside this file).
    network: CloudNetworkFacts = NETWORK

    def provider(self) -> pulumi.ProviderResource | None:
        import pulumi_aws

        # The platform's tags on everything it creates, whatever the resource forgets.
        return pulumi_aws.Provider(
            "aws",
            region=self.aws.region,
            default_tags={"tags": {"managed-by": MANAGED_BY_VALUE}},
        )

    def platform_data(
        self, *, guard: Guard, labels: dict[str, str], shared_namespaces: Sequence[str]
    ) -> dict[str, Any]:
        from components.clouds.aws import data, shared

        values = shared.platform(self.aws, self.data, labels, guard)
        shared_secret_store(
            self.data.shared_secrets,
            guard,
            shared_namespaces,
            lambda: data.shared_store_provider(self.aws, self.cluster_name, self.data, labels, guard),
        )
        return values

    def data_backend(self, *, values: pulumi.Output[Any] | dict[str, Any], opts: pulumi.ResourceOptions) -> DataBackend:
        from components.clouds.aws import data

        return data.AwsData(self.aws, self.cluster_name, self.data, PlatformValues(values), opts)

    def database_problems(self) -> list[str]:
        return checks.database_problems(self.aws)

    def stack_problems(self, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
        # A stack deployed before keys were per environment must say where each old key goes.
        return checks.stack_problems(self.aws, specs, settings) + legacy_keys.unlisted_problems(specs, settings)
