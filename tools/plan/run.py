"""The offline plan: run the real program for a stack under mocks and show what it would create.

    python -m tools.plan --stack dev [--tenants-dir DIR] [--set tenancy:key=value]... [--out DIR [--diff BASE_DIR]]

It prints a summary: resources by type for the stack, and per tenant for the tenants that changed
since the previous plan. With --out it writes every Kubernetes object as YAML under
DIR/manifests/ and every registered resource (secrets redacted) to DIR/resources.json. On invalid
input it prints every problem to stderr, exits with code 2 and writes nothing.

The previous plan (the --diff base, else the earlier plan in --out) stands in for the stack's last
deployment: its outputs are what the program reads as the stack's last outputs (the virtual-cluster
switch-back check), and the diff against it exits with code 3, one line per tenant on stderr, when
the change would delete or replace protected resources (tools/plan/refusals.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from components.model.core.errors import ConfigurationError
from tools.plan import progress
from tools.plan.diff import diff_dirs, refusal_lines, render_markdown, report_refusals
from tools.plan.dirs import (
    as_last_deployment,
    attribute_overrides,
    commit_plan,
    deployed_tenants,
    diff_problem,
    forget_problems,
    is_plan,
    out_problem,
    previous_plan,
    read_stack_outputs,
    real_stack_outputs,
    recover_interrupted,
    set_aside_refused,
    staging_dir,
)
from tools.plan.harness import PROJECT_ROOT, ProgramRun, RecordedResource, run_stack
from tools.plan.mock_marks import manifest_header, matcher, mock_paths
from tools.plan.text import as_text

CLUSTER_SCOPE = "_cluster"
WRITERS = 8
# The shell's code for a command ended by Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130

try:  # libyaml's emitter and parser when PyYAML was built with them: several times faster.
    from yaml import CSafeDumper as _SafeDumper
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeDumper as _SafeDumper  # type: ignore[assignment]
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


def dump_yaml(document: Any) -> str:
    """YAML text of one manifest, keys sorted (libyaml folds long strings differently; same data)."""
    return yaml.dump(document, Dumper=_SafeDumper, sort_keys=True)


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_SafeLoader)


def is_kubernetes_object(resource: RecordedResource) -> bool:
    """Kubernetes API objects (not the provider, not Helm releases, which are not one object)."""
    return (
        resource.custom
        and resource.type.startswith("kubernetes:")
        and not resource.type.startswith("kubernetes:helm.sh/")
        and "apiVersion" in resource.inputs
    )


def manifest(resource: RecordedResource) -> dict[str, Any]:
    """The Kubernetes object as `kubectl apply` would see it (Pulumi-internal keys dropped)."""
    return {key: value for key, value in resource.inputs.items() if not key.startswith("__")}


def _parse_set(values: list[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for item in values:
        key, separator, value = item.partition("=")
        if not separator or ":" not in key:
            raise SystemExit(f"--set expects NAMESPACE:KEY=VALUE, got {item!r}")
        parsed = load_yaml(value) if value.strip().startswith(("[", "{")) else None
        overrides[key] = json.dumps(parsed) if parsed is not None else value
    return overrides


def group_by_tenant(run: ProgramRun) -> dict[str, list[RecordedResource]]:
    """Resources by tenant (cluster-wide ones under CLUSTER_SCOPE), from one pass over the run."""
    tenants = run.tenants()
    groups: dict[str, list[RecordedResource]] = defaultdict(list)
    for resource in run.resources:
        groups[tenants[resource.urn] or CLUSTER_SCOPE].append(resource)
    return dict(sorted(groups.items()))


# Changed tenants shown with their counts by type; past it, their names only (the diff says the rest).
MAX_TENANTS_SHOWN = 20


def summary(run: ProgramRun, changed: Collection[str] | None = None) -> str:
    """Resources by type for the whole stack, and by type per tenant only for the `changed` tenants
    (those the diff against the previous plan lists): a plan of hundreds of tenants stays a screen."""
    groups = group_by_tenant(run)
    tenants = [name for name in groups if name != CLUSTER_SCOPE]
    per_tenant = sum(len(groups[t]) for t in tenants) / len(tenants) if tenants else 0.0
    cluster = len(groups.get(CLUSTER_SCOPE, []))
    lines = [
        f"stack {run.stack}: {len(run.resources)} resources: {cluster} cluster-wide, {len(tenants)} tenants "
        f"({per_tenant:.1f} per tenant)",
        "",
        "by type:",
    ]
    for type_token, count in sorted(Counter(r.type for r in run.resources).items()):
        lines.append(f"  {count:6d}  {type_token}")
    shown = sorted(name for name in (changed or ()) if name in groups and name != CLUSTER_SCOPE)
    for scope in shown[:MAX_TENANTS_SHOWN]:
        resources = groups[scope]
        lines.append(f"\n{scope} (changed): {len(resources)} resources")
        for type_token, count in sorted(Counter(r.type for r in resources).items()):
            lines.append(f"  {count:4d}  {type_token}")
    if len(shown) > MAX_TENANTS_SHOWN:
        rest = shown[MAX_TENANTS_SHOWN:]
        lines.append(f"\nand {len(rest)} more changed tenants: {', '.join(rest)}")
    lines.append(f"\ntotal: {len(run.resources)} resources, {len(tenants)} tenants, {per_tenant:.1f} per tenant")
    return "\n".join(lines)


def _manifest_path(out: Path, scope: str, resource: RecordedResource) -> Path:
    body = resource.inputs
    metadata = body.get("metadata", {})
    namespace = metadata.get("namespace")
    name = metadata.get("name") or resource.name
    file_name = f"{body['kind'].lower()}-{namespace + '-' if namespace else ''}{name}.yaml".replace(":", "_")
    return out / "manifests" / scope / file_name


def write_plan(run: ProgramRun, out: Path, on_written: Callable[[int], object] | None = None) -> int:
    """Write manifests and resources.json under `out` (replacing an older plan); returns files written.
    `on_written` is called with 1 per file (a progress bar)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    files: list[tuple[Path, str]] = []
    mocked = matcher(run.mock_made)
    for scope, resources in group_by_tenant(run).items():
        objects = [resource for resource in resources if is_kubernetes_object(resource)]
        if objects:
            (out / "manifests" / scope).mkdir(parents=True, exist_ok=True)
        for resource in objects:
            body = manifest(resource)
            header = manifest_header(mock_paths(body, mocked))
            files.append((_manifest_path(out, scope, resource), header + dump_yaml(body)))
    tenants = run.tenants()
    records = []
    for resource in run.resources:
        record = {**resource.as_json(), "tenant": tenants[resource.urn]}
        # Fields whose values the mocks made up (tools/plan/mock_marks.py); absent when there are none.
        if paths := mock_paths(record["inputs"], mocked):
            record["mockMade"] = [f"inputs.{path}" for path in paths]
        # One resource per line: the C encoder (an indented dump is pure Python) and line-wise diffs.
        records.append(json.dumps(record, sort_keys=True))
    files.append((out / "resources.json", "[\n" + ",\n".join(records) + "\n]\n"))
    files.append((out / "outputs.json", json.dumps(run.outputs, indent=2, sort_keys=True) + "\n"))
    # Creating a file mostly waits on the filesystem; a few threads overlap those waits.
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        for _ in pool.map(_write, files):
            if on_written is not None:
                on_written(1)
    return len(files)


