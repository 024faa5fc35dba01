"""A run's life past the happy path: re-runs, long updates, cancellation, and what CI runs by default.

Each check names the source it follows at the pinned commit. They read every workflow file, so a
job or upload added later is held to the same rules.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from tests.tools.test_workflows import WORKFLOWS, load
from tests.workflows.expressions import evaluate, runs
from tools.plan.harness import PROJECT_ROOT


def _steps() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path.name, name, step)
        for path in WORKFLOWS
        for name, job in load(path.name)["jobs"].items()
        for step in job.get("steps", [])
    ]


UPLOADS = [(w, j, s) for w, j, s in _steps() if str(s.get("uses", "")).startswith("actions/upload-artifact@")]


def test_every_upload_is_found() -> None:
    assert {(w, j) for w, j, _ in UPLOADS} == {
        ("deploy.yml", "record"),
        ("pull-request.yml", "plan"),
        ("pulumi-stack.yml", "run"),
    }


@pytest.mark.parametrize(("workflow", "job", "step"), UPLOADS, ids=lambda v: v if isinstance(v, str) else "")
def test_a_rerun_can_upload_its_artifact_again(workflow: str, job: str, step: dict[str, Any]) -> None:
    # Artifacts belong to the run, not the attempt: re-running a job uploads under a name the first
    # attempt already used, and upload-artifact v7.0.0 (src/upload/upload-artifact.ts) deletes the
    # old artifact first only when `overwrite` is true; otherwise the upload fails with 409 Conflict.
    assert step["with"].get("overwrite") is True, f"{workflow}: {job}: {step['with']['name']}"


def _run_job() -> dict[str, Any]:
    job: dict[str, Any] = load("pulumi-stack.yml")["jobs"]["run"]
    return job


def _pulumi_step() -> dict[str, Any]:
    step: dict[str, Any] = next(s for s in _run_job()["steps"] if s.get("id") == "pulumi")
    return step


def test_a_stuck_update_is_stopped_by_a_timeout_that_leaves_time_for_the_summary() -> None:
    # Without timeout-minutes a job runs for up to 360 minutes (GitHub docs, workflow syntax,
    # jobs.<job_id>.timeout-minutes). The step's own limit comes first, so the summary, comment
    # and drift record steps (if: always()) still run when the command is stopped.
    job, step = _run_job(), _pulumi_step()
    assert isinstance(job.get("timeout-minutes"), int) and isinstance(step.get("timeout-minutes"), int)
    assert step["timeout-minutes"] + 15 <= job["timeout-minutes"] <= 180


def test_the_cancel_signal_reaches_the_runner_of_the_command() -> None:
    # The runner signals the step's process (GitHub docs, "Canceling a workflow": SIGINT, then
    # SIGTERM, then SIGKILL); `exec` makes that process tools.ci.pulumi_run, which forwards one SIGINT
    # to pulumi (tests/workflows/test_ci_pulumi.py::test_a_cancel_is_forwarded_once_and_waited_for).
    assert _pulumi_step()["run"].startswith("exec .venv/bin/python -m tools.ci.pulumi_run ")


def test_cloud_credentials_outlive_the_job() -> None:
    # configure-aws-credentials@8df58475 src/index.ts: DEFAULT_ROLE_DURATION = 3600 seconds.
    job = _run_job()
    seconds = job["timeout-minutes"] * 60
    aws = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@"))
    assert int(aws["with"]["role-duration-seconds"]) >= seconds
    pulumi_cloud = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("pulumi/auth-actions@"))
    assert int(pulumi_cloud["with"]["token-expiration"]) >= seconds
    # get-gke-credentials@3da1e46a src/client.ts writes `user: {token}` (one access token) unless
    # use_auth_provider, whose `gcp` auth-provider client-go no longer has: the next step swaps the
    # token for the exec plugin scripts/ci/gke-token.sh, which asks again when the token expires.
    names = [str(s.get("name")) for s in job["steps"]]
    gke = job["steps"][names.index("GKE credentials")]
    refresh = job["steps"][names.index("GKE credentials") + 1]
    assert gke["if"] == refresh["if"] == "vars.GKE_CLUSTER != ''"
    assert 'kubectl config unset "users.$GKE_CLUSTER.token"' in refresh["run"]
    assert '--exec-command="$GITHUB_WORKSPACE/scripts/ci/gke-token.sh"' in refresh["run"]
    assert (PROJECT_ROOT / "scripts" / "ci" / "gke-token.sh").is_file()


def _local_stacks() -> set[str]:
    """Committed stacks on the `local` cloud: a kind cluster on someone's machine, which no runner reaches."""
    found = set()
    for path in PROJECT_ROOT.glob("Pulumi.*.yaml"):
        config = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("config") or {}
        if config.get("tenancy:cloud") == "local":
            found.add(path.name[len("Pulumi.") : -len(".yaml")])
    return found


