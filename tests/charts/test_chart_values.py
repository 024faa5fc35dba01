"""Every chart's values in the dev, prod and prod-aws plans, as the pinned chart accepts them (issue 34).

For each Helm release and each rendered Flux HelmRelease: the chart and version it names must have
checked-in data (tests/charts/data, SOURCE.md in each), its values must pass the chart's own
values.schema.json (Helm refuses the release otherwise), and every key must be one the chart's
values.yaml has, or be listed in pinned.INTENTIONAL_KEYS with where the chart reads it.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.charts.check import problems, schema_errors, unknown_keys
from tests.charts.pinned import DATA, INTENTIONAL_KEYS, PLATFORM_CHARTS, TENANT_CHARTS, chart_data
from tests.charts.uses import ChartUse, chart_uses
from tools.plan.harness import ProgramRun

STACKS = {"dev": "dev_plan", "prod": "prod_plan", "prod-aws": "prod_aws_plan"}


def verdict(use: ChartUse) -> list[str]:
    """Why the chart would refuse or ignore these values; empty when it takes them as they are."""
    name = PLATFORM_CHARTS.get((use.repository, use.chart))
    if name is None:
        return [f"{use.repository}/{use.chart} is no chart of tests/charts/pinned.py"]
    data = chart_data(name, use.version)
    if data is None:
        return [f"no checked-in data for {name} {use.version}: extract it into tests/charts/data/{name}/{use.version}"]
    return problems(use.values, data)


def _platform_uses(run: ProgramRun) -> list[ChartUse]:
    return [u for u in chart_uses(run) if (u.repository, u.chart) not in TENANT_CHARTS]


@pytest.mark.parametrize("stack", list(STACKS))
def test_every_chart_takes_the_values_the_plan_gives_it(stack: str, request: pytest.FixtureRequest) -> None:
    run: ProgramRun = request.getfixturevalue(STACKS[stack])
    uses = _platform_uses(run)
    assert uses, "the plan installs no chart: the test would judge nothing"
    refused = [f"{u.origin} ({u.chart} {u.version}): {p}" for u in uses for p in verdict(u)]
    assert refused == [], "\n".join(refused)


def test_the_plans_cover_every_checked_in_chart(
    dev_plan: ProgramRun, prod_plan: ProgramRun, prod_aws_plan: ProgramRun
) -> None:
    """Each data folder is a pin some plan uses: stale data for an unpinned version is removed."""
    used = {
        (PLATFORM_CHARTS[(u.repository, u.chart)], u.version)
        for run in (dev_plan, prod_plan, prod_aws_plan)
        for u in _platform_uses(run)
    }
    stored = {(p.parent.name, p.name) for p in DATA.glob("*/*") if p.is_dir()}
    assert stored == used


def test_every_data_folder_names_its_source() -> None:
    for folder in (p for p in DATA.glob("*/*") if p.is_dir()):
        source = (folder / "SOURCE.md").read_text("utf-8")
        assert re.search(r"from \S+/\S+ at tag `[^`]+`", source), folder
        # A clone's commit, or the Go module the proxy serves at the tag with its go.sum hash.
        assert re.search(r"commit `[0-9a-f]{40}`|module `\S+@[^`]+`,\ngo.sum `h1:\S+=`", source), folder


def test_intentional_keys_are_all_still_set(
    dev_plan: ProgramRun, prod_plan: ProgramRun, prod_aws_plan: ProgramRun
) -> None:
    """An allowance nobody needs any more would let the same key back in unreviewed."""
    unknown = [
        (PLATFORM_CHARTS[(u.repository, u.chart)], path)
        for run in (dev_plan, prod_plan, prod_aws_plan)
        for u in _platform_uses(run)
        if (data := chart_data(PLATFORM_CHARTS[(u.repository, u.chart)], u.version)) is not None
        for path in unknown_keys(u.values, data.keys)
    ]
    unused = [
        (chart, listed)
        for chart, listed in INTENTIONAL_KEYS
        if not any(c == chart and (p == listed or p.startswith(f"{listed}.")) for c, p in unknown)
    ]
    assert unused == []


def test_a_version_bump_without_its_data_fails(dev_plan: ProgramRun) -> None:
    """Renovation: the same release one version on is refused until its data is checked in."""
    [flux] = [u for u in chart_uses(dev_plan) if u.chart == "flux2"]
    assert verdict(flux) == []
    bumped = dataclasses.replace(flux, version="2.99.0")
    assert verdict(bumped) == ["no checked-in data for flux2 2.99.0: extract it into tests/charts/data/flux2/2.99.0"]


def test_an_unknown_chart_fails(dev_plan: ProgramRun) -> None:
    [flux] = [u for u in chart_uses(dev_plan) if u.chart == "flux2"]
    moved = dataclasses.replace(flux, repository="https://mirror.example.org/charts")
    assert verdict(moved) == ["https://mirror.example.org/charts/flux2 is no chart of tests/charts/pinned.py"]


def test_a_key_the_chart_does_not_read_fails(dev_plan: ProgramRun) -> None:
    """flux2 has no schema: only the key tree can tell a typo from a setting."""
    [flux] = [u for u in chart_uses(dev_plan) if u.chart == "flux2"]
    typo = dataclasses.replace(flux, values={**flux.values, "multitenancy": {"enable": True}})
    assert verdict(typo) == ["multitenancy.enable: not a key of the chart's values.yaml"]
    # Free-form maps (empty in values.yaml) take any key: pod labels are the user's.
    labelled = dataclasses.replace(flux, values={"helmController": {"labels": {"team": "platform"}}})
    assert verdict(labelled) == []


def test_a_value_the_schema_refuses_fails() -> None:
    """cert-manager's schema: a wrong type and an unknown key under a closed object are both refused."""
    data = chart_data("cert-manager", "v1.21.1")
    assert data is not None and data.schema is not None
    assert schema_errors({"crds": {"enabled": True}}, data.schema) == []
    assert schema_errors({"crds": {"enabled": "yes"}}, data.schema)
    assert schema_errors({"crds": {"enable": True}}, data.schema)


def test_tenant_charts_are_the_only_ones_left_out(dev_plan: ProgramRun) -> None:
    """What the test skips is exactly the example tenants' own chart apps."""
    skipped = {(u.repository, u.chart) for u in chart_uses(dev_plan)} - set(PLATFORM_CHARTS)
    assert skipped == set(TENANT_CHARTS)
