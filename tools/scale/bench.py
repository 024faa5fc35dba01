"""Benchmark: `tenancy plan` end to end, as users run it, beside three floors measured in the same run.

    tenancy bench --sizes 10,100,1000,3000 --markdown --figures tools/scale/scale_figures.json

For each size it generates typical tenants (copies of one template: two environments, a Postgres
database, two secrets, one app) and, each in a fresh process (tools/scale/bench_runs.py):

- **plan**: the real `__main__.py` under mocks, grouping with the summary, writing every manifest;
- **typed floor**: the same typed resource classes with the same inputs and options in a flat loop,
  what any program creating these objects pays (the target: plan within 1.25x of it);
- **inputs floor**: bare resources with the same inputs; **SDK floor**: bare one-field resources.

Wall and CPU seconds are both reported (CPU stays comparable when others share the machine), with
the load average and CPU count at the time, and peak memory per resource (peak RSS above the
process's RSS after imports). `--markdown` prints the table docs/scale.md and README.md carry.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tools.plan.harness import PROJECT_ROOT
from tools.scale.bench_runs import Measurement, measure
from tools.scale.shard_budget import figures_from_row

FLOORS = ("typed-floor", "inputs-floor", "floor")


def _measure(kind: str, count: int, stack: str, workdir: str) -> Measurement:
    """Run one measurement in a fresh child process; `workdir` carries the floors' inputs."""
    command = [sys.executable, "-m", "tools.scale.bench", "--child", kind, "--count", str(count), "--stack", stack]
    command += ["--workdir", workdir]
    result = subprocess.run(command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"benchmark child failed: {' '.join(command)}")
    return Measurement(**json.loads(result.stdout.strip().splitlines()[-1]))


def _seconds(measurement: Measurement | None, cpu: bool = False) -> float | None:
    if measurement is None:
        return None
    return round(measurement.cpu_seconds if cpu else measurement.seconds, 2)


def _ratio(numerator: float, denominator: float | None) -> float | None:
    return round(numerator / denominator, 2) if denominator else None


def _row(kind: str, tenants: int, plan: Measurement, floors: dict[str, Measurement]) -> dict[str, Any]:
    """One size: the plan, the floors that were measured (None for those skipped), ratios, memory."""
    typed, inputs, bare = (floors.get(name) for name in FLOORS)
    return {
        "tenants": tenants,
        "kind": kind,
        "resources": plan.resources,
        "typedResources": typed.resources if typed else None,
        "resourcesPerTenant": round(plan.resources / tenants, 2),
        "wallSeconds": round(plan.seconds, 2),
        "cpuSeconds": round(plan.cpu_seconds, 2),
        "phases": plan.phases,
        "typedFloorSeconds": _seconds(typed),
        "inputsFloorSeconds": _seconds(inputs),
        "floorSeconds": _seconds(bare),
        "ratioToTypedFloor": _ratio(plan.seconds, _seconds(typed)),
        "cpuRatioToTypedFloor": _ratio(plan.cpu_seconds, _seconds(typed, cpu=True)),
        "ratioToInputsFloor": _ratio(plan.seconds, _seconds(inputs)),
        "ratioToFloor": _ratio(plan.seconds, _seconds(bare)),
        "msPerTenant": round(1000 * plan.seconds / tenants, 1),
        "cpuMsPerTenant": round(1000 * plan.cpu_seconds / tenants, 1),
        "peakRssMb": round(plan.peak_rss_mb),
        "kbPerResource": round(1024 * (plan.peak_rss_mb - plan.start_rss_mb) / plan.resources, 1),
        "typedFloorKbPerResource": (
            round(1024 * (typed.peak_rss_mb - typed.start_rss_mb) / typed.resources, 1) if typed else None
        ),
        "load1": round(max(m.load[0] for m in (plan, *floors.values())), 2),
    }


COLUMNS = [
    ("tenants", "tenants"),
    ("resources", "resources"),
    ("wallSeconds", "plan s"),
    ("phases", "program / grouping / writing s"),
    ("typedFloorSeconds", "typed floor s"),
    ("inputsFloorSeconds", "inputs floor s"),
    ("floorSeconds", "SDK floor s"),
    ("ratioToTypedFloor", "plan / typed floor (wall, CPU)"),
    ("ratioToInputsFloor", "/ inputs floor"),
    ("ratioToFloor", "/ SDK floor"),
    ("msPerTenant", "ms/tenant (wall, CPU)"),
    ("kbPerResource", "KB/resource (typed floor)"),
    ("load1", "max load"),
]