STACK_DEFAULTS = re.compile(r"\$\{\{ (vars\.PULUMI_(?:DEV_|PROD_)?STACKS \|\| '[^']*') \}\}")


def test_no_workflow_runs_a_local_stack_by_default() -> None:
    # With a real backend configured and no stack list, a default naming `dev` (kind) fails its
    # job; in deploy.yml that failure also skips prod (`!failure()`).
    assert "dev" in _local_stacks()
    defaults = [
        (path.name, match) for path in WORKFLOWS for match in STACK_DEFAULTS.findall(path.read_text(encoding="utf-8"))
    ]
    assert len(defaults) >= 6, defaults
    for workflow, expression in defaults:
        stacks = json.loads(evaluate(expression, {}))
        assert not set(stacks) & _local_stacks(), f"{workflow}: {expression}"
        assert isinstance(stacks, list)
    prod_default = next(e for w, e in defaults if w == "deploy.yml" and "PROD" in e)
    assert json.loads(evaluate(prod_default, {})) == ["prod"]


def test_prod_still_runs_when_the_dev_wave_is_empty() -> None:
    jobs = load("deploy.yml")["jobs"]
    context = {"vars.PULUMI_BACKEND_URL": "gs://s", "needs.layout.outputs.prod-first": '[{"stack": "prod"}]'}
    # An empty dev wave is skipped, not failed: prod's `!failure()` holds.
    assert not runs(jobs["dev"]["if"], {**context, "needs.layout.outputs.dev-first": "[]"})
    assert runs(jobs["prod"]["if"], context)


def test_drift_compares_against_the_last_deployed_commit() -> None:
    # A merge whose deploy has not run (or waits for approval) changes main, not the stacks: a
    # check of main HEAD would call it drift. The baseline is the head of the last successful
    # deploy run, whose listed stacks all hold that commit's plan (deploy.yml record).
    jobs = load("drift.yml")["jobs"]
    layout, drift = jobs["layout"], jobs["drift"]
    deployed = next(s for s in layout["steps"] if s.get("id") == "deployed")
    assert (
        "gh run list" in deployed["run"] and "--workflow deploy.yml --branch main --status success" in deployed["run"]
    )
    assert "headSha" in deployed["run"] and layout["permissions"]["actions"] == "read"
    assert layout["outputs"]["ref"] == "${{ steps.deployed.outputs.sha }}"
    checkout = next(s for s in layout["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["ref"] == "${{ steps.deployed.outputs.sha }}"
    assert drift["with"]["ref"] == "${{ needs.layout.outputs.ref }}"
    # The called job checks out exactly that commit.
    run = load("pulumi-stack.yml")["jobs"]["run"]
    run_checkout = next(s for s in run["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert run_checkout["with"]["ref"] == "${{ inputs.ref }}"
    # Nothing deployed yet: no check, no report.
    context = {"vars.PULUMI_BACKEND_URL": "gs://s", "needs.layout.outputs.ref": ""}
    assert not runs(drift["if"], context)
    assert runs(drift["if"], {**context, "needs.layout.outputs.ref": "0" * 40})
    # Previews and deploys run the event's own commit.
    for workflow, name in (("pull-request.yml", "preview"), ("deploy.yml", "prod")):
        assert "ref" not in load(workflow)["jobs"][name]["with"], (workflow, name)
