"""The `tenancy` command: one entry point with a subcommand for each tool (docs/cli.md).

    tenancy --help                 # the subcommands
    tenancy plan --stack dev --out build/plan/dev
    tenancy <subcommand> --help    # that tool's options

Each subcommand hands its arguments unchanged to the tool's own `main(argv)`, so a subcommand and
the tool behave the same (options, output, exit codes) and the tools stay testable on their own.
`tenancy` itself and every tool parse with argparse, so every help page has one style.
Imports are lazy, one per subcommand: `tenancy --help` and a quick tool do not load the Pulumi
program. Exit codes: 0 success, 1 a failure or a finding the tool reports (stale files, violations,
an unhealthy tenant), 2 invalid input, 3 a plan that would delete or replace protected data; the
per-tool table is in docs/cli.md (tests/tools/test_cli.py).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from tools.cli.exit_codes import help_text

Tool = Callable[[list[str]], int]

DESCRIPTION = "Multi-tenant Kubernetes platform: plan, check and operate the tenants of a stack."
EPILOG = (
    "Run `tenancy COMMAND --help` for a command's options. Exit codes: 0 success, 1 a failure or a finding "
    "the command reports, 2 invalid input, 3 a plan that would delete or replace protected data (docs/cli.md)."
)


@dataclass(frozen=True)
class Command:
    """One subcommand: its one-line summary and the tool it runs."""

    name: str
    summary: str
    run: Tool


COMMANDS: dict[str, Command] = {}


def _tool(name: str, summary: str) -> Callable[[Tool], Tool]:
    """Register the decorated function as subcommand `name`; it gets the raw arguments and returns the exit code."""

    def register(run: Tool) -> Tool:
        COMMANDS[name] = Command(name, summary, run)
        return run

    return register


def parser() -> argparse.ArgumentParser:
    """`tenancy` itself, in the same (argparse) style as every subcommand's own help."""
    top = argparse.ArgumentParser(
        prog="tenancy",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = top.add_subparsers(title="commands", metavar="COMMAND", dest="command")
    for command in sorted(COMMANDS.values(), key=lambda c: c.name):
        # Each subcommand's options are its tool's own: `tenancy plan --help` is answered by the tool.
        commands.add_parser(command.name, help=command.summary, add_help=False)
    return top


@_tool("plan", "Plan a stack offline under mocks; write manifests and diff against a saved plan.")
def _plan(argv: list[str]) -> int:
    from tools.plan.run import main

    return main(argv)


@_tool("realrun", "Run the dev stack's real `pulumi up` against a real control plane built here.")
def _realrun(argv: list[str]) -> int:
    from tools.realrun.run import main

    return main(argv)


@_tool("realrun-tools", "Build or find the real run's binaries (Pulumi CLI, provider, control plane).")
def _realrun_tools(argv: list[str]) -> int:
    from tools.realrun.toolchain import main

    return main(argv)


@_tool("plan-all", "Plan every stack offline; non-zero when any stack fails (make plan-all).")
def _plan_all(argv: list[str]) -> int:
    from tools.plan.all_stacks import main

    return main(argv)


@_tool("diff", "Diff two saved plans (what the pull request comment shows).")
def _diff(argv: list[str]) -> int:
    from tools.plan.diff import main

    return main(argv)


@_tool("status", "What a live cluster runs for each tenant, against what the program renders.")
def _status(argv: list[str]) -> int:
    from tools.operations.status import main

    return main(argv)


@_tool("offboard", "Retained resources of decommissioned tenants, and the commands that delete them.")
def _offboard(argv: list[str]) -> int:
    from tools.operations.offboard import main

    return main(argv)


@_tool("shards", "Lay out or write the split stacks (platform and shards) of a large stack.")
def _shards(argv: list[str]) -> int:
    from tools.scale.shards import main

    return main(argv)


@_tool("affected", "Which stacks and shards a change touches (the deploy workflow's matrix).")
def _affected(argv: list[str]) -> int:
    from tools.plan.affected import main

    return main(argv)


@_tool("bench", "Time the plan end to end beside the typed, inputs and SDK floors.")
def _bench(argv: list[str]) -> int:
    from tools.scale.bench import main

    return main(argv)


@_tool("bench-capture", "Profile one plan run: how much of its time the program's own code takes.")
def _bench_capture(argv: list[str]) -> int:
    from tools.scale.bench_capture import main

    return main(argv)


@_tool("bench-catalog", "Time reading and checking large tenant catalogs.")
def _bench_catalog(argv: list[str]) -> int:
    from tools.scale.bench_catalog import main

    return main(argv)


@_tool("tenant-mix", "Generate or measure a mix of typical and hard tenants.")
def _tenant_mix(argv: list[str]) -> int:
    from tools.scale.tenant_mix import main

    return main(argv)


@_tool("docs", "Regenerate (--write) or check (--check) the generated parts of docs/.")
def _docs(argv: list[str]) -> int:
    from tools.generators.docs import main

    return main(argv)


@_tool("schema", "Regenerate (--write) or check (--check) schemas/tenant.schema.json.")
def _schema(argv: list[str]) -> int:
    from tools.generators.schema import main

    return main(argv)


@_tool("requirements", "Export the hashed pip requirement files from uv.lock, or check them.")
def _requirements(argv: list[str]) -> int:
    from tools.generators.requirements import main

    return main(argv)


@_tool("key-migration", "Write the per-environment key block from a `pulumi stack export`.")
def _key_migration(argv: list[str]) -> int:
    from tools.operations.key_migration import main

    return main(argv)


@_tool("engine-rules", "Check a written plan against the Pulumi engine's rules.")
def _engine_rules(argv: list[str]) -> int:
    from tools.plan.engine_rules import main

    return main(argv)


@_tool("kind-config", "Regenerate or check kind/cluster.yaml from the dev stack.")
def _kind_config(argv: list[str]) -> int:
    from tools.generators.kind_config import main

    return main(argv)


@_tool("preview-identity", "Regenerate or check the preview identities' roles in deploy/identities/.")
def _preview_identity(argv: list[str]) -> int:
    from tools.ci.preview_identity import main

    return main(argv)


@_tool("bootstrap", "Backend, secrets provider, stacks and CI identities of a stack (scripts/bootstrap.sh).")
def _bootstrap(argv: list[str]) -> int:
    from tools.operations.bootstrap import main

    return main(argv)


@_tool("ci-identity", "Print the CI identities' subjects for a repository and stack.")
def _ci_identity(argv: list[str]) -> int:
    from tools.ci.identity import main

    return main(argv)


@_tool("ci-pulumi", "Run one Pulumi command (preview, up, drift) on one stack, as CI does.")
def _ci_pulumi(argv: list[str]) -> int:
    from tools.ci.pulumi_run import main

    return main(argv)


@_tool("ci-stacks", "Expand stacks to their platform stack and shards (a workflow matrix).")
def _ci_stacks(argv: list[str]) -> int:
    from tools.ci.stacks import main

    return main(argv)


@_tool("drift-report", "Summarise the drift workflow's results into a report.")
def _drift_report(argv: list[str]) -> int:
    from tools.ci.drift_report import main

    return main(argv)


@_tool("e2e-manifests", "Regenerate or check scripts/e2e/cases/ from the admission cases.")
def _e2e_manifests(argv: list[str]) -> int:
    from tools.generators.e2e_manifests import main

    return main(argv)


@_tool("flux-public", "From `kubectl get ... -o json` on stdin, the Flux objects from public sources.")
def _flux_public(argv: list[str]) -> int:
    from tools.ci.flux_public import main

    return main(argv)


def main(argv: list[str] | None = None) -> int:
    """The console script: run `tenancy` and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    top = parser()
    if not args or args[0] in ("-h", "--help"):
        top.print_help()
        return 0 if args else 2
    name, rest = args[0], args[1:]
    command = COMMANDS.get(name)
    if command is None:
        close = difflib.get_close_matches(name, COMMANDS, n=1)
        guess = f" (did you mean {close[0]!r}?)" if close else ""
        top.print_usage(sys.stderr)
        print(f"tenancy: error: unknown command {name!r}{guess}; `tenancy --help` lists them", file=sys.stderr)
        return 2
    try:
        return command.run(rest)
    except SystemExit as done:  # argparse exits on --help (0) and on a usage error (2)
        code = done.code
        if code in (0, None) and {"-h", "--help"} & set(rest):
            # Every help page ends with the command's exit codes, from one table (docs/cli.md).
            sys.stdout.write("\n" + help_text(name))
        return code if isinstance(code, int) else (0 if code is None else 1)


if __name__ == "__main__":
    raise SystemExit(main())
