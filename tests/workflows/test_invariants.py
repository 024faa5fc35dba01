"""The delivery invariants, read from the workflows as data (issue 28, docs/ci.md).

Each test names the source it follows: the pinned action's code (owner/repo@sha path) or the
GitHub document. Conditions are evaluated (tests/workflows/expressions.py), not matched as text,
so a guard that reads right but evaluates wrong fails. The checks cover every workflow file, so a
job added later that touches state or reads secrets is held to the same rules.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.tools.test_workflows import REUSABLE, WORKFLOWS, load
from tests.workflows.expressions import evaluate, runs
from tools.ci import identity as ci_identity
from tools.plan.harness import PROJECT_ROOT

PULUMI_ACTIONS = "pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d"
CI_DOC = PROJECT_ROOT / "docs" / "ci.md"
MATRIX = json.dumps([{"stack": "dev", "environment": "dev"}])


def context(**overrides: Any) -> dict[str, Any]:
    """A run of a branch of this repository, by a person, with a backend and non-empty waves."""
    base: dict[str, Any] = {
        "vars.PULUMI_BACKEND_URL": "gs://acme-tenancy-state",
        "vars.PULUMI_CLOUD_ORGANIZATION": "",
        "github.actor": "someone",
        "github.repository": "acme/tenancy",
        "github.event_name": "pull_request",
        "github.event.pull_request.head.repo.full_name": "acme/tenancy",
        "github.event.pull_request.user.login": "someone",
        "inputs.comment-on-pr": True,
        "inputs.command": "preview",
        "status": "success",
        # drift.yml: the head of the last successful deploy run.
        "needs.layout.outputs.ref": "0123456789abcdef0123456789abcdef01234567",
    }
    for wave in ("dev-first", "dev-shards", "prod-first", "prod-shards"):
        base[f"needs.layout.outputs.{wave}"] = MATRIX
    base.update(overrides)
    return base


def state_jobs() -> list[tuple[str, str, dict[str, Any]]]:
    """Every job that reads or writes Pulumi state: the reusable job and every job that calls it."""
    found = [("pulumi-stack.yml", "run", load("pulumi-stack.yml")["jobs"]["run"])]
    for path in WORKFLOWS:
        for name, job in load(path.name)["jobs"].items():
            if job.get("uses") == REUSABLE:
                found.append((path.name, name, job))
    return found


def secret_jobs(workflow: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Jobs that need repository or environment secrets (they read, pass or inherit `secrets`)."""
    return [
        (name, job)
        for name, job in workflow["jobs"].items()
        if "secrets." in json.dumps(job) or job.get("secrets") == "inherit"
    ]


NO_BACKEND = {"vars.PULUMI_BACKEND_URL": "", "vars.PULUMI_CLOUD_ORGANIZATION": ""}


