"""Expected preview time and memory per shard, from the benchmark's measured figures.

A shard's preview runs the program for its resources in one process: its time and peak memory grow
with the number of resources (linearly: the benchmark checks it). `tools/scale/scale_figures.json` holds
the per-resource figures measured by `tenancy bench ... --figures tools/scale/scale_figures.json`
at its largest size; `tools.scale.shards layout` turns each shard's resource count into seconds and MB,
and shows what the stack's `shards.resourceBudget` amounts to, so the budget is chosen against
time and memory rather than a bare count. The program part is a lower bound of a real preview:
the engine, the providers and the API calls to the cluster and cloud come on top.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.plan.harness import PROJECT_ROOT

FIGURES_PATH = PROJECT_ROOT / "tools" / "scale" / "scale_figures.json"


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


def shard_lines(resources: dict[int, int], tenants: dict[int, list[str]], budget: int, figures: Figures) -> list[str]:
    """One line per shard with the expected preview time and memory, then the budget in those terms."""
    lines = []
    for shard, count in resources.items():
        lines.append(
            f"shard {shard}: {len(tenants.get(shard, []))} tenants, {count} resources, "
            f"expected preview >= {figures.seconds(count):.0f} s, ~{figures.megabytes(count):.0f} MB"
        )
    lines.append(
        f"budget: {budget} resources per shard = {figures.seconds(budget):.0f} s of program time and "
        f"~{figures.megabytes(budget):.0f} MB per preview (measured: {figures.measured})"
    )
    return lines
