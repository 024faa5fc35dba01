"""Run one Pulumi command on one stack for CI, and say what happened from the captured output.

    tenancy ci-pulumi --command preview|up|drift --stack STACK --out DIR

Why not `pulumi/actions` with `command:`: at the pinned commit (pulumi/actions@8e5e406f,
src/main.ts `runAction`) a failed `pulumi login` is only a warning, the stack is then selected
and fails with an unrelated message, and the command's error is thrown before
`handleSummaryMessage` and `handlePullRequestMessage`, so a failed or drifted preview writes no
job summary and no pull request comment. Here every step's output is captured and always
written, and the outcome is one of:

- `succeeded`: the command ran (for drift: the live state matches the program);
- `drift`: only for drift, `pulumi preview --refresh --expect-no-changes` ran to the end and
  found changes. The CLI returns its expect-no-changes error only after a preview without errors
  (pulumi/pulumi pkg/cmd/pulumi/operations/preview.go: `case res != nil: return res` comes before
  `case expectNop && ... HasChanges`). Since v3.226.0 that error is
  `backenderr.NoChangesExpectedError{Operation: "preview"}`: it reads "no changes were expected for
  preview but changes were proposed" and the CLI exits 7 (pkg/cmd/pulumi/cmd/exit_codes.go
  `ExitNoChanges`, documented there as a stable contract); older CLIs print "no changes were
  expected but changes were proposed" and exit 255. Both are recognised;
- `failed`: anything else (backend login, a missing stack, a policy violation, a program error).
  A failure is never reported as drift.

It writes, in --out: `summary.md` (the job summary), `comment.md` (the pull request comment,
marked per stack so a later run updates it), `result.json` (`{"stack", "command", "outcome",
"step"}`) for the drift report, and prints GitHub annotations. Exit code 0 when succeeded, 1
when failed, 2 when drift was found. Stacks are never created here: every stack and shard exists
beforehand (the bootstrap step, docs/bootstrap.md), because creating one needs its committed
secrets provider and key; a missing stack fails with that instruction.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.ci.engine_settings import command_env

COMMANDS = ("preview", "up", "drift")
# pulumi/pulumi@v3.259.0 pkg/backend/backenderr/backenderr.go NoChangesExpectedError.Error: the
# operation is named since v3.226.0 ("... expected for preview but ..."), not before.
NO_CHANGES_EXPECTED = re.compile(r"no changes were expected (?:for \w+ )?but changes were proposed")
# pkg/cmd/pulumi/cmd/exit_codes.go ExitNoChanges (v3.226.0 and later).
EXIT_NO_CHANGES = 7
BOOTSTRAP = "docs/bootstrap.md"
RECOVERY = "docs/runbooks/cancelled-update.md"
# A GitHub comment holds at most 65536 characters; keep room for the heading.
COMMENT_LIMIT = 60000
SUMMARY_LIMIT = 200000


def comment_marker(stack: str) -> str:
    """The first line of a stack's preview comment, so the next run edits it instead of adding one."""
    return f"<!-- tenancy-pulumi-preview:{stack} -->"


@dataclass(frozen=True)
class Step:
    """One CLI call: what ran, its exit code and everything it printed (both streams, in order)."""

    name: str
    argv: list[str]
    returncode: int
    output: str
    cancelled: bool = False


@dataclass(frozen=True)
class Outcome:
    stack: str
    command: str
    outcome: str  # succeeded | drift | failed
    step: str  # the step that decided it
    message: str
    steps: list[Step]


