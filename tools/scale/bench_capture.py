"""What the SDK's per-resource stack capture costs at this program's call depth.

    tenancy bench-capture [--tenants 20]

On every registration the Pulumi SDK walks the whole Python stack (`traceback.extract_stack`,
which also reads each frame's source line) and turns every frame below the resource's constructor
into a file URI (`_get_stack_trace` in pulumi/runtime/resource.py). The cost grows with the depth
at which resources are created, so this plans generated typical tenants with that function timed,
and counts the frames each capture keeps (those below the resource class's constructor) and how
many of them this program controls (`__main__.py` and `components/`; the rest are the runner:
runpy and asyncio here, the language host under the CLI).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pulumi.runtime.resource as sdk_resource
import yaml

from tools.plan.harness import PROJECT_ROOT, run_stack

_PROGRAM_PARTS = ((PROJECT_ROOT / "components").as_uri(), (PROJECT_ROOT / "__main__.py").as_uri())


def _program_frames(trace: Any) -> int:
    return sum(1 for frame in trace.frames if frame.pc.uri.startswith(_PROGRAM_PARTS))


def measure_capture(tenants: int, stack_name: str = "dev") -> dict[str, Any]:
    """Plan `tenants` typical tenants with the SDK's stack capture timed; returns the figures."""
    from tools.scale.bench_tenants import typical_tenant

    original = sdk_resource._get_stack_trace
    spent = [0.0]
    depths: list[int] = []
    program: list[int] = []

    def timed() -> Any:
        started = time.perf_counter()
        result = original()
        spent[0] += time.perf_counter() - started
        depths.append(len(result.frames))
        program.append(_program_frames(result))
        return result

    with tempfile.TemporaryDirectory() as workdir:
        for index in range(tenants):
            document = typical_tenant(index)
            (Path(workdir) / f"{document['name']}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
        sdk_resource._get_stack_trace = timed
        try:
            started = time.perf_counter()
            run = run_stack(stack_name, {"tenancy:tenantsDir": workdir})
            total = time.perf_counter() - started
        finally:
            sdk_resource._get_stack_trace = original
    calls = len(depths)
    return {
        "resources": len(run.resources),
        "captures": calls,
        "captureSeconds": round(spent[0], 3),
        "programSeconds": round(total, 3),
        "captureShare": round(spent[0] / total, 3),
        "msPerCapture": round(1000 * spent[0] / calls, 3),
        "medianCapturedFrames": statistics.median(depths),
        "medianProgramFrames": statistics.median(program),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy bench-capture", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", type=int, default=20, help="how many tenants to plan (default 20)")
    parser.add_argument("--stack", default="dev", help="stack whose settings the tenants use (default dev)")
    args = parser.parse_args(argv)
    figures = measure_capture(args.tenants, args.stack)
    for key, value in figures.items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(PROJECT_ROOT))
    raise SystemExit(main())
