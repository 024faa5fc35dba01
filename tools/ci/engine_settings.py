"""The environment a Pulumi command runs with, the same for CI, `make preview`/`make up` and the bench.

    python -m tools.ci.engine_settings preview|up|drift|destroy|refresh

prints one `NAME=VALUE` line per setting for that command; scripts/pulumi.sh exports them, and
tools/ci/pulumi_run.py and the real run's engine add them to the CLI's environment. A variable the
user has already set is left as it is, so a setting can always be overridden for one run.
Each setting is measured in docs/scale.md (#settings-measured).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

PREVIEWS = ("preview", "drift")
# The Go runtime's collector for the CLI and the provider it starts (both Go programs; the variables
# reach the provider because the CLI passes its environment to its plugins). With Go's default
# (GOGC=100: collect when the heap doubles) the CLI spent 16% of a no-change preview's CPU
# collecting; at 400 the heap may grow to five times what is live before a collection, capped by
# the soft limit below so that a large stack's CLI does not outgrow a CI runner. Measured at 100
# tenants: docs/scale.md#settings-measured.
GO_COLLECTOR = {"GOGC": "400", "GOMEMLIMIT": "4GiB"}
# How many resource operations the engine runs at once. The CLI's default is four per core
# (v3.274.1 pkg/cmd/pulumi/operations/up.go `defaultParallel`): 8 on a 2-core runner, so a first
# `up` waited on eight API round trips at a time while its cores were a third idle. Read by the CLI
# from PULUMI_PARALLEL (the `--parallel` flag's default). Measured in docs/scale.md#settings-measured.
PARALLEL = {"PULUMI_PARALLEL": "32"}


def command_env(command: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the environment adds for one command: the Go collector's pace and the engine's
    parallelism for every command, and previews skip the engine's per-step checkpoint. Names
    already in `environ` (default: this process's environment) are left out, so the caller's own
    values win.

    At v3.274.1 every preview, on every backend, runs a SnapshotManager whose persister discards
    what it is given (pkg/backend/diy/backend.go `apply`: `backend.DiscardPersister{}` when
    `kind == apitype.PreviewUpdate || opts.DryRun`; pkg/backend/httpstate/backend.go likewise). Its
    default service loop still serializes and integrity-checks the whole snapshot after each step
    (pkg/backend/snapshot.go `defaultServiceLoop` -> `saveSnapshot`), so a preview costs the square
    of the stack's resources: two thirds of a 30-tenant preview's CPU (docs/scale.md#the-real-engine).
    `PULUMI_SKIP_CHECKPOINTS` selects `unsafeServiceLoop`, which serializes once at the end; for a
    preview nothing is lost, as nothing is written. `up` keeps its checkpoints: they are what makes
    an interrupted update recoverable (pulumi/pulumi#14967 reports the same cost for updates).
    """
    settings = {**GO_COLLECTOR, **PARALLEL}
    if command in PREVIEWS:
        settings["PULUMI_SKIP_CHECKPOINTS"] = "true"
    already = os.environ if environ is None else environ
    return {name: value for name, value in settings.items() if name not in already}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tools.ci.engine_settings COMMAND", file=sys.stderr)
        return 2
    for name, value in command_env(args[0]).items():
        print(f"{name}={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