def _write(item: tuple[Path, str]) -> None:
    item[0].write_text(item[1], encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy plan", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", required=True, help="stack name; reads Pulumi.<stack>.yaml")
    parser.add_argument("--tenants-dir", type=Path, help="tenant files to use instead of tenants/")
    parser.add_argument("--set", action="append", default=[], metavar="NS:KEY=VALUE", help="override a config key")
    parser.add_argument("--out", type=Path, help="write manifests/ and resources.json here")
    parser.add_argument("--diff", type=Path, metavar="BASE_DIR", help="with --out: Markdown diff against that plan")
    parser.add_argument(
        "--stack-outputs",
        type=Path,
        metavar="FILE",
        help="the stack's last outputs (`pulumi stack output --json`): read as the last deployment before "
        "any earlier plan; tenants they do not list were never deployed, and removing them is not refused",
    )
    parser.add_argument(
        "--counts", action="store_true", help="print the resources by type (and per changed tenant), not one line"
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the diff as Markdown, refusals first (what the pull request comment shows), not terminal text",
    )
    parser.add_argument(
        "--forget",
        action="append",
        default=[],
        metavar="TENANT",
        help="a tenant that was only ever planned, never deployed: its removal from the earlier plan in --out "
        "is not refused, and the new plan, without it, becomes the baseline; refused for a tenant the "
        "--stack-outputs list (it was deployed: offboard it)",
    )
    args = parser.parse_args(argv)
    if args.diff is not None and args.out is None:
        parser.error("--diff compares against the plan written by --out; give --out too")
    if args.forget and args.out is None:
        parser.error("--forget drops a tenant from the earlier plan in --out; give --out too")
    try:
        with _exit_on_interrupt(args.out):
            return _plan(args)
    except KeyboardInterrupt:
        print(_interrupted(args.out), file=sys.stderr)
        return EXIT_INTERRUPTED


def _interrupted(out: Path | None) -> str:
    """The one line an interrupted plan prints, after putting the earlier plan back where needed."""
    if out is None:
        return "tenancy plan: interrupted"
    recover_interrupted(out)
    return (
        f"tenancy plan: interrupted; {out} keeps the last complete plan"
        if is_plan(out)
        else "tenancy plan: interrupted"
    )


