"""Which stacks and shards a change affects: plan every one offline at the base and at the head.

    tenancy affected --stacks '["dev", "prod"]' --base REV [--head REV] [--deployed FILE]  >> "$GITHUB_OUTPUT"
    tenancy affected --record '["dev"]' '["prod"]'   # stacks=<every stack and shard>, the record

A merge that changes no plan must deploy nothing: a global event (a merge touching only docs, a
refactor, one tenant's file) must not run `pulumi up` on thousands of tenants. This plans every
stack, platform stack and shard that `tools.ci.stacks` lists, once in a copy of the base commit and
once in the head (the working tree unless --head is given), each with that tree's own program and
harness in a fresh process, and keeps only those whose plan differs. It prints the same step
outputs as `tools.ci.stacks` (`first`, `shards`, `all`), filtered.

A plan here is every registered resource with its inputs, options, provider and dependencies, the
stack outputs, and the text of the stack's settings files (a rotated `secure:` value changes
nothing else the offline plan can see). Files whose effect the offline plan cannot see
(GLOBAL_FILES: provider pins, the project file, the policy pack) select everything, and so does an
unknown or empty base (a first push, a manual run): when in doubt, deploy. The scheduled drift
check always covers every stack.

Plans alone cannot see a stack that was just added to CI's stack lists (a repository variable, no
file change: its plan is the same at the base): it would never be deployed. So the deploy
workflow keeps a deployment record, the stacks and shards its last successful run left deployed
(`--record`, uploaded as an artifact), and passes it back as `--deployed FILE`: a stack or shard
missing from the record is affected whatever its plan, and a missing record file (an older run, or
one from before a backend was configured) selects everything.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from tools.ci.stacks import PROJECT_ROOT, waves

# Changes here alter what `pulumi up` does without changing the offline plan.
GLOBAL_FILES = ("requirements.txt", "Pulumi.yaml", "policy_pack/")

# Runs inside a tree (base or head) with that tree's own harness: only its long-standing API
# (stack_config, run_stack, RecordedResource.as_json) is used, so an older base plans too.
_DIGEST_RUNNER = """
import hashlib, json, sys
from pathlib import Path
from tools.plan.harness import run_stack

root = Path.cwd()
digests = {}
for entry in json.loads(sys.argv[1]):
    stack, base = entry["stack"], entry["environment"]
    run = run_stack(stack)
    settings = [(root / f"Pulumi.{name}.yaml").read_text(encoding="utf-8") for name in sorted({stack, base})
                if (root / f"Pulumi.{name}.yaml").is_file()]
    resources = [{**r.as_json(), "provider": r.provider, "dependencies": r.dependencies} for r in run.resources]
    plan = {"resources": resources, "outputs": run.outputs, "settings": settings}
    digests[stack] = hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()
