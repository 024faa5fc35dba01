"""Every cloud the platform runs on, by the name a stack's `tenancy:cloud` gives.

Adding a cloud: a folder under components/clouds/ with a class implementing `Cloud`
(components/clouds/protocol.py), one line here, and its name in the settings model's `cloud`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from components.clouds.aws.cloud import AwsCloud
from components.clouds.gcp.cloud import GcpCloud
from components.clouds.local.cloud import LocalCloud
from components.clouds.protocol import Cloud
from components.model.settings.stack import StackSettings
from components.model.settings.storage import data_storage_class

_Section = TypeVar("_Section")


def _section(value: _Section | None, key: str) -> _Section:
    # The settings model already refuses a cloud without its section; this only narrows the type.
    if value is None:
        raise ValueError(f"tenancy:{key} is missing")
    return value


# Each cloud, bound to the slice of the settings it uses.
CLOUDS: dict[str, Callable[[StackSettings], Cloud]] = {
    "local": lambda settings: LocalCloud(
        data=settings.data, storage_class=data_storage_class(settings.storage), installs=settings.installs
    ),
    "gcp": lambda settings: GcpCloud(
        gcp=_section(settings.gcp, "gcp"), cluster_name=settings.cluster.name, data=settings.data
    ),
    "aws": lambda settings: AwsCloud(
        aws=_section(settings.aws, "aws"), cluster_name=settings.cluster.name, data=settings.data
    ),
}


def cloud_for(settings: StackSettings) -> Cloud:
    """The stack's cloud (`tenancy:cloud`)."""
    return CLOUDS[settings.cloud](settings)
