"""A Cloud SQL instance's disk: the size sent, and how far autoresize may grow it (issue 44, 8 and 10).

Autoresize grows a disk when it fills, and a Cloud SQL disk never shrinks. The provider then reads a
larger `settings.diskSize` than the program asked for, and sending the requested size again would
ask for a shrink, which Cloud SQL refuses (pulumi-gcp 10.2.0 `sql/_inputs.py`, `disk_size`: "this
value will override the resizing from disk_autoresize if that feature is enabled. To avoid this, set
lifecycle.ignore_changes on this field"). So the size is sent on create and ignored after, except
when a tenant raises `storageGb` above what the stack deployed last (its last outputs say): then the
instance gets the larger of the requested and the live size, read from Cloud SQL
(`gcp.sql.get_database_instance`), and never a shrink. Reading only on a raise keeps the no-change
run free of one Cloud SQL call per instance. A shrink in the file is refused before anything runs
(components/model/checks/storage.py).

Growth has a limit: `disk_autoresize_limit` ("The maximum size to which storage capacity can be
automatically increased. The default value is 0, which specifies that there is no limit", same
file) is `storageGb` times `tenancy:data.storageGrowthFactor`, as RDS's `max_allocated_storage` is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

AUTORESIZED_DISK = "settings.diskSize"


@dataclass(frozen=True)
class Disk:
    """What an instance's settings say about its disk, and whether the size is left to Cloud SQL."""

    size: pulumi.Input[int]
    limit: pulumi.Input[int]
    # True: the size in the state stands (Cloud SQL's, grown by autoresize); False: `size` is sent.
    size_ignored: bool


def deployed(previous: Any, *path: str) -> dict[str, Any]:
    """The entry at `path` of this stack's last outputs (a database's summary, a shared instance's
    platform values), or {} where there is none."""
    value = previous
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def instance_name(entry: dict[str, Any]) -> str | None:
    """The Cloud SQL instance id an output entry names (`name`, or `instance`: `project:region:id`)."""
    name = entry.get("name") or entry.get("instance")
    return str(name).rsplit(":", 1)[-1] if name else None


def live_size(name: str, project: str, opts: pulumi.ResourceOptions) -> pulumi.Output[int]:
    """The instance's disk size now (GB), as Cloud SQL reports it; 0 where it reports none."""
    found = gcp.sql.get_database_instance_output(
        name=name, project=project, opts=pulumi.InvokeOutputOptions(provider=opts.provider)
    )
    return found.settings.apply(lambda settings: int(settings[0].disk_size or 0) if settings else 0)


def disk(
    requested: int,
    growth_factor: int,
    deployed_entry: dict[str, Any],
    project: str,
    opts: pulumi.ResourceOptions,
    always_read: bool = False,
) -> Disk:
    """The disk of an instance asking for `requested` GB. `deployed_entry` is what the last outputs
    say of it (`storageGb`, its name); `always_read` reads the live size whenever the instance exists
    (shared instances: few, and older outputs carry no `storageGb` for them)."""
    limit = requested * growth_factor
    name = instance_name(deployed_entry)
    # Stack outputs carry numbers as JSON numbers (50.0 as often as 50).
    value = deployed_entry.get("storageGb")
    before = int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    raised = name is not None and ((before is not None and requested > before) or (always_read and before is None))
    if not raised or name is None:
        return Disk(size=requested, limit=limit, size_ignored=True)
    live = live_size(name, project, opts)
    size = live.apply(lambda now: max(requested, now))
    # Never a limit below the disk it limits.
    return Disk(size=size, limit=size.apply(lambda sent: max(limit, sent)), size_ignored=False)


def disk_options(options: dict[str, Any], disk_spec: Disk) -> dict[str, Any]:
    """Resource options of an instance with `options` merged: the size ignored unless it is sent."""
    if not disk_spec.size_ignored:
        return options
    return {**options, "ignore_changes": [*options.get("ignore_changes", []), AUTORESIZED_DISK]}
