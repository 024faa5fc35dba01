"""tools.ci.pulumi_run with a stand-in `pulumi` on PATH: what each outcome is called, and that the
summary and comment hold the captured output whatever happened.

The stand-in answers like the CLI: `pulumi preview --expect-no-changes` that finds changes prints
the diff and fails with the expect-no-changes error, and an engine error (a policy violation) fails
with its own message, never that one (pulumi/pulumi pkg/cmd/pulumi/operations/preview.go:
`case res != nil: return res` before the expect-no-changes case). Since v3.226.0 (commit b0a5846488,
"Tighten CLI error typing for exit code mapping") that error is
`backenderr.NoChangesExpectedError{Operation: "preview"}`: the text is "no changes were expected for
preview but changes were proposed" and the exit code is 7 (pkg/cmd/pulumi/cmd/exit_codes.go
`ExitNoChanges`); older CLIs print "no changes were expected but changes were proposed" and exit 255.
The CI pin is 3.272.0, so the tests run both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.ci import pulumi_run as ci_pulumi

STUB = """#!/usr/bin/env bash
echo "pulumi $*" >> "$STUB_LOG"
echo "$1 ${PULUMI_SKIP_CHECKPOINTS:-checkpoints}" >> "$STUB_LOG.env"
case "$1" in
  login) echo "${STUB_LOGIN_OUT:-Logged in}"; exit "${STUB_LOGIN_RC:-0}" ;;
  stack) echo "${STUB_SELECT_OUT:-}" >&2; exit "${STUB_SELECT_RC:-0}" ;;
  *) printf '%s\\n' "${STUB_OUT:-Resources: 12 unchanged}"; exit "${STUB_RC:-0}" ;;
esac
"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pulumi").write_text(STUB, encoding="utf-8")
    (bin_dir / "pulumi").chmod(0o755)
    log = tmp_path / "calls.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("STUB_LOG", str(log))
    monkeypatch.setenv("PULUMI_BACKEND_URL", "gs://acme-tenancy-state")
    return log


def _run(tmp_path: Path, command: str, stack: str = "prod") -> tuple[int, dict[str, str], str, str]:
    out = tmp_path / "out"
    code = ci_pulumi.main(["--command", command, "--stack", stack, "--out", str(out)])
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    return code, result, (out / "summary.md").read_text(), (out / "comment.md").read_text()


DIFF = "~ kubernetes:core/v1:ConfigMap tenant-acme-settings update\\n    ~ data: {a: 1 => 2}"


# (exit code, error line) of `pulumi preview --expect-no-changes` that found changes.
# pulumi/pulumi@v3.259.0 pkg/backend/backenderr/backenderr.go NoChangesExpectedError.Error and
# pkg/cmd/pulumi/cmd/exit_codes.go ExitCodeFor (ExitNoChanges = 7); before v3.226.0, exit 255.
DRIFT_ERRORS = {
    "cli-3.226-and-later": ("7", "error: no changes were expected for preview but changes were proposed"),
    "cli-before-3.226": ("255", "error: no changes were expected but changes were proposed"),
}


@pytest.mark.parametrize(("rc", "error"), DRIFT_ERRORS.values(), ids=DRIFT_ERRORS.keys())
def test_changes_found_by_a_complete_preview_are_drift(
    cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], rc: str, error: str
) -> None:
    monkeypatch.setenv("STUB_OUT", f"{DIFF}\n{error}")
    monkeypatch.setenv("STUB_RC", rc)
    code, result, summary, comment = _run(tmp_path, "drift")
    assert (code, result["outcome"], result["step"]) == (2, "drift", "drift")
    # The diff the drift issue points to is in the summary.
    assert "tenant-acme-settings update" in summary and "drift detected" in summary
    assert "::error title=Drift in prod::" in capsys.readouterr().out
    assert comment.startswith(ci_pulumi.comment_marker("prod") + "\n")
    calls = cli.read_text().splitlines()
    assert calls[0] == "pulumi login --non-interactive gs://acme-tenancy-state"
    assert calls[1] == "pulumi stack select prod --non-interactive"
    assert calls[2].startswith("pulumi preview --refresh --expect-no-changes --stack prod --policy-pack policy_pack")


