"""CI workflows: valid against the GitHub workflow schema, and doing what docs/ci.md promises.

The schema check uses check-jsonschema's vendored GitHub workflow schema; the rest reads the
workflows as data and checks the properties reviewers rely on (forks need no secrets for the plan
diff, prod waits for an approval after dev, drift fails on any change, the policy pack runs on
every Pulumi command) and that every variable and secret they read is documented.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.pins import pins
from tools.plan.harness import PROJECT_ROOT

WORKFLOWS_DIR = PROJECT_ROOT / ".github" / "workflows"
WORKFLOWS = sorted(WORKFLOWS_DIR.glob("*.yml"))
REUSABLE = "$/.github/workflows/pulumi-stack.yml"


def load(name: str) -> dict[str, Any]:
    raw: dict[Any, Any] = yaml.safe_load((WORKFLOWS_DIR / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True.
    return {("on" if key is True else str(key)): value for key, value in raw.items()}


def check_jsonschema(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )


def steps_text(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job.get("steps", []))


def test_the_expected_workflows_exist() -> None:
    # Other workflows may join (each passes every check below); these are the ones docs/ci.md describes.
    assert {path.name for path in WORKFLOWS} >= {
        "e2e.yml",
        "pull-request.yml",
        "pr-comment.yml",
        "deploy.yml",
        "drift.yml",
        "pulumi-stack.yml",
    }


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_workflow_matches_the_github_schema(path: Path) -> None:
    result = check_jsonschema(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    steps:\n      - run: true\n", encoding="utf-8")
    result = check_jsonschema(broken)
    assert result.returncode == 1
    assert "runs-on" in result.stdout + result.stderr


def test_pull_request_plan_diff_runs_without_secrets() -> None:
    workflow = load("pull-request.yml")
    assert set(workflow["on"]) == {"pull_request"}, "pull_request_target would run fork code with secrets"
    plan = workflow["jobs"]["plan"]
    text = yaml.safe_dump(plan)
    assert "secrets." not in text and "environment" not in plan
    script = steps_text(plan)
    assert "-m tools.plan --stack" in script
    assert "-m tools.plan.diff" in script
    assert "GITHUB_STEP_SUMMARY" in script
    assert "-m policy_pack.offline" in script
    assert any(step.get("uses", "").startswith("actions/upload-artifact@") for step in plan["steps"])


def test_plan_diff_comment_is_posted_from_the_base_repository() -> None:
    workflow = load("pr-comment.yml")
    assert workflow["on"]["workflow_run"]["workflows"] == [load("pull-request.yml")["name"]]
    job = workflow["jobs"]["comment"]
    assert job["permissions"]["pull-requests"] == "write"
    # Only the default branch's own code runs next to the write token: a checkout names no ref or
    # repository (for workflow_run that is the default branch), and the untrusted artifact lands
    # outside the workspace, where it cannot replace the scripts.
    for step in job["steps"]:
        if step.get("uses", "").startswith("actions/checkout@"):
            assert set(step.get("with", {})) == {"persist-credentials"}, step
    download = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"]["path"].startswith("${{ runner.temp }}/")
    assert 'scripts/ci/pr-comment.sh "$DIR"' in steps_text(job)
    post = next(s for s in job["steps"] if "pr-comment.sh" in str(s.get("run", "")))
    # The head the pull request must have comes from the event GitHub wrote, never from the artifact.
    assert post["env"]["HEAD_SHA"] == "${{ github.event.workflow_run.head_sha }}"
    assert post["env"]["HEAD_BRANCH"] == "${{ github.event.workflow_run.head_branch }}"
    assert post["env"]["HEAD_REPO"] == "${{ github.event.workflow_run.head_repository.full_name }}"


def test_pull_request_preview_per_stack_skips_forks() -> None:
    preview = load("pull-request.yml")["jobs"]["preview"]
    assert "head.repo.full_name == github.repository" in preview["if"]
    assert preview["uses"] == REUSABLE
    assert preview["with"]["command"] == "preview"
    assert preview["with"]["comment-on-pr"] is True
    assert "matrix.stack" in preview["with"]["stack"]


def test_merge_deploys_dev_then_prod_behind_an_environment() -> None:
    workflow = load("deploy.yml")
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["concurrency"]["cancel-in-progress"] is False
    jobs = workflow["jobs"]
    assert jobs["layout"]["needs"] == "test"
    # Only what changed since the last successful deployment run (manual runs: everything).
    layout_steps = steps_text(jobs["layout"])
    assert layout_steps.count('-m tools.plan.affected --stacks "$STACKS" --base "$BASE"') == 2
    assert "--workflow deploy.yml --branch main \\\n" in layout_steps and "--status success" in layout_steps
    assert jobs["layout"]["permissions"] == {"contents": "read", "actions": "read"}
    assert jobs["layout"]["steps"][0]["with"]["fetch-depth"] == 0
    # dev (unsplit and platform stacks one by one), dev shards in parallel, then the same for prod.
    assert jobs["dev"]["needs"] == "layout"
    assert jobs["dev-shards"]["needs"] == ["layout", "dev"]
    assert jobs["prod"]["needs"] == ["layout", "dev", "dev-shards"]
    assert jobs["prod-shards"]["needs"] == ["layout", "prod"]
    # A wave runs when the one before was skipped (nothing changed there), never after a failure;
    # an empty wave is skipped (an empty matrix fails the run).
    assert jobs["dev"]["if"].endswith("&& needs.layout.outputs.dev-first != '[]'")
    for name in ("dev-shards", "prod", "prod-shards"):
        assert "!failure()" in jobs[name]["if"] and "!cancelled()" in jobs[name]["if"]
    for name in ("dev", "prod"):
        assert jobs[name]["strategy"]["max-parallel"] == 1
        assert f"needs.layout.outputs.{name}-first" in jobs[name]["strategy"]["matrix"]["include"]
        assert f"needs.layout.outputs.{name}-first != '[]'" in jobs[name]["if"]
        shards = jobs[f"{name}-shards"]
        assert f"needs.layout.outputs.{name}-shards != '[]'" in shards["if"]
        assert shards["strategy"]["fail-fast"] is False
        assert f"needs.layout.outputs.{name}-shards" in shards["strategy"]["matrix"]["include"]
    for name in ("dev", "dev-shards", "prod", "prod-shards"):
        assert jobs[name]["uses"] == REUSABLE
        assert jobs[name]["with"]["command"] == "up"
        # The environment of the (base) stack holds its credentials and, for prod, the approval.
        assert jobs[name]["with"]["environment"] == "${{ matrix.environment }}"
        assert jobs[name]["with"]["stack"] == "${{ matrix.stack }}"
    layout_text = yaml.safe_dump(jobs["layout"])
    assert "vars.PULUMI_DEV_STACKS" in layout_text and "vars.PULUMI_PROD_STACKS" in layout_text


@pytest.mark.parametrize(("workflow", "job"), [("drift.yml", "drift"), ("pull-request.yml", "preview")])
def test_previews_and_drift_checks_cover_every_part_of_split_stacks(workflow: str, job: str) -> None:
    jobs = load(workflow)["jobs"]
    assert "-m tools.ci.stacks" in steps_text(jobs["layout"])
    assert jobs["layout"]["outputs"]["stacks"] == "${{ steps.stacks.outputs.all }}"
    assert "layout" in jobs[job]["needs"]
    assert jobs[job]["strategy"]["matrix"]["include"] == "${{ fromJSON(needs.layout.outputs.stacks) }}"
    assert jobs[job]["with"]["environment"] == "${{ matrix.environment }}-preview"


def test_drift_runs_on_a_schedule_and_fails_loudly() -> None:
    workflow = load("drift.yml")
    assert workflow["on"]["schedule"]
    assert workflow["jobs"]["drift"]["with"]["command"] == "drift"
    report = workflow["jobs"]["report"]
    assert report["if"] == "always() && needs.drift.result == 'failure'"
    assert "-m tools.ci.drift_report" in steps_text(report) and "scripts/ci/issue.sh" in steps_text(report)
    # drift = preview --refresh --expect-no-changes, run and classified by tools.ci.pulumi_run.
    reusable = steps_text(load("pulumi-stack.yml")["jobs"]["run"])
    assert '-m tools.ci.pulumi_run --command "$COMMAND" --stack "$STACK"' in reusable


def pulumi_step() -> dict[str, Any]:
    steps: list[dict[str, Any]] = load("pulumi-stack.yml")["jobs"]["run"]["steps"]
    (step,) = [s for s in steps if s.get("uses", "").startswith("pulumi/actions@")]
    return step


def test_every_pulumi_command_runs_the_policy_pack() -> None:
    from tools.ci.pulumi_run import command_argv

    for command in ("preview", "up", "drift"):
        argv = command_argv(command, "dev")
        assert argv[argv.index("--policy-pack") + 1] == "policy_pack" and "--diff" in argv
    # The action only installs the CLI (no `command`): tools.ci.pulumi_run runs the commands.
    assert set(pulumi_step()["with"]) == {"pulumi-version"}
    run = load("pulumi-stack.yml")["jobs"]["run"]
    assert run["env"]["PULUMI_BACKEND_URL"] == "${{ vars.PULUMI_BACKEND_URL }}"
    assert set(load("pulumi-stack.yml")["on"]["workflow_call"]["inputs"]) == {
        "stack",
        "command",
        "environment",
        "comment-on-pr",
        "ref",
    }


def test_pulumi_cli_default_matches_the_sdk_pin() -> None:
    sdk_pins = pins(PROJECT_ROOT / "requirements.txt")
    reusable = (WORKFLOWS_DIR / "pulumi-stack.yml").read_text(encoding="utf-8")
    assert f"vars.PULUMI_VERSION || '{sdk_pins['pulumi']}'" in reusable


def test_commands_the_workflows_run_exist() -> None:
    text = "\n".join(path.read_text(encoding="utf-8") for path in WORKFLOWS)
    modules = set(re.findall(r"-m ((?:tools|policy_pack)\.\w+)", text))
    assert "policy_pack.offline" in modules
    for module in modules:
        assert importlib.util.find_spec(module) is not None, module
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test:", makefile, re.MULTILINE)
    assert "$(BIN)/activate:" in makefile and "BIN := $(VENV)/bin" in makefile and "VENV := .venv" in makefile
    assert (PROJECT_ROOT / "policy_pack" / "PulumiPolicy.yaml").is_file()


def test_every_variable_and_secret_is_documented_in_the_ci_doc() -> None:
    text = "\n".join(path.read_text(encoding="utf-8") for path in WORKFLOWS)
    names = set(re.findall(r"\b(?:vars|secrets)\.([A-Z][A-Z0-9_]*)", text))
    assert {"PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE", "PULUMI_STACKS"} <= names
    ci_doc = (PROJECT_ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "\n## Wire it up from scratch\n" in ci_doc
    missing = sorted(name for name in names if f"`{name}`" not in ci_doc)
    assert missing == []
