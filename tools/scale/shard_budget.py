"""Expected preview time and memory per shard, from the benchmark's measured figures.

A shard's preview runs the program for its resources in one process: its time and peak memory grow
with the number of resources (linearly: the benchmark checks it). `tools/scale/scale_figures.json` holds
the per-resource figures measured by `tenancy bench ... --figures tools/scale/scale_figures.json`
at its largest size; `tools.scale.shards layout` turns each shard's resource count into seconds and MB,
and shows what the stack's `shards.resourceBudget` amounts to, so the budget is chosen against
time and memory rather than a bare count. The program part is a lower bound of a real preview:
the engine, the providers and the API calls to the cluster and cloud come on top.

The real engine's figures (`tools/scale/engine_figures.json`, written by
`tenancy realrun --bench 30,100 --figures ...`, docs/scale.md#the-real-engine) add what a shard costs
on the engine: its no-change preview, its first `up` with the file backend's per-step checkpoints
(which grows with the square of the resources) and the CLI's memory; the layout then says whether
the budget keeps a shard's first `up` under FIRST_UP_LIMIT_SECONDS. Without that file (not measured
yet on a quiet machine) the layout says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.plan.harness import PROJECT_ROOT

FIGURES_PATH = PROJECT_ROOT / "tools" / "scale" / "scale_figures.json"
ENGINE_FIGURES_PATH = PROJECT_ROOT / "tools" / "scale" / "engine_figures.json"
# What a shard's first `up` (or a change to every tenant) may take: the promise.
FIRST_UP_LIMIT_SECONDS = 15 * 60


@dataclass(frozen=True)
class Figures:
    """Per-resource cost of the program, measured by the benchmark."""

    program_ms_per_resource: float
    kb_per_resource: float
    base_rss_mb: float
    measured: str

    def seconds(self, resources: int) -> float:
        return resources * self.program_ms_per_resource / 1000

    def megabytes(self, resources: int) -> float:
        return self.base_rss_mb + resources * self.kb_per_resource / 1024


def figures_from_row(row: dict[str, Any], machine: dict[str, Any]) -> dict[str, Any]:
    """The figures file's content from one benchmark row (the largest size measured)."""
    # CPU time, not wall: a preview on a CI runner has its CPUs to itself, the benchmark may not.
    # The run's CPU time is split over its phases in proportion to their wall time.
    program_cpu = row["cpuSeconds"] * row["phases"]["program"] / row["wallSeconds"]
    return {
        "programMsPerResource": round(1000 * program_cpu / row["resources"], 3),
        "kbPerResource": row["kbPerResource"],
        "baseRssMb": round(row["peakRssMb"] - row["kbPerResource"] * row["resources"] / 1024),
        "measured": f"{row['tenants']} typical tenants, {row['resources']} resources, CPU time on "
        f"{machine['cpus']} CPUs at load {row['load1']}",
    }


def load_figures(path: Path = FIGURES_PATH) -> Figures:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Figures(data["programMsPerResource"], data["kbPerResource"], data["baseRssMb"], data["measured"])


@dataclass(frozen=True)
class EngineFigures:
    """Per-resource cost of the real engine, measured by the real-engine bench."""

    preview_ms_per_resource: float  # the no-change preview, wall time
    first_up_ms_per_resource: float  # the first `up`'s linear part
    first_up_us_per_resource_squared: float  # its checkpoints: every step writes the whole state
    cli_kb_per_resource: float
    measured: str

    def preview_seconds(self, resources: int) -> float:
        return resources * self.preview_ms_per_resource / 1000

    def first_up_seconds(self, resources: int) -> float:
        return (
            resources * self.first_up_ms_per_resource / 1000
            + resources**2 * self.first_up_us_per_resource_squared / 1e6
        )

    def cli_megabytes(self, resources: int) -> float:
        return resources * self.cli_kb_per_resource / 1024

    def largest_first_up_within(self, seconds: float) -> int:
        """The most resources whose first `up` takes at most `seconds`."""
        a, c = self.first_up_ms_per_resource / 1000, self.first_up_us_per_resource_squared / 1e6
        if c <= 0:
            return int(seconds / a) if a > 0 else 10**9
        return int((-a + math.sqrt(a * a + 4 * c * seconds)) / (2 * c))


