"""Benchmark: the real program under the mock runtime against the Pulumi SDK's own floor.

    python -m tools.bench [--tenants 10,100,1000] [--stack dev] [--out build/bench.json]

For each size it generates synthetic, realistic tenant files (two environments, a Postgres
database, two secrets, one app; plus a row of minimal tenants), runs the real `__main__.py` under
mocks in a fresh process, and then, each in another fresh process, two floors:

- the SDK floor: the same number of bare resources with a one-field input, no logic at all;
- the inputs floor: the same number of bare resources carrying exactly the inputs the program
  registered (taken from its run), still with no components, parents, options or logic.

The first ratio is what the issue's target is stated against; the second separates what the SDK
costs for the size of realistic inputs (serializing them, the engine echoing them back) from what
this program adds on top (components, typed provider classes, options, its own models and
builders). Wall seconds and CPU seconds (all threads) are both reported: CPU seconds stay
comparable when other work shares the machine. Each measurement runs in its own process, so peak
RSS is that run's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from tools.harness import PROJECT_ROOT, RecordingMonitor, new_monitor, run_program, stack_config

PROGRESS_EVERY = 5000
INPUTS_FILE = "inputs.json"

FLOOR_PROGRAM = '''
"""The SDK floor: register COUNT bare resources, no models, no components, no logic."""
import os
import pulumi

for index in range(int(os.environ["TENANCY_BENCH_COUNT"])):
    pulumi.CustomResource("tenancy:bench:Bare", f"bare-{index}", {"index": index})
'''

INPUTS_FLOOR_PROGRAM = '''
"""The inputs floor: register bare resources with the program's recorded inputs, no logic."""
import json
import os
import pulumi

with open(os.environ["TENANCY_BENCH_INPUTS"], encoding="utf-8") as handle:
    recorded = json.load(handle)
for index, inputs in enumerate(recorded):
    pulumi.CustomResource("tenancy:bench:Bare", f"bare-{index}", inputs)
