"""Tenant network requests checked against the stack: a tenant asks only for egress the stack allows."""

from __future__ import annotations

from components.model.stack import StackSettings
from components.model.tenant_file import TenantSpec


def network_problems(spec: TenantSpec, settings: StackSettings) -> list[tuple[str, str]]:
    """(field path, message) for every `egress` name the stack does not define."""
    allowed = settings.network.egress
    known = ", ".join(sorted(allowed)) or "none"
    return [
        (f"egress.{index}", f"{name!r} is not an egress entry of this stack (tenancy:network.egress: {known})")
        for index, name in enumerate(spec.egress)
        if name not in allowed
    ]
