"""Lean runs (tools/plan/lean_sdk.py) skip the SDK's stack traces and debug log requests, and record
exactly the plan the SDK's own path records."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pulumi.runtime import resource as sdk_resource

from tools.plan import lean_sdk, run_cache
from tools.plan.harness import PROJECT_ROOT, run_stack
from tools.plan.run import write_plan

STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in PROJECT_ROOT.glob("Pulumi.*.yaml"))


def _files(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_the_sdk_still_has_the_function_lean_runs_replace() -> None:
    """If this fails, a Pulumi SDK upgrade renamed `_get_stack_trace`: plans stay correct but every
    resource pays for a stack walk again; point `STACK_TRACE_FUNCTION` at the new name."""
    assert lean_sdk.stack_trace_patchable()


def test_lean_replaces_the_stack_trace_only_inside_the_block() -> None:
    original = getattr(sdk_resource, lean_sdk.STACK_TRACE_FUNCTION)
    with lean_sdk.lean():
        replaced = getattr(sdk_resource, lean_sdk.STACK_TRACE_FUNCTION)
        assert replaced is not original
        assert list(replaced().frames) == []
    assert getattr(sdk_resource, lean_sdk.STACK_TRACE_FUNCTION) is original


@pytest.mark.parametrize("stack", STACKS)
def test_a_lean_plan_writes_the_same_files_as_the_sdks_own_path(stack: str, tmp_path: Path) -> None:
    with run_cache.suspended():
        lean = run_stack(stack)
        full = run_stack(stack, lean=False)
    write_plan(lean, tmp_path / "lean")
    write_plan(full, tmp_path / "full")
    lean_files, full_files = _files(tmp_path / "lean"), _files(tmp_path / "full")
    assert "resources.json" in lean_files
    assert sorted(lean_files) == sorted(full_files)
    assert [name for name in lean_files if lean_files[name] != full_files[name]] == []


def test_the_engine_log_drops_debug_and_passes_the_rest_on(caplog: pytest.LogCaptureFixture) -> None:
    log = lean_sdk.EngineLog()
    with caplog.at_level(logging.DEBUG):
        log.debug("registering resource")
        log.info("info")
        log.warning("could not read this stack's last outputs")
        log.error("error")
    expected = [(logging.INFO, "info"), (logging.WARNING, "could not read this stack's last outputs")]
    expected.append((logging.ERROR, "error"))
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == expected
    assert log.records == expected
