"""Stack config model for the cluster admission policy bundle (`tenancy:policy`)."""

from __future__ import annotations

from components.common import StrictModel


class PolicySettings(StrictModel):
    """How the admission policy bundle is rolled out in this stack."""

    enabled: bool = True
