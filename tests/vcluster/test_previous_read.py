"""components/vcluster/previous.py `read_last_outputs`: a failed read of the stack's own last outputs
is tried again (the real run saw the engine fail once while writing its checkpoint), and an engine
that keeps failing still gets its error to the caller, which warns."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pulumi
import pytest
from pulumi.runtime import settings as runtime_settings

from components.vcluster import previous


class _Engine:
    """Stands in for the engine's builtin invoke: fails `failures` times, then answers `outputs`."""

    def __init__(self, failures: int, outputs: dict[str, Any]) -> None:
        self.failures = failures
        self.outputs = outputs
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def invoke(self, token: str, args: dict[str, Any], *rest: Any, **options: Any) -> Any:
        self.calls.append((token, args))
        if len(self.calls) <= self.failures:
            raise Exception("failed to load checkpoint: EOF")
        return SimpleNamespace(value={"name": args["name"], "outputs": self.outputs})


@pytest.fixture
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(previous, "RETRY_PAUSE_SECONDS", 0)
    # A run of its own: an earlier test's program run leaves its monitor, and its answer, behind.
    monitor = _Monitor()
    monkeypatch.setattr(runtime_settings, "get_monitor", lambda: monitor)


@pytest.mark.usefixtures("no_pause")
def test_a_read_that_fails_once_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _Engine(failures=1, outputs={"tenants": {"acme": {"virtualClusters": {"prod": "vc"}}}})
    monkeypatch.setattr(pulumi.runtime, "invoke", engine.invoke)
    assert previous.previous_virtual_clusters() == {"acme": ["prod"]}
    assert [token for token, _ in engine.calls] == [previous.READ_STACK_OUTPUTS] * 2


@pytest.mark.usefixtures("no_pause")
def test_an_engine_that_keeps_failing_gets_its_error_to_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _Engine(failures=previous.READ_ATTEMPTS, outputs={})
    monkeypatch.setattr(pulumi.runtime, "invoke", engine.invoke)
    with pytest.raises(Exception, match="failed to load checkpoint"):
        previous.read_last_outputs()
    assert len(engine.calls) == previous.READ_ATTEMPTS


def test_the_engine_is_asked_once_per_run_whoever_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each read makes the engine load the stack's whole checkpoint; three callers share one answer.
    engine = _Engine(failures=0, outputs={"releasedTenants": ["old"]})
    monkeypatch.setattr(pulumi.runtime, "invoke", engine.invoke)
    run, next_run = _Monitor(), _Monitor()
    monkeypatch.setattr(runtime_settings, "get_monitor", lambda: run)
    assert previous.read_last_outputs() == previous.read_last_outputs() == {"releasedTenants": ["old"]}
    assert len(engine.calls) == 1
    engine.outputs = {"releasedTenants": ["new"]}
    monkeypatch.setattr(runtime_settings, "get_monitor", lambda: next_run)
    assert previous.read_last_outputs() == {"releasedTenants": ["new"]}
    assert len(engine.calls) == 2


class _Monitor:
    """A run's resource monitor: all the cache keys on."""
