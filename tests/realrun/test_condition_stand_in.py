"""The condition stand-in never writes on a kind whose real controller runs (tools/realrun/conditions.py)."""

from __future__ import annotations

from typing import Any

import pytest

from components.model.core.await_rules import AWAITED
from tools.realrun import conditions
from tools.realrun.conditions import ConditionStandIn, stood_in_kinds
from tools.realrun.controllers.cert_manager import SERVED


def test_cert_manager_kinds_are_not_stood_in_while_its_controller_runs() -> None:
    kinds = stood_in_kinds(SERVED)
    assert not [k for k in kinds if k[0] == "cert-manager.io"]
    assert ("gateway.networking.k8s.io", "Gateway") in kinds
    assert set(kinds) | SERVED == set(AWAITED)


def test_the_served_kinds_are_all_awaited_kinds() -> None:
    assert set(AWAITED) >= SERVED, "a served kind the program never awaits would be a typo"


def test_the_loop_serves_only_the_stood_in_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    visited: list[tuple[str, str]] = []
    stand_in = ConditionStandIn(object(), SERVED, interval=0)  # type: ignore[arg-type]
    monkeypatch.setattr(conditions, "dynamic", lambda api: object())

    def serve(dyn: Any, group: str, kind: str) -> None:
        visited.append((group, kind))
        stand_in._stop.set()

    monkeypatch.setattr(stand_in, "_serve", serve)
    stand_in._loop()
    assert visited == stood_in_kinds(SERVED)
    assert not set(visited) & SERVED
