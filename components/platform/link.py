"""What tenants need from the cluster-wide platform, whichever stack built it.

In an `all` stack the platform parts are built in the same program; in a `tenants` shard they live
in the platform stack and arrive through a StackReference. Tenants read them through this one
object, so the Tenant component does not care which layout the install uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

PLATFORM_OUTPUT = "platform"


@dataclass
class PlatformContext:
    """The platform stack's `platform` output (a dict), local or referenced."""

    outputs: pulumi.Output[dict[str, Any]]
    # The reference itself when this is a tenants shard (None in an all-in-one stack).
    reference: pulumi.StackReference | None = None
    local: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> pulumi.Output[Any]:
        """One platform value as an Output (unknown during a shard's first preview, like any reference)."""
        return self.outputs.apply(lambda values: values.get(key))

    def part(self, key: str) -> Any:
        """One platform value as the platform built it where it is built here (a dict of Outputs,
        each depending on its own resources only), else as `get` gives it. Unwrapping the whole
        value instead makes everything read from it wait for every resource in it (every tenant key
        would wait for the shared database instances)."""
        if self.reference is None and key in self.local:
            return self.local[key]
        return self.get(key)


def local_platform(values: dict[str, Any]) -> PlatformContext:
    """The platform built in this very program (stack role `all` or `platform`)."""
    return PlatformContext(outputs=pulumi.Output.from_input(values), local=values)


def referenced_platform(*, platform_stack: str | None) -> PlatformContext:
    """The platform of a tenants shard: the platform stack's outputs through a StackReference.

    `platform_stack` is the stack's `tenancy:platformStack` (`org/project/stack`).
    """
    if platform_stack is None:  # guarded by the settings model; kept for the type checker
        raise ValueError("platformStack is required for stack role tenants")
    reference = pulumi.StackReference("platform", stack_name=platform_stack)
    outputs = reference.require_output(PLATFORM_OUTPUT)
    return PlatformContext(outputs=outputs, reference=reference)