def _cell(row: dict[str, Any], key: str) -> str:
    if row.get(key, "") is None:
        return "-"
    if key == "phases":
        return " / ".join(f"{value:.1f}" for value in row["phases"].values())
    if key == "ratioToTypedFloor":
        return f"{row[key]}x, {row['cpuRatioToTypedFloor']}x"
    if key == "msPerTenant":
        return f"{row[key]}, {round(1000 * row['cpuSeconds'] / row['tenants'], 1)}"
    if key == "kbPerResource":
        return f"{row[key]} ({row['typedFloorKbPerResource'] or '-'})"
    return str(row[key])


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (docs/scale.md carries one)."""
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_cell(row, key) for key, _ in COLUMNS) + " |" for row in rows]
    return "\n".join(lines)


def markdown(result: dict[str, Any]) -> str:
    """The table plus the machine and the linearity line, ready to paste."""
    machine = result["machine"]
    lines = [
        f"{machine['cpus']} CPUs, load average {machine['loadBefore']} before and {machine['loadAfter']} after, "
        f"Python {machine['python']}, stack `{result['stack']}`:",
        "",
        table(result["rows"]),
    ]
    if "linearity" in result:
        lines += [
            "",
            f"ms per tenant at 1,000 / at 100: **{result['linearity']}** by the wall clock, "
            f"**{result['cpuLinearity']}** in CPU time (target <= 1.1)",
        ]
    return "\n".join(lines)


def run(sizes: list[int], stack: str, out: Path, floor_kinds: tuple[str, ...] = FLOORS) -> dict[str, Any]:
    """Measure every size (plan, then the floors); writes `out` after each measurement."""
    result: dict[str, Any] = {"stack": stack, "rows": [], "machine": _machine()}
    for step, size in enumerate(sizes, start=1):
        with tempfile.TemporaryDirectory() as workdir:
            print(f"[{step}/{len(sizes)}] {size} typical tenants: plan", file=sys.stderr, flush=True)
            plan = _measure("typical", size, stack, workdir)
            floors: dict[str, Measurement] = {}
            for kind in floor_kinds:
                _write(out, {**result, "partial": _row("typical", size, plan, floors)})
                print(f"[{step}/{len(sizes)}] {size} typical tenants: {kind}", file=sys.stderr, flush=True)
                floors[kind] = _measure(kind, plan.resources, stack, workdir)
        result["rows"].append(_row("typical", size, plan, floors))
        result.update(linearity(result["rows"]))
        result["machine"]["loadAfter"] = [round(x, 2) for x in os.getloadavg()]
        _write(out, result)
    return result


def _write(out: Path, result: dict[str, Any]) -> None:
    """Results so far, so a run stopped halfway keeps what it measured."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def linearity(rows: list[dict[str, Any]]) -> dict[str, float]:
    """ms per tenant at 1,000 over at 100, by the wall clock and in CPU time (when both were run)."""
    by_size = {row["tenants"]: row for row in rows}
    if 100 not in by_size or 1000 not in by_size:
        return {}
    small, large = by_size[100], by_size[1000]
    return {
        "linearity": round(large["wallSeconds"] / small["wallSeconds"] / 10, 3),
        "cpuLinearity": round(large["cpuSeconds"] / small["cpuSeconds"] / 10, 3),
    }


def _machine() -> dict[str, Any]:
    load = [round(x, 2) for x in os.getloadavg()]
    return {"cpus": os.cpu_count(), "python": sys.version.split()[0], "loadBefore": load, "loadAfter": load}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", "--tenants", default="10,100,1000,3000", help="comma-separated tenant counts")
    parser.add_argument("--stack", default="dev", help="stack whose settings the generated tenants use")
    parser.add_argument(
        "--out", type=Path, default=Path("build/bench.json"), help="where the figures go as JSON (build/bench.json)"
    )
    parser.add_argument("--markdown", action="store_true", help="print the Markdown table for docs/scale.md")
    parser.add_argument("--floors", default=",".join(FLOORS), help="floors to measure (default: all three)")
    parser.add_argument("--figures", type=Path, help="also write the largest size's per-resource figures here")
    parser.add_argument("--child", choices=["typical", "minimal", *FLOORS], help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(asdict(measure(args.child, args.count, args.stack, args.workdir))))
        return 0
    sizes = [int(size) for size in args.sizes.split(",") if size.strip()]
    floor_kinds = tuple(kind for kind in FLOORS if kind in args.floors.split(","))
    result = run(sizes, args.stack, args.out, floor_kinds)
    if args.figures is not None:
        figures = figures_from_row(max(result["rows"], key=lambda row: row["tenants"]), result["machine"])
        args.figures.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(markdown(result) if args.markdown else json.dumps(result, indent=2))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
