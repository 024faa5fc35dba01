"""What `tenancy plan` may do with the directories it is given, and how it words refusals.

`--out DIR` replaces DIR, so it must be an earlier plan (or empty, or new): a typo such as `--out .`
or `--out ~` must not delete a checkout. A plan is written to `DIR.partial` first and put in place by
two renames only when it is complete (`commit_plan`): the earlier plan moves to `DIR.previous`, so
`make plan` can show what changed since the last plan of that stack. Interrupted (Ctrl-C, a killed CI
job) before those renames, DIR is untouched; between them, the next plan puts the earlier plan back
first (`recover_interrupted`), so an interrupted plan never leaves a stack without its baseline, which
would let a removed tenant's data through unrefused. A plan the engine would refuse (exit code 3) is no
baseline: it goes to `DIR.refused` and the earlier plan stays in DIR. `--diff BASE` must be a plan.
Problems from `--set` overrides are attributed to `--set`, not to the stack file they override.

Offline there is no deployed stack to ask for its last outputs; the previous plan stands in for it
(`as_last_deployment`), so checks that compare with the last deployment (a virtual cluster switched
back to a namespace: components/vcluster/previous.py) work on `make plan` too. Where the real
outputs are at hand (`--stack-outputs`, saved from `pulumi stack output --json`), they come first,
and a tenant they do not list was never deployed: removing its file deletes nothing.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from components.model.core.errors import ConfigurationError, Problem
from components.vcluster.previous import DEFAULT_ORGANIZATION
from tools.plan.harness import PREVIOUS_STACK_OUTPUTS, PROJECT_NAME

PLAN_ENTRIES = {"manifests", "resources.json", "outputs.json"}


def is_plan(directory: Path) -> bool:
    """A directory `write_plan` wrote: resources.json, and nothing but plan entries."""
    return (directory / "resources.json").is_file() and {p.name for p in directory.iterdir()} <= PLAN_ENTRIES


def out_problem(out: Path | None) -> str | None:
    """Why `--out` must not be used, or None."""
    if out is None or not out.exists():
        return None
    if not out.is_dir():
        return f"--out {out}: is a file, not a plan directory"
    if any(out.iterdir()) and not is_plan(out):
        return (
            f"--out {out}: not an earlier plan (no resources.json, or other files in it); "
            "`tenancy plan` replaces its --out directory, so give a new or empty directory"
        )
    return None


def diff_problem(base: Path | None) -> str | None:
    """Why `--diff` has nothing to compare against, or None."""
    if base is not None and not (base / "resources.json").is_file():
        return f"--diff {base}: no plan there (no resources.json); write one first with --out {base}"
    return None


def sibling(out: Path, suffix: str) -> Path:
    """`out.partial`, `out.previous`, `out.refused`: the plan directories kept beside `out` (`.` and
    `..` have no name of their own: beside the directory they stand for)."""
    named = out.resolve() if out.name in ("", "..") else out
    return named.with_name(named.name + suffix)


def staging_dir(out: Path) -> Path:
    """Where a plan is written before it replaces `out` (removed first if an earlier run left it)."""
    staging = sibling(out, ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    return staging


def _unfinished(out: Path) -> bool:
    """`out` missing, or holding plan entries without resources.json: what an interrupted write leaves."""
    if not out.exists():
        return True
    return out.is_dir() and not (out / "resources.json").exists() and {p.name for p in out.iterdir()} <= PLAN_ENTRIES


def recover_interrupted(out: Path) -> str | None:
    """Undo what an interrupted plan left: a half-written `out.partial` is removed and, where `out`
    was already moved aside (or left half-written), the earlier plan comes back from `out.previous`.
    Returns a line saying so, or None when there was nothing to undo."""
    if not out.resolve().name:
        return None  # `/`: nothing can stand beside it (and out_problem refuses it)
    staging, previous = sibling(out, ".partial"), sibling(out, ".previous")
    interrupted = staging.exists() or (out.is_dir() and not is_plan(out) and any(out.iterdir()))
    if not interrupted:
        return None
    note = None
    if _unfinished(out) and previous.is_dir() and is_plan(previous):
        if out.exists():
            shutil.rmtree(out)
        previous.rename(out)
        note = f"{out}: an earlier plan was interrupted; its baseline is back from {previous}"
    if staging.exists():
        shutil.rmtree(staging)
    return note


def commit_plan(staging: Path, out: Path) -> Path | None:
    """Put the complete plan in `staging` in place of `out`: the earlier plan moves to `out.previous`
    (replacing an older one), then `staging` becomes `out`. Returns `out.previous`, or None when
    `out` held no earlier plan."""
    previous = sibling(out, ".previous")
    had_plan = out.is_dir() and is_plan(out)
    if had_plan:
        if previous.exists():
            shutil.rmtree(previous)
        out.rename(previous)
    elif out.exists():
        shutil.rmtree(out)  # an empty directory (out_problem allows no other)
    staging.rename(out)
    return previous if had_plan else None


def set_aside_refused(staging: Path, out: Path) -> Path:
    """A refused plan is not a baseline: it goes from `staging` to `out.refused` (replacing an older
    one) and `out` keeps the earlier plan, so the next plan is diffed against it again and says
    refused again until the input changes. Returns where the refused plan is."""
    refused = sibling(out, ".refused")
    if refused.exists():
        shutil.rmtree(refused)
    staging.rename(refused)
    return refused


def read_stack_outputs(path: Path) -> dict[str, Any]:
    """The stack's last deployed outputs from `pulumi stack output --json` saved to `path`."""
    try:
        outputs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ConfigurationError(
            [Problem(f"--stack-outputs {path}", "(file)", f"not the JSON of `pulumi stack output --json`: {error}")]
        ) from error
    if not isinstance(outputs, dict):
        raise ConfigurationError(
            [Problem(f"--stack-outputs {path}", "(file)", "not the JSON of `pulumi stack output --json` (no object)")]
        )
    return outputs