class Forwarder:
    """Pass the runner's cancel on to pulumi exactly once, then keep waiting for it.

    Cancelling a run (or a step's timeout-minutes) signals the step's process, here this one
    (`exec` in pulumi-stack.yml): SIGINT, then SIGTERM, then SIGKILL (GitHub docs, "Canceling a
    workflow"). Pulumi cancels gracefully on its first SIGINT or SIGTERM, finishing the operations in
    flight and writing them to the state, and terminates at once on the second (pulumi/pulumi
    pkg/backend/cancellation_scope.go: `cancelSource.Cancel()`, then `cancelSource.Terminate()`).
    So the first signal is forwarded as SIGINT and every later one is only reported. Pulumi runs
    in a session of its own (`start_new_session`), so a signal sent to this process group does not
    reach it a second time behind this forwarder's back.
    """

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.received: list[int] = []
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> Forwarder:
        for number in (signal.SIGINT, signal.SIGTERM):
            self.previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *_: object) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def _handle(self, number: int, _frame: object) -> None:
        self.received.append(number)
        name = signal.Signals(number).name
        if len(self.received) == 1 and self.process is not None and self.process.poll() is None:
            print(
                f"::warning::{name} received: forwarding SIGINT to pulumi, which finishes what is in flight", flush=True
            )
            self.process.send_signal(signal.SIGINT)
        else:
            print(f"::warning::{name} received again: not forwarded (pulumi would stop at once)", flush=True)


def run(name: str, argv: list[str], echo: bool = True, env: dict[str, str] | None = None) -> Step:
    """Run the CLI, keep its output, and show each line in the job log as it is written.

    stderr goes into the same pipe as stdout: the CLI prints resource progress on stdout and its
    diagnostics on stderr, and an error belongs next to the resource it is about. Lines are echoed
    as they come because an `up` can run for an hour: the log must not stay empty until it ends.
    A cancel is forwarded once and the CLI is waited for (Forwarder). `env` adds variables to the
    job's environment for this command only.
    """
    if echo:
        print(f"$ {' '.join(argv)}", flush=True)
    lines: list[str] = []
    with Forwarder() as forwarder:
        with subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            start_new_session=True,
            env={**os.environ, **env} if env else None,
        ) as process:
            forwarder.process = process
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line)
                if echo:
                    print(line, end="", flush=True)
            returncode = process.wait()
        cancelled = bool(forwarder.received)
    return Step(name, argv, returncode, "".join(lines), cancelled)


def command_argv(command: str, stack: str) -> list[str]:
    """The Pulumi command line: policy pack on every command, diff shown, no prompts, no colour."""
    common = ["--stack", stack, "--policy-pack", "policy_pack", "--diff", "--non-interactive", "--color", "never"]
    if command == "up":
        return ["pulumi", "up", "--yes", *common]
    if command == "drift":
        return ["pulumi", "preview", "--refresh", "--expect-no-changes", *common]
    return ["pulumi", "preview", *common]


def qualified(stack: str, backend_url: str, organization: str) -> str:
    """The stack as the CLI must name it: `ORG/STACK` on Pulumi Cloud, where a bare name means the
    token's default organization (bootstrap creates the stacks in PULUMI_CLOUD_ORGANIZATION)."""
    return f"{organization}/{stack}" if organization and not backend_url else stack


def execute(command: str, stack: str, backend_url: str, organization: str = "") -> Outcome:
    """Log in, select the existing stack, run the command; stop at the first failed step."""
    steps: list[Step] = []
    name = qualified(stack, backend_url, organization)

    def done(outcome: str, step: str, message: str) -> Outcome:
        return Outcome(stack, command, outcome, step, message, steps)

    login = ["pulumi", "login", "--non-interactive", *([backend_url] if backend_url else [])]
    steps.append(run("login", login))
    if steps[-1].returncode != 0:
        where = backend_url or "Pulumi Cloud"
        return done("failed", "login", f"could not log in to the state backend {where}")
    steps.append(run("select", ["pulumi", "stack", "select", name, "--non-interactive"]))
    if steps[-1].returncode != 0:
        return done(
            "failed",
            "select",
            f"stack {stack} cannot be selected in the backend: if it does not exist, create it with the "
            f"bootstrap step ({BOOTSTRAP}); CI never creates stacks",
        )
    steps.append(run(command, command_argv(command, name), env=command_env(command)))
    last = steps[-1]
    if last.cancelled:
        return done(
            "failed",
            command,
            f"pulumi {command_argv(command, stack)[1]} on {stack} was cancelled; an `up` may leave a lock and "
            f"pending operations: {RECOVERY}",
        )
    if last.returncode == 0:
        return done("succeeded", command, "no changes" if command == "drift" else f"{command} succeeded")
    if command == "drift" and (last.returncode == EXIT_NO_CHANGES or NO_CHANGES_EXPECTED.search(last.output)):
        return done("drift", command, f"the live state of stack {stack} differs from the program")
    return done("failed", command, f"pulumi {command_argv(command, stack)[1]} failed on {stack}")


