"""The offline plan of every stack, so a tenant valid for one stack but not another fails locally.

    python -m tools.plan.all_stacks [--tenants-dir DIR] [--stacks a,b] [--out DIR]

Runs `tools.plan.run` for each `Pulumi.<stack>.yaml` of the project (or the stacks given), all of them
even after a failure, prints one line per stack, and exits non-zero when any failed: 2 when one was
refused (its problems are printed, naming file and field), 1 when one crashed. `make plan-all`.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from tools.plan import run as plan
from tools.plan.harness import PROJECT_ROOT


def all_stacks(root: Path = PROJECT_ROOT) -> list[str]:
    """Every stack with a settings file in the project, sorted."""
    return sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in root.glob("Pulumi.*.yaml"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy plan-all", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants-dir", type=Path, help="tenant files to use instead of tenants/")
    parser.add_argument("--stacks", help="comma-separated stacks (default: every Pulumi.<stack>.yaml)")
    parser.add_argument("--out", type=Path, help="write each plan to DIR/<stack>")
    args = parser.parse_args(argv)
    stacks = args.stacks.split(",") if args.stacks else all_stacks()
    results: dict[str, int] = {}
    for stack in stacks:
        print(f"== {stack}", flush=True)
        plan_args = ["--stack", stack]
        if args.tenants_dir is not None:
            plan_args += ["--tenants-dir", str(args.tenants_dir)]
        if args.out is not None:
            plan_args += ["--out", str(args.out / stack)]
        try:
            results[stack] = plan.main(plan_args)
        except Exception:  # a crash in one stack must not hide the others' results
            traceback.print_exc()
            results[stack] = 1
    print("\n".join(f"{stack}: {'ok' if code == 0 else 'FAILED'}" for stack, code in results.items()))
    failed = set(results.values()) - {0}
    # The gravest code of any stack: invalid input (2) before refused deletions (3) before a crash (1).
    return 2 if 2 in failed else 3 if 3 in failed else 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(PROJECT_ROOT))
    raise SystemExit(main())