@pytest.mark.parametrize(
    ("env", "step", "says"),
    [
        ({"STUB_LOGIN_RC": "1", "STUB_LOGIN_OUT": "error: AccessDenied"}, "login", "AccessDenied"),
        ({"STUB_SELECT_RC": "255", "STUB_SELECT_OUT": "error: no stack named 'prod'"}, "select", "no stack named"),
        (
            {"STUB_RC": "255", "STUB_OUT": "mandatory: tenant-namespace-guardrails\nerror: preview failed"},
            "drift",
            "tenant-namespace-guardrails",
        ),
    ],
    ids=["login", "missing-stack", "policy"],
)
def test_every_other_failure_is_a_failed_check_never_drift(
    cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], step: str, says: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, result, summary, comment = _run(tmp_path, "drift")
    assert (code, result["outcome"], result["step"]) == (1, "failed", step)
    assert "drift check failed (not drift)" in summary
    # Written from the captured output of the step that failed.
    assert says in summary and says in comment
    # Nothing runs after the failed step.
    assert len(cli.read_text().splitlines()) == ["login", "select", "drift"].index(step) + 1


def test_a_missing_stack_names_the_bootstrap_step_and_is_never_created(
    cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_SELECT_RC", "255")
    _, result, summary, _ = _run(tmp_path, "up", stack="prod-shard-3")
    assert result["outcome"] == "failed"
    assert "create it with the bootstrap step (docs/bootstrap.md); CI never creates stacks" in summary
    assert not any("--create" in call or " init" in call for call in cli.read_text().splitlines())


def test_a_failed_preview_still_gets_its_summary_and_comment(
    cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With pulumi/actions' own `command`, this failure would throw before the summary and comment.
    monkeypatch.setenv("STUB_RC", "255")
    monkeypatch.setenv("STUB_OUT", "error: Program failed with an unhandled exception: boom")
    code, result, summary, comment = _run(tmp_path, "preview")
    assert (code, result["outcome"]) == (1, "failed")
    assert "unhandled exception: boom" in summary and "unhandled exception: boom" in comment


def test_a_clean_drift_check_and_a_successful_up(cli: Path, tmp_path: Path) -> None:
    code, result, summary, _ = _run(tmp_path, "drift")
    assert (code, result["outcome"]) == (0, "succeeded") and "no drift" in summary
    code, result, _, _ = _run(tmp_path, "up")
    assert (code, result["outcome"]) == (0, "succeeded")
    assert cli.read_text().splitlines()[-1].startswith("pulumi up --yes --stack prod --policy-pack policy_pack")


def test_pulumi_cloud_login_names_no_url(cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_BACKEND_URL")
    _run(tmp_path, "preview")
    assert cli.read_text().splitlines()[0] == "pulumi login --non-interactive"


def test_long_output_is_cut_from_the_start_to_fit_a_comment() -> None:
    step = ci_pulumi.Step("preview", ["pulumi", "preview"], 0, "x" * 100_000 + "THE END")
    outcome = ci_pulumi.Outcome("dev", "preview", "succeeded", "preview", "ok", [step])
    text = ci_pulumi.markdown(outcome, ci_pulumi.COMMENT_LIMIT)
    assert len(text) < 65536 and text.rstrip().endswith("</details>") and "THE END" in text


def test_output_streams_to_the_log_in_the_order_the_cli_wrote_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The CLI writes the resource progress to stdout and its diagnostics ("error: ...") to stderr
    # as it goes: a deploy can run for an hour, so the job log must show each line when written,
    # and the summary must keep an error next to the resource it belongs to, not after all of stdout.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "pulumi"
    stub.write_text(
        "#!/usr/bin/env bash\n"
        'case "$1" in login|stack) exit 0 ;; esac\n'
        "echo '+ tenant-acme create'\n"
        "echo 'error: tenant-acme: admission webhook denied the request' >&2\n"
        "echo '+ tenant-beta create'\n"
        "exit 255\n",
        encoding="utf-8",
    )
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("PULUMI_BACKEND_URL", "gs://acme-tenancy-state")
    _, result, summary, _ = _run(tmp_path, "up")
    assert result["outcome"] == "failed"
    order = ["+ tenant-acme create", "error: tenant-acme: admission", "+ tenant-beta create"]
    positions = [summary.index(line) for line in order]
    assert positions == sorted(positions), summary
    log = capsys.readouterr().out
    positions = [log.index(line) for line in order]
    assert positions == sorted(positions), log


# A stand-in `pulumi up` that behaves like the CLI's cancellation scope: it records every signal,
# and on SIGINT finishes its "operation in flight" before exiting (pulumi/pulumi
# pkg/backend/cancellation_scope.go: first signal cancels gracefully, a second terminates).
SLOW_UP = """#!/usr/bin/env python3
import os, signal, sys, time
log = os.environ["STUB_LOG"]
def note(text):
    with open(log, "a") as f:
        f.write(text + "\\n")
if sys.argv[1] in ("login", "stack"):
    sys.exit(0)
got = []
def handle(number, frame):
    got.append(number)
    note(f"signal {signal.Signals(number).name}")
signal.signal(signal.SIGINT, handle)
signal.signal(signal.SIGTERM, handle)
note("started")
print("Updating (prod)", flush=True)
deadline = time.time() + 20
while not got and time.time() < deadline:
    time.sleep(0.05)
time.sleep(0.5)  # the operation in flight completes and is written to the state
note("finished in-flight operations")
print("error: update canceled", flush=True)
sys.exit(255)
"""


def test_a_cancel_is_forwarded_once_and_waited_for(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pulumi").write_text(SLOW_UP, encoding="utf-8")
    (bin_dir / "pulumi").chmod(0o755)
    log = tmp_path / "calls.log"
    log.touch()
    out = tmp_path / "out"
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "STUB_LOG": str(log), "PULUMI_BACKEND_URL": "gs://s"}
    runner = subprocess.Popen(
        [sys.executable, "-m", "tools.ci.pulumi_run", "--command", "up", "--stack", "prod", "--out", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.time() + 20
    while "started" not in log.read_text() and time.time() < deadline:
        time.sleep(0.05)
    assert "started" in log.read_text(), "the stand-in never started"
    # What the runner does on cancel: SIGINT to the step's process, then SIGTERM.
    runner.send_signal(signal.SIGINT)
    time.sleep(0.2)
    runner.send_signal(signal.SIGTERM)
    output, _ = runner.communicate(timeout=30)
    calls = log.read_text().splitlines()
    # Exactly one signal reached pulumi, and the runner waited for it to finish.
    assert [c for c in calls if c.startswith("signal ")] == ["signal SIGINT"], output
    assert "finished in-flight operations" in calls, output
    assert runner.returncode == 1, output
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["outcome"] == "failed" and result["step"] == "up"
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "was cancelled" in summary and ci_pulumi.RECOVERY in summary
    assert "error: update canceled" in summary


def test_on_pulumi_cloud_the_stack_is_named_in_its_organization(
    cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bare name is looked up in the token's default organization; bootstrap creates the stacks
    # in PULUMI_CLOUD_ORGANIZATION (`pulumi stack init acme/prod`).
    monkeypatch.setenv("PULUMI_BACKEND_URL", "")
    monkeypatch.setenv("PULUMI_CLOUD_ORGANIZATION", "acme")
    code, result, _, _ = _run(tmp_path, "preview")
    assert code == 0 and result["stack"] == "prod"
    calls = cli.read_text().splitlines()
    assert "pulumi stack select acme/prod --non-interactive" in calls
    assert any(c.startswith("pulumi preview --stack acme/prod ") for c in calls)
    # A DIY backend has no organizations.
    monkeypatch.setenv("PULUMI_BACKEND_URL", "gs://acme-tenancy-state")
    cli.write_text("")
    _run(tmp_path, "preview")
    assert "pulumi stack select prod --non-interactive" in cli.read_text().splitlines()


@pytest.mark.parametrize(("command", "engine"), [("preview", "true"), ("drift", "true"), ("up", "checkpoints")])
def test_previews_skip_the_per_step_checkpoint_and_up_keeps_it(
    cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, engine: str
) -> None:
    # A preview's snapshot is discarded (ci_pulumi.command_env); an update's checkpoints make an
    # interrupted `up` recoverable, so only previews go without them, and only the command itself.
    monkeypatch.delenv("PULUMI_SKIP_CHECKPOINTS", raising=False)
    _run(tmp_path, command)
    seen = Path(f"{cli}.env").read_text().splitlines()
    subcommand = "up" if command == "up" else "preview"
    assert seen == ["login checkpoints", "stack checkpoints", f"{subcommand} {engine}"]
