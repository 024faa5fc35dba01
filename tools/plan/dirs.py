"""What `tenancy plan` may do with the directories it is given, and how it words refusals.

`--out DIR` replaces DIR, so it must be an earlier plan (or empty, or new): a typo such as `--out .`
or `--out ~` must not delete a checkout. The earlier plan is kept beside it as `DIR.previous`, so
`make plan` can show what changed since the last plan of that stack. `--diff BASE` must be a plan.
Problems from `--set` overrides are attributed to `--set`, not to the stack file they override.

Offline there is no deployed stack to ask for its last outputs; the previous plan stands in for it
(`as_last_deployment`), so checks that compare with the last deployment (a virtual cluster switched
back to a namespace: components/vcluster/previous.py) work on `make plan` too.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
            "tools.plan.run replaces its --out directory, so give a new or empty directory"
        )
    return None


def diff_problem(base: Path | None) -> str | None:
    """Why `--diff` has nothing to compare against, or None."""
    if base is not None and not (base / "resources.json").is_file():
        return f"--diff {base}: no plan there (no resources.json); write one first with --out {base}"
    return None


def keep_previous(out: Path) -> Path | None:
    """Move an earlier plan in `out` to `out.previous` (replacing an older one); return its path."""
    if not out.is_dir() or not is_plan(out):
        return None
    previous = out.with_name(out.name + ".previous")
    if previous.exists():
        shutil.rmtree(previous)
    out.rename(previous)
    return previous


def attribute_overrides(error: ConfigurationError, stack: str, overrides: dict[str, str]) -> ConfigurationError:
    """The same problems, with those in a key `--set` replaced charged to `--set KEY`."""
    stack_file = f"Pulumi.{stack}.yaml"

    def source(problem: Problem) -> Problem:
        for key in overrides:
            if problem.file == stack_file and (
                problem.field == key or problem.field.startswith((f"{key}.", f"{key}["))
            ):
                return Problem(f"--set {key}", problem.field, problem.message)
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
