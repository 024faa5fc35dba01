"""A re-used tenant name on GCP needs new key names: the old tenant's CryptoKeys can never be deleted.

Offboarding deletes a tenant's data, but on GCP its keys stay: "CryptoKeys cannot be deleted from
Google Cloud Platform. Destroying a provider-managed CryptoKey will remove it from state and delete
all CryptoKeyVersions, rendering the key unusable, but will not delete the resource from the
project" (pulumi-gcp 10.2.0, `pulumi_gcp/kms/crypto_key.py`; https://cloud.google.com/kms/docs/delete-kms-resources).
A new tenant of the same name would ask for `tenancy_<tenant>_<env>` again, and Cloud KMS answers
409 ALREADY_EXISTS in the middle of the first `up`. So every name listed in
`tenancy:data.reusedTenantNames` must say which generation its keys are (`tenancy:gcp.keyGenerations`),
and the keys are named with it (data.py `key_name`). Adopting the old keys instead was rejected: their
versions are destroyed (the offboarding deletes them), and data of the new tenant under the old
tenant's key names is what re-using a name must not look like (components/model/checks/released_names.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from components.model.core.errors import Problem
from components.model.settings.clouds import GcpSettings
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec


def key_generation_problems(gcp: GcpSettings, specs: Sequence[TenantSpec], settings: StackSettings) -> list[Problem]:
    """Re-used tenant names of this stack without a key generation."""
    names = {spec.name for spec in specs}
    return [
        Problem(
            settings.source,
            f"tenancy:gcp.keyGenerations.{name}",
            f"required: {name!r} is re-used (tenancy:data.reusedTenantNames) and the old tenant's Cloud KMS keys "
            f"can never be deleted, so tenancy_{name}_<env> stays taken (the first `up` would fail with 409); "
            "set it to 2 (or one more than the last generation used for this name) and keep it while the "
            "tenant exists",
        )
        for name in sorted(set(settings.data.reused_tenant_names) & names)
        if name not in gcp.key_generations
    ]
