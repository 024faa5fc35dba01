"""Sort the daily drift check's results into drift and failures, for two different issues.

    tenancy drift-report --stacks "$STACKS" --results DIR --run-url URL --out DIR >> "$GITHUB_OUTPUT"

Each drift job leaves `result.json` (tools.ci.pulumi_run) in an artifact; DIR holds them all, one
folder per artifact. A stack is drifted only when its check ran to the end and found changes
(`outcome: drift`). Any other end (a failed login, a missing stack, a policy violation, a job
that stopped before the check and left no result) is a failure of the check, reported as such:
calling it drift would send people to look for changes that do not exist, and would hide
a broken pipeline behind a daily "drift" issue.

Writes `drift.md` and/or `failed.md` in --out (only when there is something to say) and prints
`drift=<bool>` and `failed=<bool>` step outputs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DRIFT_TITLE = "Drift detected between the stacks and the program"
FAILED_TITLE = "The drift check could not run"


def read_results(directory: Path) -> dict[str, str]:
    """stack -> outcome, from every result.json under `directory`."""
    outcomes: dict[str, str] = {}
    for path in sorted(directory.rglob("result.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("command") == "drift" and isinstance(record.get("stack"), str):
            outcomes[record["stack"]] = str(record.get("outcome"))
    return outcomes


def classify(stacks: list[str], outcomes: dict[str, str]) -> tuple[list[str], list[str]]:
    """(drifted, failed): a stack with no result failed before its check could say anything."""
    drifted = [stack for stack in stacks if outcomes.get(stack) == "drift"]
    failed = [stack for stack in stacks if outcomes.get(stack) not in ("drift", "succeeded")]
    return drifted, failed


def bodies(drifted: list[str], failed: list[str], outcomes: dict[str, str], run_url: str) -> dict[str, str]:
    found: dict[str, str] = {}
    if drifted:
        lines = "\n".join(f"- `{stack}`" for stack in drifted)
        found["drift.md"] = (
            f"The scheduled drift check found changes between the live state and the program: {run_url}\n\n"
            f"{lines}\n\nThe job summary of each stack shows the diff.\n"
        )
    if failed:
        lines = "\n".join(
            f"- `{stack}`: {'no result (the job stopped before the check)' if stack not in outcomes else 'failed'}"
            for stack in failed
        )
        found["failed.md"] = (
            f"The scheduled drift check could not check these stacks (this is not drift): {run_url}\n\n"
            f"{lines}\n\nThe job summary of each stack shows the output of the step that failed "
            "(backend login, stack selection, policy pack or program).\n"
        )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy drift-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stacks", required=True, help="the drift matrix: a JSON list of {stack, environment}")
    parser.add_argument("--results", required=True, type=Path, help="folder holding every drift job's result.json")
    parser.add_argument("--run-url", required=True, help="link to the workflow run, for the issue text")
    parser.add_argument("--out", required=True, type=Path, help="folder for drift.md and failed.md")
    args = parser.parse_args(argv)
    try:
        entries = json.loads(args.stacks)
        stacks = [str(entry["stack"]) for entry in entries]
    except (json.JSONDecodeError, TypeError, KeyError):
        print(f"--stacks: expected a JSON list of {{stack, environment}}, got {args.stacks!r}", file=sys.stderr)
        return 2
    outcomes = read_results(args.results) if args.results.is_dir() else {}
    drifted, failed = classify(stacks, outcomes)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in bodies(drifted, failed, outcomes, args.run_url).items():
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"drift={'true' if drifted else 'false'}")
    print(f"failed={'true' if failed else 'false'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