print(json.dumps(digests))
"""


def plan_digests(tree: Path, entries: list[dict[str, str]]) -> dict[str, str]:
    """A digest of each entry's offline plan, planned by `tree`'s own code in a fresh process.

    Raises CalledProcessError when the tree cannot plan (the caller decides what that means).
    """
    if not entries:
        return {}
    result = subprocess.run(
        [sys.executable, "-c", _DIGEST_RUNNER, json.dumps(entries)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    )
    digests: dict[str, str] = json.loads(result.stdout.strip().splitlines()[-1])
    return digests


def changed_files(base: str, head: str | None, repo: Path) -> list[str]:
    """Paths that differ between `base` and `head` (the working tree when None), from git."""
    command = ["git", "diff", "--name-only", base] + ([head] if head else [])
    output = subprocess.run(command, cwd=repo, capture_output=True, text=True, check=True).stdout
    return [line for line in output.splitlines() if line]


def export_tree(rev: str, repo: Path, destination: Path) -> Path:
    """The files of commit `rev` under `destination` (git archive: no worktree to clean up)."""
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=repo, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(destination, filter="data")
    return destination


def select(
    entries: dict[str, list[dict[str, str]]],
    base: dict[str, str] | None,
    head: dict[str, str],
    deployed: set[str] | None = None,
) -> dict[str, list[dict[str, str]]]:
    """Keep the entries whose plan differs from the base's (all of them when there is no base),
    and, given a deployment record, every entry the record does not list (never deployed)."""
    if base is None:
        return entries
    keep = {stack for stack, digest in head.items() if base.get(stack) != digest}
    if deployed is not None:
        keep |= {entry["stack"] for entry in entries["all"] if entry["stack"] not in deployed}
    return {wave: [entry for entry in items if entry["stack"] in keep] for wave, items in entries.items()}


def read_record(path: Path) -> set[str] | None:
    """The stacks and shards a deployment record lists; None when there is no readable record."""
    try:
        names = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return set(names)


def record(stack_lists: list[list[str]], root: Path = PROJECT_ROOT) -> list[str]:
    """Every stack, platform stack and shard of the lists: what a successful run leaves deployed."""
    return [entry["stack"] for stacks in stack_lists for entry in waves(stacks, root)["all"]]


def touches_global_files(paths: list[str]) -> list[str]:
    return [path for path in paths if path.startswith(GLOBAL_FILES)]


def affected(
    stacks: list[str], base_rev: str, head_rev: str | None, repo: Path, record_path: Path | None = None
) -> dict[str, Any]:
    """The waves of `stacks`, filtered to what changed between the two commits (and, with a
    deployment record, to what it lists as deployed), and why."""
    with tempfile.TemporaryDirectory() as scratch:
        head_tree = export_tree(head_rev, repo, Path(scratch) / "head") if head_rev else repo
        everything = waves(stacks, head_tree)
        if not base_rev.strip("0"):
            return {"waves": everything, "reason": "no base commit: every stack and shard"}
        deployed = read_record(record_path) if record_path is not None else None
        if record_path is not None and deployed is None:
            return {"waves": everything, "reason": f"no deployment record at {record_path}: every stack and shard"}
        try:
            global_changes = touches_global_files(changed_files(base_rev, head_rev, repo))
        except subprocess.CalledProcessError:
            return {"waves": everything, "reason": f"base {base_rev} is not in this clone: every stack and shard"}
        if global_changes:
            return {"waves": everything, "reason": f"{', '.join(global_changes)} changed: every stack and shard"}
        head = plan_digests(head_tree, everything["all"])
        base_tree = export_tree(base_rev, repo, Path(scratch) / "base")
        known = [entry for entry in everything["all"] if (base_tree / f"Pulumi.{entry['stack']}.yaml").is_file()]
        try:
            base: dict[str, str] | None = plan_digests(base_tree, known)
        except subprocess.CalledProcessError:
            return {"waves": everything, "reason": "the base commit does not plan: every stack and shard"}
        chosen = select(everything, base, head, deployed)
        never = [e["stack"] for e in chosen["all"] if deployed is not None and e["stack"] not in deployed]
        reason = f"{len(chosen['all'])} of {len(everything['all'])} plans changed or never deployed"
        return {"waves": chosen, "reason": reason + (f" (not in the record: {', '.join(never)})" if never else "")}


def _stack_list(text: str) -> list[str] | None:
    try:
        stacks = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(stacks, list) or not all(isinstance(stack, str) and stack for stack in stacks):
        return None
    return stacks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy affected", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stacks", help='a JSON list of stack names, e.g. \'["dev", "prod"]\'')
    parser.add_argument("--base", default="", help="base commit (empty or all zeros: everything is affected)")
    parser.add_argument("--deployed", type=Path, help="the base run's deployment record (missing: everything)")
    parser.add_argument("--record", nargs="+", metavar="STACKS", help="print the record for these JSON stack lists")
    parser.add_argument("--head", help="head commit (default: the working tree)")
    parser.add_argument("--repo", type=Path, default=PROJECT_ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.record:
        lists = [_stack_list(text) for text in args.record]
        if any(stacks is None for stacks in lists):
            print(f"--record: expected JSON lists of stack names, got {args.record!r}", file=sys.stderr)
            return 2
        names = record([stacks for stacks in lists if stacks is not None], args.repo)
        print(f"stacks={json.dumps(names, separators=(',', ':'))}")
        return 0
    stacks = _stack_list(args.stacks or "")
    if stacks is None:
        print(f"--stacks: expected a JSON list of stack names, got {args.stacks!r}", file=sys.stderr)
        return 2
    try:
        result = affected(stacks, args.base, args.head, args.repo, args.deployed)
    except subprocess.CalledProcessError as error:
        print(f"{' '.join(map(str, error.cmd))[:200]} failed:\n{error.stderr}", file=sys.stderr)
        return 1
    print(f"affected: {result['reason']}", file=sys.stderr)
    for entry in result["waves"]["all"]:
        print(f"  {entry['stack']}", file=sys.stderr)
    for key, entries in result["waves"].items():
        print(f"{key}={json.dumps(entries, separators=(',', ':'))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