def _cli_peak_mb(row: dict[str, Any]) -> float:
    """The CLI's largest resident memory over the count's steps (what a runner must hold)."""
    return max(float(step.get("cli", 0.0)) for step in row["peak_mb"].values())


def engine_figures_from_rows(rows: Sequence[dict[str, Any]], cpus: int) -> dict[str, Any]:
    """The engine figures file's content from the real-engine bench's `--json` rows: the preview and
    memory from the largest count, the first `up` fitted as a·n + c·n² (least squares) over the
    counts whose first `up` kept its checkpoints; with one such count, all of it is taken as c·n²
    (an upper bound)."""
    largest = max(rows, key=lambda row: row["resources"])
    kept = [row for row in rows if row["up_checkpoints"] and row["resources"]]
    if not kept:
        raise ValueError(
            "no count ran its first `up` with checkpoints: run the bench without --first-up-without-checkpoints"
        )
    if len(kept) == 1:
        linear, quadratic = 0.0, kept[0]["up_s"] / kept[0]["resources"] ** 2
    else:
        # Normal equations of t = a n + c n^2 without intercept.
        s2 = sum(row["resources"] ** 2 for row in kept)
        s3 = sum(row["resources"] ** 3 for row in kept)
        s4 = sum(row["resources"] ** 4 for row in kept)
        t1 = sum(row["up_s"] * row["resources"] for row in kept)
        t2 = sum(row["up_s"] * row["resources"] ** 2 for row in kept)
        determinant = s2 * s4 - s3 * s3
        linear = (t1 * s4 - t2 * s3) / determinant
        quadratic = (s2 * t2 - s3 * t1) / determinant
    loads = [row["load_before"][0] for row in rows] + [row["load_after"][0] for row in rows]
    return {
        "previewMsPerResource": round(1000 * largest["noop_preview_s"] / largest["resources"], 3),
        "firstUpMsPerResource": round(1000 * max(0.0, linear), 4),
        "firstUpUsPerResourceSquared": round(1e6 * quadratic, 5),
        "cliKbPerResource": round(1024 * _cli_peak_mb(largest) / largest["resources"], 1),
        "measured": f"real engine, {', '.join(str(row['tenants']) for row in rows)} typical tenants "
        f"({largest['resources']} resources at most), {cpus} CPUs, load {min(loads):.1f} to {max(loads):.1f}",
    }


def load_engine_figures(path: Path = ENGINE_FIGURES_PATH) -> EngineFigures | None:
    """The real engine's figures, or None until they have been measured."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return EngineFigures(
        data["previewMsPerResource"],
        data["firstUpMsPerResource"],
        data["firstUpUsPerResourceSquared"],
        data["cliKbPerResource"],
        data["measured"],
    )


def shard_lines(
    resources: dict[int, int],
    tenants: dict[int, list[str]],
    budget: int,
    figures: Figures,
    engine: EngineFigures | None = None,
) -> list[str]:
    """One line per shard with the expected preview time and memory, then the budget in those terms,
    on the real engine too when its figures have been measured."""
    lines = []
    for shard, count in resources.items():
        line = (
            f"shard {shard}: {len(tenants.get(shard, []))} tenants, {count} resources, "
            f"expected preview >= {figures.seconds(count):.0f} s, ~{figures.megabytes(count):.0f} MB"
        )
        if engine is not None:
            line += (
                f"; real engine: no-change preview ~{engine.preview_seconds(count):.0f} s, first up "
                f"~{engine.first_up_seconds(count) / 60:.0f} min, CLI ~{engine.cli_megabytes(count):.0f} MB"
            )
        lines.append(line)
    lines.append(
        f"budget: {budget} resources per shard = {figures.seconds(budget):.0f} s of program time and "
        f"~{figures.megabytes(budget):.0f} MB per preview (measured: {figures.measured})"
    )
    if engine is None:
        lines.append(
            f"real engine: not measured yet ({ENGINE_FIGURES_PATH.name} is absent; docs/scale.md#the-real-engine)"
        )
        return lines
    within = engine.largest_first_up_within(FIRST_UP_LIMIT_SECONDS)
    verdict = "within" if budget <= within else "OVER"
    lines.append(
        f"real engine: a full shard's first up ~{engine.first_up_seconds(budget) / 60:.0f} min, {verdict} the "
        f"{FIRST_UP_LIMIT_SECONDS // 60}-minute limit (up to {within} resources keep it; measured: {engine.measured})"
    )
    return lines
