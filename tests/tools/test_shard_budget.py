"""The shard layout prints expected preview time and memory from the benchmark's measured figures."""

from __future__ import annotations

import re

import pytest

from components.model.settings.stack import ShardSettings
from tools.scale.shard_budget import (
    FIGURES_PATH,
    FIRST_UP_LIMIT_SECONDS,
    EngineFigures,
    Figures,
    engine_figures_from_rows,
    figures_from_row,
    load_figures,
    shard_lines,
)
from tools.scale.shards import main


def test_expected_time_and_memory_grow_linearly_with_resources() -> None:
    figures = Figures(program_ms_per_resource=5.0, kb_per_resource=60.0, base_rss_mb=50.0, measured="test")
    assert figures.seconds(2000) == 10.0 and figures.seconds(4000) == 20.0
    assert figures.megabytes(0) == 50.0 and figures.megabytes(1024) == 110.0


def test_figures_come_from_the_largest_benchmark_row() -> None:
    row = {
        "tenants": 1000,
        "resources": 35000,
        "wallSeconds": 350.0,
        "cpuSeconds": 200.0,
        "phases": {"program": 306.25, "grouping": 0.1, "writing": 43.65},
        "kbPerResource": 60.0,
        "peakRssMb": 2100.0,
        "load1": 1.5,
    }
    figures = figures_from_row(row, {"cpus": 2})
    # Only the program counts towards a preview (no manifests are written there), in CPU time:
    # 200 CPU s * 306.25 / 350 of the wall time = 175 CPU s for 35,000 resources.
    assert figures["programMsPerResource"] == 5.0
    assert figures["baseRssMb"] == round(2100 - 60 * 35000 / 1024)
    assert "1000 typical tenants" in figures["measured"] and "2 CPUs" in figures["measured"]


def test_the_committed_figures_load() -> None:
    figures = load_figures(FIGURES_PATH)
    assert figures.program_ms_per_resource > 0 and figures.kb_per_resource > 0
    assert "typical tenants" in figures.measured


def test_layout_prints_time_and_memory_per_shard_and_for_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["layout", "--stack", "dev", "--count", "2"]) == 0
    printed = capsys.readouterr().out
    figures = load_figures()
    shards = re.findall(r"shard (\d): (\d+) tenants, (\d+) resources, expected preview >= (\d+) s, ~(\d+) MB", printed)
    assert [int(shard) for shard, *_ in shards] == [0, 1]
    for _, _, resources, seconds, megabytes in shards:
        assert int(seconds) == round(figures.seconds(int(resources)))
        assert int(megabytes) == round(figures.megabytes(int(resources)))
    assert f"budget: {ShardSettings().resource_budget} resources per shard = " in printed


def test_shard_lines_name_every_shard() -> None:
    figures = Figures(1.0, 1.0, 1.0, "test")
    lines = shard_lines({0: 10, 1: 20}, {0: ["a"], 1: ["b", "c"]}, 100, figures)
    assert lines[0].startswith("shard 0: 1 tenants, 10 resources") and lines[1].startswith("shard 1: 2 tenants")
    assert lines[2].startswith("budget: 100 resources per shard = 0 s")


def _bench_row(tenants: int, resources: int, up_s: float, checkpoints: bool = True) -> dict[str, object]:
    return {
        "tenants": tenants,
        "resources": resources,
        "up_s": up_s,
        "up_checkpoints": checkpoints,
        "noop_preview_s": resources * 0.01,
        "peak_mb": {"edit_up": {"cli": resources * 0.5}},
        "load_before": [1.2, 1.0, 1.0],
        "load_after": [1.4, 1.0, 1.0],
    }


def test_the_real_engines_first_up_is_fitted_as_linear_plus_square() -> None:
    # First ups that cost 2 ms per resource plus 0.5 us per resource squared are recovered exactly.
    rows = [_bench_row(t, n, 0.002 * n + 0.5e-6 * n * n) for t, n in ((30, 1000), (100, 3000))]
    rows.append(_bench_row(300, 9000, 1.0, checkpoints=False))  # not a checkpointed first up: ignored by the fit
    data = engine_figures_from_rows(rows, 2)
    assert data["firstUpMsPerResource"] == pytest.approx(2.0, abs=1e-3)
    assert data["firstUpUsPerResourceSquared"] == pytest.approx(0.5, abs=1e-4)
    assert data["previewMsPerResource"] == 10.0  # from the largest count
    assert data["cliKbPerResource"] == 512.0
    assert "30, 100, 300 typical tenants" in data["measured"] and "load 1.2 to 1.4" in data["measured"]
    with pytest.raises(ValueError, match="with checkpoints"):
        engine_figures_from_rows([rows[2]], 2)


def test_the_cli_memory_is_its_largest_over_the_steps() -> None:
    # A step whose CLI reading is missing (0 MB) or smaller does not lower the figure.
    row = _bench_row(100, 2000, 100.0)
    row["peak_mb"] = {"noop_preview": {"cli": 1000.0}, "edit_up": {"cli": 0.0}, "up": {"provider": 300.0}}
    assert engine_figures_from_rows([row], 2)["cliKbPerResource"] == 512.0


def test_the_layout_says_whether_a_full_shards_first_up_stays_under_the_limit() -> None:
    figures = Figures(program_ms_per_resource=5.0, kb_per_resource=60.0, base_rss_mb=50.0, measured="test")
    # 1 ms per resource and 1 ms per resource squared: n/1000 + n^2/1000 = 900 s at n = 948.
    engine = EngineFigures(1.0, 1.0, 1000.0, 100.0, "bench")
    assert engine.largest_first_up_within(FIRST_UP_LIMIT_SECONDS) == 948
    assert engine.first_up_seconds(948) <= FIRST_UP_LIMIT_SECONDS < engine.first_up_seconds(949)
    over = shard_lines({0: 2000}, {0: ["a"]}, 2000, figures, engine)
    assert "first up ~67 min" in over[0]  # 2 s + 4,000 s
    assert "OVER the 15-minute limit (up to 948 resources keep it; measured: bench)" in over[-1]
    assert "within the 15-minute limit" in shard_lines({0: 900}, {0: ["a"]}, 900, figures, engine)[-1]
    assert "not measured yet" in shard_lines({0: 900}, {0: ["a"]}, 900, figures, None)[-1]
