"""Shared fixtures: one mocked run of the real program per example stack, reused across tests (and
across pytest-xdist workers: tests/shared.py)."""

from __future__ import annotations

import pytest

from tests.shared import shared
from tests.support import plan
from tools.plan.harness import ProgramRun


@pytest.fixture(scope="session")
def dev_plan(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return shared(tmp_path_factory, "dev_plan", lambda: plan("dev"))


@pytest.fixture(scope="session")
def prod_plan(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return shared(tmp_path_factory, "prod_plan", lambda: plan("prod"))


@pytest.fixture(scope="session", params=["dev", "prod"])
def example_plan(request: pytest.FixtureRequest, dev_plan: ProgramRun, prod_plan: ProgramRun) -> ProgramRun:
    return dev_plan if request.param == "dev" else prod_plan


@pytest.fixture(scope="session")
def prod_aws_plan(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return shared(tmp_path_factory, "prod_aws_plan", lambda: plan("prod-aws"))


@pytest.fixture(scope="session", params=["dev", "prod", "prod-aws"])
def any_stack_plan(
    request: pytest.FixtureRequest, dev_plan: ProgramRun, prod_plan: ProgramRun, prod_aws_plan: ProgramRun
) -> ProgramRun:
    """Every example stack: local (dev), GCP (prod) and AWS (prod-aws)."""
    return {"dev": dev_plan, "prod": prod_plan, "prod-aws": prod_aws_plan}[request.param]