@pytest.mark.parametrize(("workflow", "name", "job"), state_jobs(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_job_touching_state_waits_for_a_configured_backend(workflow: str, name: str, job: dict[str, Any]) -> None:
    # pulumi/actions@8e5e406f src/main.ts runAction: a failed `pulumi login` is only
    # `core.warning`, then `LocalWorkspace.selectStack` fails: without a backend every run is red.
    assert not runs(job.get("if"), context(**NO_BACKEND)), f"{workflow}: {name} runs without a backend"
    assert runs(job.get("if"), context()), f"{workflow}: {name} never runs with a backend"
    cloud = {"vars.PULUMI_BACKEND_URL": "", "vars.PULUMI_CLOUD_ORGANIZATION": "acme"}
    assert runs(job.get("if"), context(**cloud)), f"{workflow}: {name} never runs with Pulumi Cloud"


def test_the_state_jobs_found_are_the_expected_ones() -> None:
    names = {(workflow, name) for workflow, name, _ in state_jobs()}
    assert names == {
        ("pulumi-stack.yml", "run"),
        ("deploy.yml", "dev"),
        ("deploy.yml", "dev-shards"),
        ("deploy.yml", "prod"),
        ("deploy.yml", "prod-shards"),
        ("drift.yml", "drift"),
        ("pull-request.yml", "preview"),
    }


def test_the_deployment_record_is_written_only_when_a_backend_ran_the_waves() -> None:
    record = load("deploy.yml")["jobs"]["record"]
    # A run before any backend was configured deployed nothing: it must leave no record.
    assert not runs(record["if"], context(**NO_BACKEND))
    assert not runs(record["if"], context(status="failure"))
    assert runs(record["if"], context())
    assert set(record["needs"]) == {"layout", "dev", "dev-shards", "prod", "prod-shards"}


def test_pulumi_actions_only_installs_the_cli() -> None:
    # pulumi/actions@8e5e406f src/main.ts: with no `command` input, `makeInstallationConfig`
    # succeeds and `installOnly` returns after downloading the CLI; with one, the command's error
    # is thrown before `handleSummaryMessage` / `handlePullRequestMessage`: no summary, no comment.
    for path in WORKFLOWS:
        text = path.read_text(encoding="utf-8")
        for step in (s for job in load(path.name)["jobs"].values() for s in job.get("steps", [])):
            if str(step.get("uses", "")).startswith("pulumi/actions@"):
                assert step["uses"] == PULUMI_ACTIONS, path.name
                assert "command" not in step.get("with", {}), f"{path.name}: the action would run the command"
        assert "upsert" not in text and "--create" not in text and "stack init" not in text, path.name


def _run_steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = load("pulumi-stack.yml")["jobs"]["run"]["steps"]
    return steps


def test_summaries_and_comments_are_written_from_the_captured_output() -> None:
    steps = _run_steps()
    (pulumi,) = [s for s in steps if s.get("id") == "pulumi"]
    assert "-m tools.ci.pulumi_run" in pulumi["run"] and pulumi["env"]["OUT"] == "${{ runner.temp }}/pulumi"
    later = steps[steps.index(pulumi) + 1 :]
    summary = next(s for s in later if "GITHUB_STEP_SUMMARY" in str(s.get("run", "")))
    comment = next(s for s in later if "scripts/ci/bot-comment.sh" in str(s.get("run", "")))
    for step in (summary, comment):
        # They run whatever the command did (failed, drifted), from the files it wrote.
        assert runs(step["if"], context(status="failure")), step.get("name")
        assert step["env"]["OUT"] == pulumi["env"]["OUT"]
    assert '"$OUT/summary.md"' in summary["run"]
    assert (
        'scripts/ci/bot-comment.sh "$PR" "<!-- tenancy-pulumi-preview:${STACK} -->" "$OUT/comment.md"' in comment["run"]
    )
    # A comment only on pull requests that asked for one.
    assert not runs(comment["if"], context(**{"inputs.comment-on-pr": False}))
    assert not runs(comment["if"], context(**{"github.event_name": "push"}))


def test_drift_reports_only_detected_changes_as_drift() -> None:
    steps = _run_steps()
    (upload,) = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert upload["with"]["name"] == "drift-${{ inputs.stack }}"
    assert upload["with"]["path"] == "${{ runner.temp }}/pulumi/result.json"
    assert runs(upload["if"], context(status="failure", **{"inputs.command": "drift"}))
    assert not runs(upload["if"], context(**{"inputs.command": "up"}))
    report = load("drift.yml")["jobs"]["report"]
    sort = next(s for s in report["steps"] if s.get("id") == "sort")
    assert "-m tools.ci.drift_report" in sort["run"] and sort["env"]["STACKS"] == "${{ needs.layout.outputs.stacks }}"
    issues = {s["env"]["TITLE"]: s["if"] for s in report["steps"] if "scripts/ci/issue.sh" in str(s.get("run", ""))}
    from tools.ci.drift_report import DRIFT_TITLE, FAILED_TITLE

    assert issues == {
        DRIFT_TITLE: "steps.sort.outputs.drift == 'true'",
        FAILED_TITLE: "steps.sort.outputs.failed == 'true'",
    }
    download = next(s for s in report["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact@"))
    assert download["with"]["pattern"] == "drift-*"
    # The report runs when a check failed, whether by drift or otherwise; not when all were clean.
    assert runs(report["if"], context(status="failure", **{"needs.drift.result": "failure"}))
    assert not runs(report["if"], context(**{"needs.drift.result": "success"}))
    assert not runs(report["if"], context(**{"needs.drift.result": "skipped"}))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_dependabot_and_fork_runs_skip_what_needs_secrets(path: Path) -> None:
    # GitHub docs, "Automating Dependabot with GitHub Actions" (Responding to events): runs that
    # Dependabot starts on pull_request get a read-only GITHUB_TOKEN and no Actions secrets, even
    # when re-run by someone else; pull requests from forks get no secrets either ("Events that
    # trigger workflows", pull_request).
    workflow = load(path.name)
    if "pull_request" not in workflow["on"]:
        return
    for name, job in secret_jobs(workflow):
        dependabot = {"github.actor": "dependabot[bot]", "github.event.pull_request.user.login": "dependabot[bot]"}
        fork = {"github.event.pull_request.head.repo.full_name": "someone/tenancy"}
        assert not runs(job.get("if"), context(**dependabot)), f"{path.name}: {name} runs for Dependabot"
        assert not runs(job.get("if"), context(**fork)), f"{path.name}: {name} runs for a fork"
        # A Dependabot pull request re-run by a person keeps Dependabot's restrictions.
        rerun = {"github.actor": "someone", "github.event.pull_request.user.login": "dependabot[bot]"}
        assert not runs(job.get("if"), context(**rerun)), f"{path.name}: {name} runs on a re-run"
        assert runs(job.get("if"), context()), f"{path.name}: {name} never runs"


def test_the_pull_request_workflow_has_a_secret_job_to_guard() -> None:
    assert [name for name, _ in secret_jobs(load("pull-request.yml"))] == ["preview"]


def _kubeconfig_steps() -> tuple[int, dict[str, Any], int, int]:
    steps = _run_steps()
    index = {str(s.get("name")): i for i, s in enumerate(steps)}
    secret = next(i for i, s in enumerate(steps) if "$KUBECONFIG_DATA" in str(s.get("run", "")))
    return secret, steps[secret], index["GKE credentials"], index["EKS credentials"]


def test_the_kubeconfig_of_the_stacks_own_cloud_wins() -> None:
    # `aws eks update-kubeconfig` and get-gke-credentials write the cluster's kubeconfig; the secret
    # step writes ~/.kube/config. It must neither run after them nor run at all when they do.
    secret, step, gke, eks = _kubeconfig_steps()
    assert secret < gke and secret < eks
    with_data = {"env.KUBECONFIG_DATA": "apiVersion: v1"}
    assert runs(step["if"], context(**with_data, **{"vars.GKE_CLUSTER": "", "vars.EKS_CLUSTER": ""}))
    assert not runs(step["if"], context(**with_data, **{"vars.EKS_CLUSTER": "tenancy-prod"}))
    assert not runs(step["if"], context(**with_data, **{"vars.GKE_CLUSTER": "tenancy-prod"}))
    assert not runs(step["if"], context(**{"env.KUBECONFIG_DATA": ""}))


def test_jobs_with_cloud_identities_run_in_an_environment() -> None:
    # The OIDC subject is environment-scoped only when the job names an environment ("About
    # security hardening with OpenID Connect", example subject claims).
    run = load("pulumi-stack.yml")["jobs"]["run"]
    assert run["environment"] == "${{ inputs.environment }}"
    for workflow, name, job in state_jobs()[1:]:
        environment = job["with"]["environment"]
        if job["with"]["command"] == "up":
            assert environment == "${{ matrix.environment }}", (workflow, name)
        else:
            # Previews and drift checks never run in the deploy environment.
            assert environment == "${{ matrix.environment }}-preview", (workflow, name)


def test_generated_trust_binds_each_identity_to_one_environment_subject() -> None:
    trust = ci_identity.trust("acme/tenancy", "prod", "123456789012", "42", "github")
    assert trust["deploy"]["subject"] == "repo:acme/tenancy:environment:prod"
    assert trust["preview"]["subject"] == "repo:acme/tenancy:environment:prod-preview"
    for role in ("deploy", "preview"):
        condition = trust[role]["awsTrustPolicy"]["Statement"][0]["Condition"]
        # StringEquals on the exact subject: no wildcard, no branch ref, no other environment.
        assert set(condition) == {"StringEquals"}
        assert condition["StringEquals"]["token.actions.githubusercontent.com:sub"] == trust[role]["subject"]
        assert trust[role]["gcpPrincipal"].endswith("/subject/" + trust[role]["subject"])
    assert "*" not in json.dumps(trust) and "ref:refs/heads" not in json.dumps(trust)


def test_the_ci_doc_names_environment_subjects_only() -> None:
    # The one branch subject the doc names is the one it says never matches.
    refuted = "a trust on `repo:<owner>/<repo>:ref:refs/heads/main` never matches"
    doc = CI_DOC.read_text(encoding="utf-8")
    assert refuted in doc
    subjects = set(re.findall(r"repo:[\w<>./-]+:[\w:<>/*.-]+", doc.replace(refuted, "")))
    assert "repo:<owner>/<repo>:environment:<stack>" in subjects
    assert "repo:<owner>/<repo>:environment:<stack>-preview" in subjects
    assert all(":environment:" in found for found in subjects), subjects
    assert "tenancy ci-identity" in doc


def test_the_evaluator_reads_what_the_workflows_write() -> None:
    # The guard tests above are only as good as this evaluator: spot-check GitHub's semantics.
    assert evaluate("vars.A || '[]'", {}) == "[]"
    assert evaluate("vars.A != '' || vars.B != ''", {"vars.B": "x"}) is True
    assert evaluate("github.actor != 'Dependabot[bot]'", {"github.actor": "dependabot[bot]"}) is False
    assert evaluate("!failure() && !cancelled()", {"status": "failure"}) is False
    assert not runs("needs.x.outputs.y != '[]'", {"status": "failure", "needs.x.outputs.y": "[1]"})
    with pytest.raises(ValueError):
        evaluate("contains(github.ref, 'main')", {})


def test_every_stack_and_shard_has_a_documented_init_step() -> None:
    # No workflow sets `upsert` (test_pulumi_actions_only_installs_the_cli), so the docs must say
    # who creates the stacks and shards, and the runner's error must send people to the same place.
    from tools.ci.pulumi_run import BOOTSTRAP

    doc = CI_DOC.read_text(encoding="utf-8")
    assert "**CI never creates a stack** (no `upsert`, no `--create`)" in doc
    flat = " ".join(doc.split())
    link = Path(BOOTSTRAP).relative_to(CI_DOC.parent.relative_to(PROJECT_ROOT)).as_posix()
    assert (
        "every stack, platform stack and shard must exist before its first job, "
        f"created by the [bootstrap step]({link})" in flat
    )
    bootstrap = PROJECT_ROOT / BOOTSTRAP
    assert "stack init" in bootstrap.read_text(encoding="utf-8")
