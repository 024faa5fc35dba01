"""Shared fixtures: one mocked run of the real program per example stack, reused across tests."""

from __future__ import annotations

import pytest

from tests.support import plan
from tools.plan.harness import ProgramRun


@pytest.fixture(scope="session")
def dev_plan() -> ProgramRun:
    return plan("dev")


@pytest.fixture(scope="session")
def prod_plan() -> ProgramRun:
    return plan("prod")


@pytest.fixture(scope="session", params=["dev", "prod"])
def example_plan(request: pytest.FixtureRequest, dev_plan: ProgramRun, prod_plan: ProgramRun) -> ProgramRun:
    return dev_plan if request.param == "dev" else prod_plan


@pytest.fixture(scope="session")
def prod_aws_plan() -> ProgramRun:
    return plan("prod-aws")


@pytest.fixture(scope="session", params=["dev", "prod", "prod-aws"])
def any_stack_plan(
    request: pytest.FixtureRequest, dev_plan: ProgramRun, prod_plan: ProgramRun, prod_aws_plan: ProgramRun
) -> ProgramRun:
    """Every example stack: local (dev), GCP (prod) and AWS (prod-aws)."""
    return {"dev": dev_plan, "prod": prod_plan, "prod-aws": prod_aws_plan}[request.param]
