"""What each `tenancy` subcommand's exit codes mean: printed at the end of `tenancy COMMAND --help`.

One table for every subcommand, so each help page lists its exit codes the same way; docs/cli.md's
table says the same, cell by cell (tests/tools/test_cli.py), and the codes are those each tool's
`main` can return. 130 and 143 are the shell's codes for a command ended by Ctrl-C (128 + SIGINT) or
SIGTERM (128 + 15).
"""

from __future__ import annotations

import re

EXIT_CODES: dict[str, dict[int, str]] = {
    "affected": {
        0: "the waves printed",
        1: "a `git` command failed",
        2: "`--stacks`/`--record` is not a JSON list of stacks",
    },
    "bench": {
        0: "measured",
        2: "usage",
    },
    "bench-capture": {
        0: "measured",
        2: "usage",
    },
    "bench-catalog": {
        0: "measured",
        2: "usage",
    },
    "bootstrap": {
        0: "every step done (or, with `--dry-run`, printed)",
        1: "a step failed",
        2: "usage",
    },
    "ci-identity": {
        0: "subjects printed",
        2: "an invalid repository, stack or cloud account",
    },
    "ci-pulumi": {
        0: "the command succeeded",
        1: "it failed",
        2: "drift found (`--command drift`)",
    },
    "ci-stacks": {
        0: "matrix printed",
        2: "`--stacks` is not a JSON list of stacks, or a stack's layout is invalid",
    },
    "diff": {
        0: "diff printed",
        2: "a plan directory is missing",
        3: "the diff would delete or replace protected resources: one line per tenant names them",
    },
    "docs": {
        0: "written, or current",
        1: "`--check`: a generated region is stale",
        2: "usage",
    },
    "drift-report": {
        0: "report written",
        2: "`--stacks` invalid",
    },
    "e2e-manifests": {
        0: "written, or current",
        1: "`--check`: stale",
        2: "usage",
    },
    "engine-rules": {
        0: "no violation",
        1: "violations, one line each",
        2: "usage",
    },
    "flux-public": {
        0: "objects printed",
        2: "stdin is not JSON",
    },
    "key-migration": {
        0: "block written, preview refuses nothing",
        1: "the preview would refuse protected resources",
        2: "the stack refuses the block",
    },
    "kind-config": {
        0: "written, or current",
        1: "`--check`: stale; or the dev stack's pools cannot be rendered for kind",
        2: "usage",
    },
    "offboard": {
        0: "listing printed",
        1: "a retained resource belongs to no item",
        2: "invalid configuration; `--tenant` unknown or not decommissioned",
    },
    "plan": {
        0: "planned",
        2: "invalid stack or tenant file, or a directory it may not use",
        3: (
            "against the previous plan, protected resources would be deleted or replaced: one line per tenant "
            "names them; the refused plan is written to `OUT.refused` and `OUT` keeps the previous plan, so "
            "planning again refuses again (with `--diff`, `OUT` gets the plan). Tenants the stack's last outputs "
            "(`--stack-outputs`) do not list were never deployed and are not refused"
        ),
        130: "interrupted (Ctrl-C): `OUT` keeps the last complete plan",
    },
    "plan-all": {
        0: "every stack planned",
        1: "a stack's plan crashed",
        2: "a stack's settings or tenant files are invalid",
        3: "a stack's plan would delete or replace protected resources",
    },
    "preview-identity": {
        0: "written, or current",
        1: "`--check`: stale",
        2: "usage",
    },
    "realrun": {
        0: "every check passed",
        1: "a check failed, or the binaries could not be built",
        2: "usage",
        130: "interrupted (Ctrl-C): every process it started is stopped and every host change undone",
        143: "terminated (SIGTERM): the same",
    },
    "realrun-tools": {
        0: "every binary built or found",
        1: "a build failed, or Go is missing",
        2: "usage",
        130: "interrupted (Ctrl-C): every process it started is stopped and every host change undone",
        143: "terminated (SIGTERM): the same",
    },
    "requirements": {
        0: "written, or current",
        1: "`--check`: stale",
        2: "usage",
    },
    "schema": {
        0: "written, or current",
        1: "`--check`: stale",
        2: "usage",
    },
    "shards": {
        0: "layout printed, or files written",
        1: "`write --check`: stale or leftover files",
        2: "usage",
    },
    "status": {
        0: "every tenant healthy",
        1: "a tenant is NotReady",
        2: "invalid configuration, unknown tenant, no usable kubeconfig, unreachable cluster, no Kubernetes client",
    },
    "tenant-mix": {
        0: "written or measured",
        2: "usage",
    },
}

_CODE_SPAN = re.compile(r"`([^`]*)`")


def _unquoted(match: re.Match[str]) -> str:
    return match.group(1)


def help_text(command: str) -> str:
    """The exit codes of `command` as the last part of its help page; empty for an unknown command."""
    codes = EXIT_CODES.get(command)
    if not codes:
        return ""
    lines = ["exit codes:"]
    lines += [f"  {code:<3d} {_CODE_SPAN.sub(_unquoted, meaning)}" for code, meaning in sorted(codes.items())]
    return "\n".join(lines) + "\n"
