"""Stack config model for node pools (`tenancy:nodePools`), one entry per pool name."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from components.common import StrictModel


class NodePoolSettings(StrictModel):
    """One node pool of this stack. Several tenants may share it."""

    kind: Literal["gke", "eks", "karpenter", "existing"]
    cost_code: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,63}$")
    min_nodes: int = Field(default=0, ge=0)
    max_nodes: int = Field(default=3, ge=1)

    @model_validator(mode="after")
    def _min_not_above_max(self) -> NodePoolSettings:
        if self.min_nodes > self.max_nodes:
            raise ValueError(f"minNodes ({self.min_nodes}) is above maxNodes ({self.max_nodes})")
        return self
