"""The stack's record of released tenant names, read and written around each run
(components/model/checks/released_names.py says why)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
from pulumi.runtime import settings as runtime_settings

from components.model.checks.released_names import OUTPUT, next_record
from components.model.tenant_file.spec import TenantSpec
from components.vcluster.previous import read_last_outputs


def previous_outputs() -> Any:
    """This stack's last deployed outputs; {} on a first deployment, outside a program run, or when
    the engine cannot say (then re-onboarding is not checked, and a warning says so)."""
    if runtime_settings.get_monitor() is None:
        return {}
    try:
        return read_last_outputs()
    except Exception as error:
        pulumi.log.warn(f"could not read this stack's last outputs ({error}); re-used tenant names are not checked")
        return {}


def export_record(previous: Any, specs: Sequence[TenantSpec], reused: Sequence[str]) -> None:
    """Carry the released names forward (`releasedTenants`), so a deleted file's name stays known."""
    pulumi.export(OUTPUT, next_record(previous, specs, reused))
