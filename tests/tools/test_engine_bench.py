"""The real engine's measured figures as committed (tools/scale/engine_bench.json, the bench's
`--json` output of the quiet run) and what docs/scale.md and the shard budget say of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from components.model.settings.stack import ShardSettings
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
SCALE_DOC = (PROJECT_ROOT / "docs" / "scale.md").read_text(encoding="utf-8")


def _rows(path: Path = BENCH) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return rows


def test_the_engine_figures_are_those_of_the_committed_bench_rows() -> None:
    assert json.loads(ENGINE_FIGURES_PATH.read_text(encoding="utf-8")) == engine_figures_from_rows(_rows(), 2)


def test_every_measured_row_is_in_the_docs_as_the_bench_prints_it() -> None:
    for row in [*_rows(), *_rows(BEFORE_TUNING)]:
        assert _markdown(row) in SCALE_DOC, f"docs/scale.md lacks the {row['tenants']}-tenant row"


def test_the_docs_state_the_ratios_and_targets_as_measured() -> None:
    by_count = {row["tenants"]: row for row in _rows()}
    at_300, at_100 = by_count[300], by_count[100]
    assert f"| {at_300['noop_preview_over_mock_plan']:.2f}x, {at_300['noop_preview_s']:.1f} s | missed |" in SCALE_DOC
    ratio_100 = f"{at_100['noop_preview_over_mock_plan']:.2f}x against {at_300['noop_preview_over_mock_plan']:.2f}x"
    assert ratio_100 in SCALE_DOC
    edit = at_300["edit_up_s"] / at_300["noop_preview_s"]  # type: ignore[operator]
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