'''


def typical_tenant(index: int) -> dict[str, Any]:
    """Two environments, a Postgres database, two secrets, one app: what a customer tenant carries."""
    name = f"t{index:05d}"
    return {
        "name": name,
        "displayName": f"Tenant {index}",
        "contact": f"team-{index}@example.org",
        "costCenter": f"cc-{index % 50}",
        "environments": ["dev", "prod"],
        "access": {"admin": [f"{name}-admins"], "operator": [f"{name}-ops"], "viewer": [f"{name}-viewers"]},
        "quota": {"tier": "small"},
        "nodePool": "shared",
        "databases": [{"name": "app", "engine": "postgres", "version": "16", "poolSize": 20}],
        "secrets": [{"name": "session-key", "source": "generated"}, {"name": "api-token", "source": "external"}],
        "apps": [
            {
                "name": "web",
                "chart": {"repository": "oci://registry.example.org/charts", "name": "web", "version": "1.2.3"},
            }
        ],
    }


def minimal_tenant(index: int) -> dict[str, Any]:
    name = f"m{index:05d}"
    return {"name": name, "displayName": f"Minimal {index}", "contact": "a@example.org", "costCenter": "cc"}


@dataclass
class Measurement:
    """One run in a child process."""

    resources: int
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float


class _ProgressMonitor(RecordingMonitor):
    """Prints a line to stderr every PROGRESS_EVERY registrations so long runs show they are alive."""

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        response = super().RegisterResource(request)
        if self.recorded and len(self.recorded) % PROGRESS_EVERY == 0:
            print(f"    ... {len(self.recorded)} resources registered", file=sys.stderr, flush=True)
        return response


def _child(kind: str, count: int, stack: str, workdir: Path) -> Measurement:
    """Run one measurement in this process (called in a fresh child)."""
    monitor = _ProgressMonitor(new_monitor().mocks)
    config: dict[str, str] = {}
    secret_keys: list[str] = []
    if kind == "floor":
        program = workdir / "floor.py"
        program.write_text(FLOOR_PROGRAM, encoding="utf-8")
        os.environ["TENANCY_BENCH_COUNT"] = str(count)
    elif kind == "inputs-floor":
        program = workdir / "inputs_floor.py"
        program.write_text(INPUTS_FLOOR_PROGRAM, encoding="utf-8")
        os.environ["TENANCY_BENCH_INPUTS"] = str(workdir / INPUTS_FILE)
    else:
        tenants_dir = workdir / "tenants"
        tenants_dir.mkdir()
        make = typical_tenant if kind == "typical" else minimal_tenant
        for index in range(count):
            document = make(index)
            (tenants_dir / f"{document['name']}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
        program = PROJECT_ROOT / "__main__.py"
        config, secret_keys = stack_config(stack, {"tenancy:tenantsDir": str(tenants_dir)})
    started, cpu_started = time.perf_counter(), time.process_time()
    run = run_program(stack, config, secret_keys, program=program, monitor=monitor)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if kind in ("typical", "minimal"):
        # What the inputs floor registers: every input as the engine received it (secrets and
        # unknowns as placeholders, which are as large as the strings they stand for, or larger).
        inputs = [recorded.inputs for recorded in run.resources]
        (workdir / INPUTS_FILE).write_text(json.dumps(inputs), encoding="utf-8")
    return Measurement(
        resources=len(run.resources), seconds=seconds, cpu_seconds=cpu_seconds, peak_rss_mb=peak_kb / 1024
    )


def _measure(kind: str, count: int, stack: str, workdir: str) -> Measurement:
    """Run one measurement in a fresh child process; `workdir` carries the inputs file between runs."""
    command = [
        sys.executable,
        "-m",
        "tools.bench",
        "--child",
        kind,
        "--count",
        str(count),
        "--stack",
        stack,
        "--workdir",
        workdir,
    ]
    # stderr passes through so the child's progress lines show while it runs.
    result = subprocess.run(command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"benchmark child failed: {' '.join(command)}")
    return Measurement(**json.loads(result.stdout.strip().splitlines()[-1]))


def _ms(measurement: Measurement, cpu: bool = False) -> float:
    """Milliseconds per registered resource, by the wall clock or in CPU time."""
    return 1000 * (measurement.cpu_seconds if cpu else measurement.seconds) / measurement.resources


def _row(
    label: str, tenants: int, program: Measurement, floor: Measurement, inputs_floor: Measurement
) -> dict[str, Any]:
    return {
        "tenants": tenants,
        "kind": label,
        "resources": program.resources,
        "resourcesPerTenant": round(program.resources / tenants, 2),
        "wallSeconds": round(program.seconds, 3),
        "cpuSeconds": round(program.cpu_seconds, 3),
        "peakRssMb": round(program.peak_rss_mb, 1),
        "msPerResource": round(_ms(program), 3),
        "msPerTenant": round(1000 * program.seconds / tenants, 2),
        "floorWallSeconds": round(floor.seconds, 3),
        "floorPeakRssMb": round(floor.peak_rss_mb, 1),
        "floorMsPerResource": round(_ms(floor), 3),
        "inputsFloorMsPerResource": round(_ms(inputs_floor), 3),
        "ratioToFloor": round(_ms(program) / _ms(floor), 3),
        "cpuRatioToFloor": round(_ms(program, cpu=True) / _ms(floor, cpu=True), 3),
        "ratioToInputsFloor": round(_ms(program) / _ms(inputs_floor), 3),
        "cpuRatioToInputsFloor": round(_ms(program, cpu=True) / _ms(inputs_floor, cpu=True), 3),
    }


COLUMNS = [
    ("tenants", "tenants"),
    ("kind", "kind"),
    ("resources", "resources"),
    ("resourcesPerTenant", "res/tenant"),
    ("wallSeconds", "wall s"),
    ("cpuSeconds", "CPU s"),
    ("peakRssMb", "peak RSS MB"),
    ("msPerResource", "ms/resource"),
    ("floorMsPerResource", "floor ms/res"),
    ("inputsFloorMsPerResource", "inputs floor ms/res"),
    ("ratioToFloor", "ratio to floor (wall / CPU)"),
    ("ratioToInputsFloor", "ratio to inputs floor (wall / CPU)"),
    ("msPerTenant", "ms/tenant"),
]
_PAIRED = {"ratioToFloor": "cpuRatioToFloor", "ratioToInputsFloor": "cpuRatioToInputsFloor"}


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (docs/scale.md carries one)."""
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = [f"{row[key]} / {row[_PAIRED[key]]}" if key in _PAIRED else str(row[key]) for key, _ in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", default="10,100,1000", help="comma-separated tenant counts")
    parser.add_argument("--stack", default="dev", help="stack whose settings the synthetic tenants use")
    parser.add_argument("--out", type=Path, default=Path("build/bench.json"))
    parser.add_argument("--minimal", type=int, default=100, help="also measure this many minimal tenants (0: skip)")
    parser.add_argument("--child", choices=["typical", "minimal", "floor", "inputs-floor"], help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child is not None:
        print(json.dumps(asdict(_child(args.child, args.count, args.stack, args.workdir))))
        return 0

    sizes = [int(size) for size in args.tenants.split(",") if size.strip()]
    plan = [("typical", size) for size in sizes] + ([("minimal", args.minimal)] if args.minimal else [])
    rows: list[dict[str, Any]] = []
    for step, (kind, size) in enumerate(plan, start=1):
        prefix = f"[{step}/{len(plan)}] {size} {kind} tenants"
        with tempfile.TemporaryDirectory() as workdir:
            print(f"{prefix}: program", file=sys.stderr, flush=True)
            program = _measure(kind, size, args.stack, workdir)
            print(f"{prefix}: floor ({program.resources} bare resources)", file=sys.stderr, flush=True)
            floor = _measure("floor", program.resources, args.stack, workdir)
            print(f"{prefix}: inputs floor (the same resources' inputs, no logic)", file=sys.stderr, flush=True)
            inputs_floor = _measure("inputs-floor", program.resources, args.stack, workdir)
        rows.append(_row(kind, size, program, floor, inputs_floor))
    typical = {r["tenants"]: r for r in rows if r["kind"] == "typical"}
    summary: dict[str, Any] = {"rows": rows, "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
    if 100 in typical and 1000 in typical:
        summary["linearity_msPerTenant_1000_over_100"] = round(
            typical[1000]["msPerTenant"] / typical[100]["msPerTenant"], 3
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(table(rows))
    if "linearity_msPerTenant_1000_over_100" in summary:
        print(f"\nms per tenant at 1000 / at 100: {summary['linearity_msPerTenant_1000_over_100']}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
