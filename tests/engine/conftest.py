"""Plans the engine invariants run on: per example stack, a mix in every lifecycle state
(tests/engine/mixes.py), planned once per session."""

from __future__ import annotations

import pytest

from components.model.tenant_file.spec import Lifecycle
from tests.engine.mixes import LIFECYCLES, STACKS, plan_mix
from tests.shared import shared
from tools.plan.harness import ProgramRun

Mixes = dict[tuple[str, Lifecycle], ProgramRun]


@pytest.fixture(scope="session")
def mix_plans(tmp_path_factory: pytest.TempPathFactory) -> Mixes:
    """Every (stack, lifecycle) mix, planned once per test run (tests/shared.py)."""

    def make() -> Mixes:
        return {
            (stack, lifecycle): plan_mix(stack, lifecycle, tmp_path_factory.mktemp(f"{stack}-{lifecycle}"))
            for stack in STACKS
            for lifecycle in LIFECYCLES
        }

    return shared(tmp_path_factory, "mix_plans", make)
