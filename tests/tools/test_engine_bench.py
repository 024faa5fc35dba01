"""The real engine's measured figures as committed (tools/scale/engine_bench.json, the bench's
`--json` output of the quiet run) and what docs/scale.md and the shard budget say of them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from components.model.settings.stack import ShardSettings
from tools.ci.engine_settings import command_env
from tools.plan.harness import PROJECT_ROOT
from tools.realrun.bench import _markdown
from tools.scale.operator_stack import program_peak_mib
from tools.scale.shard_budget import (
    ENGINE_FIGURES_PATH,
    FIRST_UP_LIMIT_SECONDS,
    engine_figures_from_rows,
    load_engine_figures,
)

BENCH = PROJECT_ROOT / "tools" / "scale" / "engine_bench.json"
PARALLEL_DIFF = PROJECT_ROOT / "tools" / "scale" / "engine_settings" / "parallel_diff.json"
# The 100 and 300 counts measured before the collector tuning and the client rate: the baseline of the
# settings measured then (parallel Diff) and of the before/after table.
BEFORE_TUNING = PROJECT_ROOT / "tools" / "scale" / "engine_settings" / "before_tuning.json"
# The afternoon's 100 and 300 counts: after the collector and the client rate, before CI's engine settings.
BEFORE_ENGINE_SETTINGS = PROJECT_ROOT / "tools" / "scale" / "engine_settings" / "before_engine_settings.json"
# 100 tenants three times in a row: without GOGC and PULUMI_PARALLEL, with GOGC=400, with PULUMI_PARALLEL=32.
ONE_SETTING = PROJECT_ROOT / "tools" / "scale" / "engine_settings" / "one_setting_at_a_time.json"
SCALE_DOC = (PROJECT_ROOT / "docs" / "scale.md").read_text(encoding="utf-8")


def _rows(path: Path = BENCH) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return rows


def test_the_engine_figures_are_those_of_the_committed_bench_rows() -> None:
    assert json.loads(ENGINE_FIGURES_PATH.read_text(encoding="utf-8")) == engine_figures_from_rows(_rows(), 2)


def test_every_measured_row_is_in_the_docs_as_the_bench_prints_it() -> None:
    for row in [*_rows(), *_rows(BEFORE_TUNING), *_rows(BEFORE_ENGINE_SETTINGS)]:
        assert _markdown(row) in SCALE_DOC, f"docs/scale.md lacks the {row['tenants']}-tenant row"


def test_the_docs_state_the_ratios_and_targets_as_measured() -> None:
    by_count = {row["tenants"]: row for row in _rows()}
    at_300, at_100 = by_count[300], by_count[100]
    assert f"| {at_300['noop_preview_over_mock_plan']:.2f}x, {at_300['noop_preview_s']:.1f} s | missed |" in SCALE_DOC
    ratio_100 = f"{at_100['noop_preview_over_mock_plan']:.2f}x against {at_300['noop_preview_over_mock_plan']:.2f}x"
    assert ratio_100 in SCALE_DOC
    edit = at_300["edit_up_s"] / at_300["noop_preview_s"]
    assert f"{edit:.2f}x at 300" in SCALE_DOC
    assert f"| {at_300['first_preview_s']:.1f} s | missed |" in SCALE_DOC
    assert f"| {at_300['up_s']:.1f} s | missed |" in SCALE_DOC


def test_the_parallel_diff_figures_in_the_docs_are_the_measured_ones() -> None:
    measured = json.loads(PARALLEL_DIFF.read_text(encoding="utf-8"))["rows"][0]
    baseline = next(row for row in _rows(BEFORE_TUNING) if row["tenants"] == measured["tenants"])
    assert measured["env"] == {"PULUMI_PARALLEL_DIFF": "true"}
    sentence = (
        f"the no-change preview took {measured['noop_preview_s']:.1f} s against {baseline['noop_preview_s']:.1f}\n"
        f"  s without it, the first `up` {measured['up_s']:.1f} against {baseline['up_s']:.1f} s, the edit's `up` "
        f"{measured['edit_up_s']:.1f} against {baseline['edit_up_s']:.1f} s"
    )
    assert sentence in SCALE_DOC
    assert measured["noop_preview_s"] > baseline["noop_preview_s"]  # why CI does not set it


def _mb(value: float) -> str:
    return f"{round(value):,} MB"


def test_the_engine_settings_figures_in_the_docs_are_the_measured_ones() -> None:
    without, collector, parallel = _rows(ONE_SETTING)
    assert (without["env"], collector["env"], parallel["env"]) == ({}, {"GOGC": "400"}, {"PULUMI_PARALLEL": "32"})
    cli_cpu = {name: {step: row["cpu_s"][step]["cli"] for step in ("noop_preview", "edit_up")}
               for name, row in (("without", without), ("collector", collector))}  # fmt: skip
    sentence = (
        f"the CLI's CPU in the no-change preview {cli_cpu['collector']['noop_preview']:.1f} s against "
        f"{cli_cpu['without']['noop_preview']:.1f} s without it, in the\n  edit's `up` "
        f"{cli_cpu['collector']['edit_up']:.1f} against {cli_cpu['without']['edit_up']:.1f} s; its peak memory "
        f"{_mb(collector['peak_mb']['noop_preview']['cli'])} against {_mb(without['peak_mb']['noop_preview']['cli'])}"
    )
    assert sentence in SCALE_DOC
    assert f"the first `up` took {parallel['up_s']:.1f} s against {without['up_s']:.1f} s without it" in SCALE_DOC
    # What CI adopts is what was measured, and it is what the committed counts from 42 up ran with.
    assert {**collector["env"], **parallel["env"]}.items() <= command_env("up", {}).items()
    assert all(row["env"] == command_env("up", {}) for row in _rows() if row["tenants"] >= 42)
    after = next(row for row in _rows() if row["tenants"] == 300)["peak_mb"]
    before = next(row for row in _rows(BEFORE_ENGINE_SETTINGS) if row["tenants"] == 300)["peak_mb"]
    assert (
        f"the CLI's peak {_mb(after['noop_preview']['cli'])} in the no-change preview and\n"
        f"  {_mb(after['edit_up']['cli'])} in the edit's `up` ({before['noop_preview']['cli']:,.0f} and "
        f"{before['edit_up']['cli']:,.0f} MB before)"
    ) in SCALE_DOC


def test_the_shard_budget_was_measured_with_checkpoints_near_the_default() -> None:
    budget = ShardSettings().resource_budget
    row = min((row for row in _rows() if row["up_checkpoints"]), key=lambda row: abs(row["resources"] - budget))
    assert abs(row["resources"] - budget) <= budget * 0.02
    assert row["up_s"] <= FIRST_UP_LIMIT_SECONDS
    measured = f"{row['resources']:,} resources ({row['tenants']} tenants, about the default budget of {budget:,})"
    assert f"| {measured}: {row['up_s']:.1f} s | met, measured |" in SCALE_DOC


def test_the_default_budget_keeps_a_first_up_within_the_limit() -> None:
    figures = load_engine_figures()
    assert figures is not None
    budget = ShardSettings().resource_budget
    assert figures.first_up_seconds(budget) <= FIRST_UP_LIMIT_SECONDS
    # ... and is the largest round hundred that does: a budget far below the line wastes shards.
    assert figures.first_up_seconds(budget + 100) > FIRST_UP_LIMIT_SECONDS
    within = figures.largest_first_up_within(FIRST_UP_LIMIT_SECONDS)
    assert f"within 15 minutes up to {within:,} resources" in SCALE_DOC


def test_the_operator_memory_sentence_follows_the_default_budget() -> None:
    budget = ShardSettings().resource_budget
    found = re.search(r"(\d+) MiB at the default ([\d,]+)\)", SCALE_DOC)
    assert found is not None
    assert int(found.group(1)) == program_peak_mib(budget) and int(found.group(2).replace(",", "")) == budget