def planned_tenants(plan: Path) -> frozenset[str]:
    """The tenants a plan written by `tenancy plan --out` has resources of."""
    records = json.loads((plan / "resources.json").read_text(encoding="utf-8"))
    return frozenset(record["tenant"] for record in records if record.get("tenant"))


def forget_problems(
    tenants: list[str], baseline: Path | None, outputs: dict[str, Any] | None, outputs_file: Path | None
) -> None:
    """Raise ConfigurationError unless each of `tenants` (`--forget`) may be dropped from the baseline:
    it must be in the earlier plan, and not in the stack's real last outputs, which say it was deployed."""
    problems = []
    planned = planned_tenants(baseline) if baseline is not None and is_plan(baseline) else frozenset()
    deployed = deployed_tenants(outputs) if outputs is not None else frozenset()
    for tenant in tenants:
        if tenant in deployed:
            problems.append(
                Problem(
                    "--forget",
                    tenant,
                    f"the stack's last outputs ({outputs_file}) list tenant {tenant}: it was deployed, and "
                    f"forgetting it would leave its data unprotected; offboard it instead (set lifecycle: "
                    f"decommissioned first: docs/operations.md#offboarding-a-tenant)",
                )
            )
        elif tenant not in planned:
            where = f"the earlier plan in {baseline}" if baseline is not None else "no earlier plan"
            problems.append(Problem("--forget", tenant, f"{where} has no tenant {tenant}: nothing to forget"))
    if problems:
        raise ConfigurationError(problems)


def deployed_tenants(outputs: dict[str, Any]) -> frozenset[str]:
    """The tenants the stack's last deployment exported (`tenants.<name>`)."""
    tenants = outputs.get("tenants")
    return frozenset(tenants) if isinstance(tenants, dict) else frozenset()


@contextmanager
def real_stack_outputs(stack: str, outputs: dict[str, Any] | None) -> Iterator[None]:
    """While planning `stack`, answer the engine's `readStackOutputs` with its real last outputs
    (they come before the previous plan: `as_last_deployment` leaves them in place)."""
    name = f"{DEFAULT_ORGANIZATION}/{PROJECT_NAME}/{stack}"
    if outputs is None or name in PREVIOUS_STACK_OUTPUTS:
        yield
        return
    PREVIOUS_STACK_OUTPUTS[name] = outputs
    try:
        yield
    finally:
        del PREVIOUS_STACK_OUTPUTS[name]


def attribute_overrides(error: ConfigurationError, stack: str, overrides: dict[str, str]) -> ConfigurationError:
    """The same problems, with those in a key `--set` replaced charged to `--set KEY`, and so are those
    of another key of the stack file whose message names the replaced key (`readOnlyEnvironments` names
    `tenancy:environments`, which `--set` changed)."""
    stack_file = f"Pulumi.{stack}.yaml"

    def source(problem: Problem) -> Problem:
        for key in overrides:
            if problem.file == stack_file and (
                problem.field == key or problem.field.startswith((f"{key}.", f"{key}["))
            ):
                return Problem(f"--set {key}", problem.field, problem.message)
        for key in overrides:
            # A key of the file that conflicts with the overridden one, and says so by its name.
            if problem.file == stack_file and re.search(rf"{re.escape(key)}\b(?![.\w-])", problem.message):
                return Problem(f"--set {key}", f"{problem.field} ({stack_file})", problem.message)
        return problem

    return ConfigurationError([source(problem) for problem in error.problems])


def previous_plan(out: Path | None, base: Path | None) -> Path | None:
    """The plan that stands for the last deployment: the `--diff` base, else the earlier plan in `--out`."""
    if base is not None:
        return base
    if out is not None and out.is_dir() and is_plan(out):
        return out
    return None


@contextmanager
def as_last_deployment(stack: str, plan: Path | None) -> Iterator[None]:
    """While planning `stack`, answer the engine's `readStackOutputs` for it with `plan`'s outputs.json.

    Outputs already served for the stack (a test's real stack outputs) are left as they are: real
    outputs, where someone has them at hand, say more than a plan."""
    name = f"{DEFAULT_ORGANIZATION}/{PROJECT_NAME}/{stack}"
    outputs_file = plan / "outputs.json" if plan is not None else None
    if name in PREVIOUS_STACK_OUTPUTS or outputs_file is None or not outputs_file.is_file():
        yield
        return
    PREVIOUS_STACK_OUTPUTS[name] = json.loads(outputs_file.read_text(encoding="utf-8"))
    try:
        yield
    finally:
        del PREVIOUS_STACK_OUTPUTS[name]
