"""Stack config model for tenant storage (`tenancy:storage`): the StorageClasses tenants may claim.

A tenant's PersistentVolumeClaims may name only these classes (admission rule
`tenancy-volume-claims`), and the platform renders them itself with `reclaimPolicy: Delete`, so a
volume a tenant releases is deleted with its data instead of waiting, Retained, for someone to
bind it (MTB "require PV reclaim policy of delete"). A class the cluster already has cannot be
trusted to delete: its reclaim policy is invisible to the program, so tenants never get it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator, Field

from components.model.core.fields import StrictModel, unique_names

# A StorageClass name: a DNS subdomain (written without `](` so the generated reference renders).
_CLASS_NAME = r"^[a-z0-9]+([.-]+[a-z0-9]+)*$"
# The class the platform renders when the stack lists none, provisioned by the cloud's default driver.
DEFAULT_CLASS = "tenancy-standard"


class StorageClassSpec(StrictModel):
    """One StorageClass the platform renders for tenants (reclaim policy Delete, always)."""

    # The StorageClass's name, which tenant claims name in `storageClassName`.
    name: str = Field(pattern=_CLASS_NAME, max_length=253)
    # The CSI driver (`pd.csi.storage.gke.io`, `ebs.csi.aws.com`, `rancher.io/local-path`).
    provisioner: str = Field(min_length=1, max_length=253)
    # Provisioner parameters, such as `{type: pd-ssd}` or `{type: gp3}` (the CSI driver's own keys).
    parameters: dict[str, str] = {}


class StorageSettings(StrictModel):
    """The classes tenants may claim; empty means one class on the cloud's default driver."""

    # The StorageClasses tenants may claim, all with reclaim policy Delete; empty: one class `tenancy-standard`
    # on the cloud's default driver. In-cluster databases claim the first.
    classes: Annotated[list[StorageClassSpec], AfterValidator(unique_names)] = Field(default_factory=list)
    # Mark the first class as the cluster's default, so claims that name no class (most charts'
    # default) get it from the DefaultStorageClass admission plugin instead of being refused.
    # Off by default: the default class is cluster-wide, and the platform may not own the cluster.
    mark_default: bool = False


def tenant_storage_classes(
    settings: StorageSettings, provisioner: str, parameters: Mapping[str, str]
) -> list[StorageClassSpec]:
    """The classes to render: the stack's list, or the default class on the cloud's driver."""
    if settings.classes:
        return list(settings.classes)
    return [StorageClassSpec(name=DEFAULT_CLASS, provisioner=provisioner, parameters=dict(parameters))]


def data_storage_class(settings: StorageSettings) -> str:
    """The class in-cluster databases claim: the first tenant class (what the platform renders)."""
    return settings.classes[0].name if settings.classes else DEFAULT_CLASS