@contextmanager
def _exit_on_interrupt(out: Path | None) -> Iterator[None]:
    """Ctrl-C ends the plan at once with one line: a KeyboardInterrupt raised inside the program run
    surfaces as whatever the SDK's event loop or a half-imported module makes of it (a traceback of
    dozens of lines). Stopping at any point is safe: a plan is written beside `out` and renamed into
    place whole (tools/plan/dirs.py). Only in the main thread, where handlers can be installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        sys.stderr.write(("\n" if sys.stderr.isatty() else "") + _interrupted(out) + "\n")
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _plan(args: argparse.Namespace) -> int:
    """Plan, write and diff as `args` say; returns the exit code."""
    if (outside := subfolder_problem(args, Path.cwd())) is not None:
        print(outside, file=sys.stderr)
        return 2
    recovered = recover_interrupted(args.out) if args.out is not None else None
    if recovered is not None:
        print(recovered, file=sys.stderr)
    refusal = out_problem(args.out) or diff_problem(args.diff)
    if refusal is not None:
        print(refusal, file=sys.stderr)
        return 2

    overrides = _parse_set(args.set)
    if args.tenants_dir is not None:
        overrides["tenancy:tenantsDir"] = str(args.tenants_dir.resolve())
    try:
        real = read_stack_outputs(args.stack_outputs) if args.stack_outputs is not None else None
        if args.forget:
            forget_problems(args.forget, args.diff or args.out, real, args.stack_outputs)
        baseline = previous_plan(args.out, args.diff)
        expected = len(json.loads((baseline / "resources.json").read_text(encoding="utf-8"))) if baseline else None
        with (
            real_stack_outputs(args.stack, real),
            as_last_deployment(args.stack, baseline),
            progress.registering(expected),
        ):
            run = run_stack(args.stack, overrides)
    except ConfigurationError as error:
        print(str(attribute_overrides(error, args.stack, overrides)), file=sys.stderr)
        return 2
    except FileNotFoundError as error:
        print(str(error), file=sys.stderr)
        return 2
    if args.out is None:
        print(summary(run) if args.counts else headline(run))
        return 0
    staging = staging_dir(args.out)
    with progress.writing(len(run.resources)) as bar:
        count = write_plan(run, staging, bar.update)
    earlier = args.out if is_plan(args.out) else None
    base, title = (args.diff, "Plan diff") if args.diff is not None else (earlier, "Changes since the last plan")
    diff = diff_dirs(base, staging) if base is not None else None
    if diff is not None:
        diff.deployed = deployed_tenants(real) if real is not None else None
        diff.forgotten = frozenset(args.forget)
    changed = [scope for scope, changes in diff.scopes.items() if not changes.empty()] if diff is not None else None
    print(summary(run, changed) if args.counts else headline(run))
    if diff is not None:
        markdown = render_markdown(diff, f"{title}: stack {args.stack}", refusals_first=args.markdown)
        print("\n" + (markdown if args.markdown else as_text(markdown)), end="")
    refused = diff is not None and bool(refusal_lines(diff))
    if refused and args.diff is None and earlier is not None:
        # A refused plan is no baseline: the next plan is compared with the earlier one again.
        where = set_aside_refused(staging, args.out)
        print(
            f"\nrefused: this plan is in {shown(where)}; {shown(args.out)} keeps the previous plan, so the next "
            "plan is compared with it again"
        )
    else:
        commit_plan(staging, args.out)
        print(f"\nwrote {count} files to {shown(args.out)}")
    # What needs action comes last: one line per refused tenant, on stderr.
    return report_refusals(diff) if diff is not None else 0


def headline(run: ProgramRun) -> str:
    """The plan in one line: resources, cluster-wide and per tenant (`--counts` for the table by type)."""
    return summary(run).split("\n", 1)[0]


def shown(path: Path) -> str:
    """A directory as the user gave it, and where that is when it is not below the current directory."""
    if path.is_absolute():
        return str(path)
    resolved = path.resolve()
    return str(path) if resolved.is_relative_to(Path.cwd()) else f"{path} ({resolved})"


def subfolder_problem(args: argparse.Namespace, cwd: Path, root: Path = PROJECT_ROOT) -> str | None:
    """Relative paths given from a subfolder of the project (`tenants/`) would land in that subfolder,
    a second plan tree with no earlier plan to diff against: refused, naming the project root."""
    if cwd == root or not cwd.is_relative_to(root):
        return None
    relative = [
        f"--{name.replace('_', '-')} {value}"
        for name, value in vars(args).items()
        if isinstance(value, Path) and not value.is_absolute()
    ]
    if not relative:
        return None
    here = cwd.relative_to(root)
    return (
        f"tenancy plan: run it from the project root {root} (this is {here}/): {', '.join(relative)} would "
        f"land in {here}/, a second plan tree with no earlier plan to diff against; cd {root}, or give "
        "absolute paths"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(PROJECT_ROOT))
    raise SystemExit(main())
