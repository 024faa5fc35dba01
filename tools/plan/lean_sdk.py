"""Skip work the Pulumi SDK does for the engine that a mocked run throws away.

Profiles of one plan under mocks (issue 35): for every resource the SDK walks the whole Python stack
(`traceback.extract_stack`, reading source lines through linecache) to send the constructor's source
position in the register request, about a tenth of a plan; the recording monitor keeps no source
position (tools/plan/harness.py), so offline it is wasted. Debug messages travel as protobuf log
requests to the mock engine's logger, which drops them. `lean()` turns both off for one run and
restores the SDK after; the plan it records is byte-identical (tests/tools/test_lean_sdk.py).

`_get_stack_trace` is private: if an SDK upgrade renames it, runs fall back to the SDK's own path
(slower, same plan) and a test says the patch no longer applies.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2

# The SDK function that captures a resource's source position (pulumi/runtime/resource.py).
STACK_TRACE_FUNCTION = "_get_stack_trace"


def _no_stack_trace() -> source_pb2.StackTrace:
    """An empty trace: the SDK then sends no source position, which the engine treats as unknown."""
    return source_pb2.StackTrace()


def stack_trace_patchable() -> bool:
    """Whether this SDK still has the function `lean()` replaces."""
    return callable(getattr(sdk_resource, STACK_TRACE_FUNCTION, None))


@contextmanager
def lean() -> Iterator[None]:
    """Runs inside the block register resources without capturing stack traces."""
    if not stack_trace_patchable():
        yield
        return
    original = getattr(sdk_resource, STACK_TRACE_FUNCTION)
    setattr(sdk_resource, STACK_TRACE_FUNCTION, _no_stack_trace)
    try:
        yield
    finally:
        setattr(sdk_resource, STACK_TRACE_FUNCTION, original)


class EngineLog(logging.Logger):
    """The logger the mock engine writes to: drops debug messages, keeps the others (for
    `tools.plan.run_cache` to log again on a hit) and hands them to the root logger, as the SDK's
    default logger (`logging.getLogger()`) would have."""

    def __init__(self) -> None:
        super().__init__("tenancy.plan.engine")
        self.records: list[tuple[int, str]] = []

    def _keep(self, level: int, msg: object) -> None:
        self.records.append((level, str(msg)))
        logging.getLogger().log(level, msg)

    def debug(self, msg: object, *args: object, **kwargs: object) -> None:
        return None

    def info(self, msg: object, *args: object, **kwargs: object) -> None:
        self._keep(logging.INFO, msg)

    def warning(self, msg: object, *args: object, **kwargs: object) -> None:
        self._keep(logging.WARNING, msg)

    def error(self, msg: object, *args: object, **kwargs: object) -> None:
        self._keep(logging.ERROR, msg)