TITLES = {
    ("drift", "succeeded"): "no drift",
    ("drift", "drift"): "drift detected",
    ("drift", "failed"): "drift check failed (not drift)",
}


def title(outcome: Outcome) -> str:
    state = TITLES.get((outcome.command, outcome.outcome), outcome.outcome)
    return f"`{outcome.command}` on `{outcome.stack}`: {state}"


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[... cut ...]\n" + text[-limit:]


def markdown(outcome: Outcome, limit: int) -> str:
    """The captured output of every step as Markdown, the deciding step open, the others folded."""
    parts = [f"### {title(outcome)}", "", outcome.message, ""]
    share = max(1000, limit // max(1, len(outcome.steps)))
    for step in outcome.steps:
        fence = "~~~~"
        body = _tail(step.output.replace(fence, "~~~"), share)
        opened = " open" if step.name == outcome.step else ""
        parts += [
            f"<details{opened}><summary><code>{' '.join(step.argv)}</code>: exit {step.returncode}</summary>",
            "",
            f"{fence}text",
            body.rstrip("\n"),
            fence,
            "",
            "</details>",
            "",
        ]
    return "\n".join(parts)


def annotation(outcome: Outcome) -> str:
    if outcome.outcome == "succeeded":
        return f"::notice title={outcome.command} {outcome.stack}::{outcome.message}"
    kind = "Drift in" if outcome.outcome == "drift" else f"pulumi {outcome.command} failed on"
    return f"::error title={kind} {outcome.stack}::{outcome.message}; the job summary shows the output"


def write(outcome: Outcome, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(markdown(outcome, SUMMARY_LIMIT), encoding="utf-8")
    comment = f"{comment_marker(outcome.stack)}\n{markdown(outcome, COMMENT_LIMIT)}"
    (out / "comment.md").write_text(comment, encoding="utf-8")
    record = {"stack": outcome.stack, "command": outcome.command, "outcome": outcome.outcome, "step": outcome.step}
    (out / "result.json").write_text(json.dumps(record) + "\n", encoding="utf-8")


EXIT_CODES = {"succeeded": 0, "failed": 1, "drift": 2}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy ci-pulumi", description=__doc__.split("\n\n")[0])
    parser.add_argument("--command", required=True, choices=COMMANDS, help="the Pulumi command to run")
    parser.add_argument("--stack", required=True, help="stack name; reads Pulumi.<stack>.yaml")
    parser.add_argument("--out", required=True, type=Path, help="directory for summary.md, comment.md, result.json")
    args = parser.parse_args(argv)
    if not args.stack or args.stack.startswith("-"):
        print(f"--stack: expected a stack name, got {args.stack!r}", file=sys.stderr)
        return 1
    backend_url = os.environ.get("PULUMI_BACKEND_URL", "")
    outcome = execute(args.command, args.stack, backend_url, os.environ.get("PULUMI_CLOUD_ORGANIZATION", ""))
    write(outcome, args.out)
    print(annotation(outcome))
    return EXIT_CODES[outcome.outcome]


if __name__ == "__main__":
    raise SystemExit(main())
