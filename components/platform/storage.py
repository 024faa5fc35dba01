"""The StorageClasses tenants claim, rendered by the platform with reclaim policy Delete.

Why the platform renders its own classes instead of trusting the cluster's: a class's reclaim
policy decides what happens to a tenant's data when its claim goes. With `Retain` the volume stays
behind, Released, holding the data, one `claimRef` edit away from another namespace; with `Delete`
it goes with the claim (MTB "require PV reclaim policy of delete"). The program cannot see the
cluster's classes, so it makes the ones tenants may use, and admission rule `tenancy-volume-claims`
keeps tenant claims on them. Cluster-wide and once per cluster, like the shared roles.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.model.core.labels import platform_labels
from components.model.settings.storage import StorageClassSpec

# StorageClass marks the cluster default with this annotation (the DefaultStorageClass plugin reads it).
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


@dataclass
class PlatformStorageArgs:
    """The classes to render; with `mark_default`, the first becomes the cluster's default class."""

    classes: list[StorageClassSpec]
    mark_default: bool = False


class PlatformStorage(pulumi.ComponentResource):
    """Tenant StorageClasses (`tenancy:index:PlatformStorage`)."""

    class_names: list[str]

    def __init__(self, name: str, args: PlatformStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:PlatformStorage", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        for index, spec in enumerate(args.classes):
            annotations = {DEFAULT_CLASS_ANNOTATION: "true"} if args.mark_default and index == 0 else {}
            k8s.storage.v1.StorageClass(
                f"{name}-{spec.name}",
                metadata={"name": spec.name, "labels": platform_labels(), "annotations": annotations},
                provisioner=spec.provisioner,
                parameters=spec.parameters or None,
                # Delete: a released volume goes with its data (the point of this component).
                reclaim_policy="Delete",
                # Bind where the pod is scheduled, so a zonal disk lands in the pool's zone.
                volume_binding_mode="WaitForFirstConsumer",
                allow_volume_expansion=True,
                opts=child,
            )
        self.class_names = [spec.name for spec in args.classes]
        self.register_outputs({"classes": self.class_names})
