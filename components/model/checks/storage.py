"""Storage sizes judged as the clouds judge them: a dedicated database's disk never shrinks.

Cloud SQL ("Size of a running instance cannot be reduced but can be increased", the provider's
`diskSize`), RDS (ModifyDBInstance: "you can't reduce the amount of allocated storage") and a
Kubernetes PersistentVolumeClaim (only expansion is supported) all refuse a smaller disk. Found at
`up` time that is a failed update, or, where a provider reads a shrink as a replacement, an attempt
to replace a protected instance; found here it is a message naming the file and
`databases.<n>.storageGb`.

What the stack deployed is read from its last outputs (`tenants.<name>.data.databases.<environment>.
<database>.storageGb`, components/data/databases.py): the size the file asked for then. Growth is
allowed; where the cloud grows the disk on its own (Cloud SQL autoresize, RDS storage autoscaling)
the program never sends a smaller size back (components/clouds/gcp/disk_size.py;
RDS ignores `allocatedStorage` below the live size when `maxAllocatedStorage` is set). A deployment
whose outputs predate the field, or a first deployment, has nothing to compare with.

A virtual cluster's volume neither shrinks nor grows through the stack: the chart puts
`tenancy:virtualClusters.storage` (and the platform's storage class) in the StatefulSet's volume
claim template, which the API server refuses to change ("updates to statefulset spec for fields
other than ... are forbidden", k8s.io/kubernetes v1.36.3 pkg/apis/apps/validation), so helm-controller's
upgrade would fail in every virtual cluster at once, after `up` succeeded. What each virtual cluster
was made with is read from `tenants.<name>.virtualClusters.<environment>.storage` (and
`.storageClass`, components/vcluster/objects.py); a change is refused naming the stack setting, and
the runbook (docs/virtual-clusters.md, Growing the control plane's volume) grows a claim in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.model.core.errors import Problem
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

# The keys of a virtual cluster's summary in the stack outputs (components/vcluster/objects.py).
STORAGE_OUTPUT = "storage"
STORAGE_CLASS_OUTPUT = "storageClass"
_VIRTUAL_CLUSTER_SETTINGS = "tenancy:virtualClusters.storage"


def deployed_storage(previous: Any, tenant: str, environment: str, database: str) -> int | None:
    """The `storageGb` the stack's last outputs record for one database, or None."""
    node: Any = previous
    for key in ("tenants", tenant, "data", "databases", environment, database, "storageGb"):
        node = node.get(key) if isinstance(node, dict) else None
    # The engine hands outputs over as protobuf values: every number arrives as a float.
    if isinstance(node, bool) or not isinstance(node, int | float):
        return None
    return int(node)


def shrink_problems(entries: Sequence[tuple[TenantSpec, str]], settings: StackSettings, previous: Any) -> list[Problem]:
    """A dedicated database whose `storageGb` is smaller than what the stack deployed last."""
    problems: list[Problem] = []
    for spec, source in entries:
        for index, database in enumerate(spec.databases):
            if (database.placement or settings.data.placement) != "dedicated":
                continue  # a database on a shared instance has no disk of its own
            environments = [e for e in database.environments or spec.environments if e in settings.environments]
            deployed = {
                environment: size
                for environment in environments
                if (size := deployed_storage(previous, spec.name, environment, database.name)) is not None
                and database.storage_gb < size
            }
            if not deployed:
                continue
            largest = max(deployed.values())
            where = ", ".join(f"{size} GB in {environment}" for environment, size in sorted(deployed.items()))
            problems.append(
                Problem(
                    source,
                    f"databases.{index}.storageGb",
                    f"{database.storage_gb} is smaller than the deployed disk ({where}): a database's storage "
                    f"cannot shrink (Cloud SQL, RDS and volume claims refuse it); keep storageGb at {largest} "
                    "or more",
                )
            )
    return problems


def virtual_cluster_storage_problems(
    entries: Sequence[tuple[TenantSpec, str]], settings: StackSettings, previous: Any, storage_class: str
) -> list[Problem]:
    """`tenancy:virtualClusters.storage` (or the platform's storage class) differing from what a
    virtual cluster of this stack was made with: its claim template cannot change."""
    wanted = {STORAGE_OUTPUT: settings.virtual_clusters.storage, STORAGE_CLASS_OUTPUT: storage_class}
    made: dict[str, dict[str, list[str]]] = {key: {} for key in wanted}
    for spec, _source in entries:
        tenants = previous.get("tenants") if isinstance(previous, dict) else None
        summary = tenants.get(spec.name) if isinstance(tenants, dict) else None
        clusters = summary.get("virtualClusters") if isinstance(summary, dict) else None
        for environment, cluster in sorted(clusters.items() if isinstance(clusters, dict) else []):
            for key, value in wanted.items():
                deployed = cluster.get(key) if isinstance(cluster, dict) else None
                if isinstance(deployed, str) and deployed != value:
                    made[key].setdefault(deployed, []).append(f"{spec.name} ({environment})")
    problems: list[Problem] = []
    for key, found in made.items():
        for deployed, where in sorted(found.items()):
            what = "a storage class" if key == STORAGE_CLASS_OUTPUT else "a volume size"
            field = _VIRTUAL_CLUSTER_SETTINGS if key == STORAGE_OUTPUT else "tenancy:storage.classes.0.name"
            problems.append(
                Problem(
                    settings.source,
                    field,
                    f"the virtual clusters of {', '.join(where)} were made with {what} of {deployed!r}, not "
                    f"{wanted[key]!r}: a StatefulSet's volume claim template cannot change, so every upgrade of "
                    f"their release would fail; keep {deployed!r} (to grow one virtual cluster's volume, see "
                    "docs/virtual-clusters.md, Growing the control plane's volume)",
                )
            )
    return problems
