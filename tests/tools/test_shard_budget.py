"""The shard layout prints expected preview time and memory from the benchmark's measured figures."""

from __future__ import annotations

import re

import pytest

from tools.scale.shard_budget import FIGURES_PATH, Figures, figures_from_row, load_figures, shard_lines
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
    assert "budget: 2000 resources per shard = " in printed


def test_shard_lines_name_every_shard() -> None:
    figures = Figures(1.0, 1.0, 1.0, "test")
    lines = shard_lines({0: 10, 1: 20}, {0: ["a"], 1: ["b", "c"]}, 100, figures)
    assert lines[0].startswith("shard 0: 1 tenants, 10 resources") and lines[1].startswith("shard 1: 2 tenants")
    assert lines[2].startswith("budget: 100 resources per shard = 0 s")
