"""Turn CI's stack lists into the jobs a workflow runs: split stacks become their parts.

    tenancy ci-stacks --stacks '["dev", "prod"]'  >> "$GITHUB_OUTPUT"

A stack split by `tenancy shards write` has a layout file `deploy/shards/<stack>.json`
(`{"platform": "prod-platform", "shards": ["prod-shard-0", ...]}`). Its platform stack must be up
before its shards (they read its outputs), and the shards are independent of each other, so a
deployment runs in two waves: `first` (unsplit stacks and platform stacks, one after another) and
`shards` (all shards, in parallel). A split stack the Pulumi Kubernetes Operator owns (`"runner":
"operator"` in its layout, from `tenancy:shards.runner`) is in neither wave, only in `all`
(docs/adr/0032-one-runner-per-shard.md). Every entry names the GitHub environment whose credentials
and approval rules it runs under: the base stack's, so one approval of `prod` covers its shards.

It prints three step outputs, each a JSON list of `{"stack", "environment"}` for a matrix
`include`: `first`, `shards` and `all` (both waves, for previews and drift checks). It needs only
the standard library, so a workflow can run it before installing anything.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
LAYOUT_DIR = Path("deploy") / "shards"


def _layout(stack: str, root: Path) -> dict[str, Any] | None:
    """The split layout of `stack`, or None when it runs as one stack."""
    path = root / LAYOUT_DIR / f"{stack}.json"
    if not path.is_file():
        return None
    layout: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(layout.get("platform"), str) or not isinstance(layout.get("shards"), list):
        raise ValueError(f"{path}: expected {{'platform': <stack>, 'shards': [<stack>, ...]}}")
    if layout.get("runner", "ci") not in ("ci", "operator"):
        raise ValueError(f"{path}: runner: expected 'ci' or 'operator', got {layout['runner']!r}")
    return layout


def waves(stacks: list[str], root: Path = PROJECT_ROOT) -> dict[str, list[dict[str, str]]]:
    """The two deployment waves for `stacks`, in the order given."""
    first: list[dict[str, str]] = []
    shards: list[dict[str, str]] = []
    previews: list[dict[str, str]] = []
    for stack in stacks:
        layout = _layout(stack, root)
        if layout is None:
            first.append({"stack": stack, "environment": stack})
            continue
        platform = {"stack": layout["platform"], "environment": stack}
        parts = [{"stack": str(shard), "environment": stack} for shard in layout["shards"]]
        # The Pulumi Kubernetes Operator owns this split stack (docs/adr/0032-one-runner-per-shard.md):
        # CI never runs `up` on it, so the two never update one stack at once; previews still show it.
        if layout.get("runner", "ci") == "operator":
            previews.extend([platform, *parts])
            continue
        first.append(platform)
        shards.extend(parts)
    return {"first": first, "shards": shards, "all": first + shards + previews}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy ci-stacks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stacks", required=True, help='a JSON list of stack names, e.g. \'["dev", "prod"]\'')
    parser.add_argument("--root", type=Path, default=PROJECT_ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        stacks = json.loads(args.stacks)
    except json.JSONDecodeError:
        stacks = None
    if not isinstance(stacks, list) or not all(isinstance(stack, str) and stack for stack in stacks):
        print(f"--stacks: expected a JSON list of stack names, got {args.stacks!r}", file=sys.stderr)
        return 2
    try:
        result = waves(stacks, args.root)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    for key, entries in result.items():
        print(f"{key}={json.dumps(entries, separators=(',', ':'))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
