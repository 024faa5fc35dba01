"""Shared fixtures: one mocked run of the real program per example stack, reused across tests (and
across pytest-xdist workers: tests/shared.py); runs with equal inputs computed once per test run
(tools/plan/run_cache.py), except in tests that patch code."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator

import pytest

from tests.shared import shared
from tests.support import plan
from tools.plan import run_cache
from tools.plan.harness import ProgramRun

# Fixtures through which a test changes code or state the program may read: the run key cannot see
# a patched function (tools/plan/run_key.py), so such a test plans without the cache.
PATCHING_FIXTURES = frozenset({"monkeypatch", "mocker"})


@pytest.fixture(scope="session", autouse=True)
def plan_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[run_cache.RunCache]:
    """One cache of mocked runs for the whole test run, in its shared temporary directory so the
    pytest-xdist workers reuse each other's runs (each worker's base is `<run>/popen-gwN`)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") is not None else base
    cache = run_cache.RunCache(root / "plan-cache")
    run_cache.activate(cache)
    yield cache
    run_cache.activate(None)
    # What it saved, per worker, for whoever tunes the suite (not asserted: a count, not a test).
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (cache.directory / f"stats-{worker}.json").write_text(json.dumps(dataclasses.asdict(cache.stats)) + "\n")


@pytest.fixture(autouse=True)
def _no_cache_when_patching(request: pytest.FixtureRequest, plan_cache: run_cache.RunCache) -> Iterator[None]:
    """Plan afresh in a test that can patch what the program runs (see PATCHING_FIXTURES)."""
    if PATCHING_FIXTURES.isdisjoint(request.fixturenames):
        yield
        return
    with run_cache.suspended():
        yield


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
