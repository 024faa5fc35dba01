"""Workflow hardening: zizmor (the GitHub Actions security linter) reports nothing, every action is
pinned by commit SHA with its version beside it, and the properties zizmor does not judge hold:
secrets named one by one, no credentials left in checkouts, no expressions inside scripts, the
least permissions per job, and one concurrency group per stack shared by deploy and drift.

Every check covers every file in .github/workflows, including workflows added later.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.tools.test_workflows import REUSABLE, WORKFLOWS, WORKFLOWS_DIR, load
from tests.workflows.expressions import evaluate, runs
from tools.plan.harness import PROJECT_ROOT

GITHUB_DIR = PROJECT_ROOT / ".github"
PIN = re.compile(
    r"uses:\s*(?P<action>[\w.-]+/[\w.-]+)(?P<path>/[\w./-]+)?@(?P<sha>[0-9a-f]{40}) # (?P<version>v\d+\.\d+\.\d+)$"
)
CI_DOC = PROJECT_ROOT / "docs" / "ci.md"


def zizmor(*paths: Path) -> subprocess.CompletedProcess[str]:
    """zizmor offline (no GitHub API), failing on files it cannot parse, findings as JSON."""
    # zizmor is a binary installed by its wheel next to this interpreter (requirements-dev.txt).
    binary = Path(sysconfig.get_path("scripts")) / "zizmor"
    command = [str(binary), "--offline", "--strict-collection", "--format", "json"]
    return subprocess.run([*command, *map(str, paths)], capture_output=True, text=True, check=False, timeout=300)


def jobs(name: str) -> dict[str, dict[str, Any]]:
    return dict(load(name)["jobs"])


def test_zizmor_reports_nothing_on_the_workflows_and_dependabot() -> None:
    result = zizmor(GITHUB_DIR)
    assert result.returncode == 0, result.stdout[:4000] + result.stderr[-2000:]
    assert json.loads(result.stdout) == []
    for path in WORKFLOWS:
        assert f"completed {path}\n" in result.stderr, f"zizmor skipped {path.name}"


def test_zizmor_catches_an_unsafe_workflow(tmp_path: Path) -> None:
    unsafe = tmp_path / ".github" / "workflows" / "unsafe.yml"
    unsafe.parent.mkdir(parents=True)
    unsafe.write_text(
        "on: pull_request_target\n"
        "jobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "        with:\n          ref: ${{ github.event.pull_request.head.sha }}\n"
        "      - run: echo ${{ github.event.pull_request.title }}\n",
        encoding="utf-8",
    )
    result = zizmor(tmp_path)
    found = {finding["ident"] for finding in json.loads(result.stdout)}
    assert result.returncode != 0
    assert {"dangerous-triggers", "template-injection", "artipacked"} <= found, found


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_is_pinned_by_sha_with_its_version(path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        if "uses:" not in line or line.lstrip().startswith("#"):
            continue
        target = line.split("uses:", 1)[1].strip()
        if target.startswith("$/"):
            assert (PROJECT_ROOT / target[2:]).is_file(), target
            continue
        assert PIN.search(line.strip()), f"{path.name}: {target} is not `owner/repo@<sha> # vX.Y.Z`"


def test_every_pin_is_recorded_with_its_source_in_the_ci_doc() -> None:
    doc = CI_DOC.read_text(encoding="utf-8")
    pins = {
        (m["action"], m["sha"], m["version"])
        for p in WORKFLOWS
        for line in p.read_text().splitlines()
        if (m := PIN.search(line.strip()))
    }
    assert pins
    for action, sha, version in sorted(pins):
        row = re.search(rf"^\| `{re.escape(action)}` \| `{version}` \| `{sha}` \|.+\|$", doc, re.MULTILINE)
        assert row, f"docs/ci.md: no row for {action} {version} {sha}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_checkouts_keep_no_credentials_and_scripts_read_no_expressions(path: Path) -> None:
    for name, job in load(path.name)["jobs"].items():
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, (path.name, name)
            # Values reach scripts through env: an expression inside `run` is script injection.
            assert "${{" not in str(step.get("run", "")), (path.name, name, step.get("name"))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_environment_secrets_reach_the_called_workflow(path: Path) -> None:
    # docs/ci.md keeps KUBECONFIG_DATA (and may keep PULUMI_CONFIG_PASSPHRASE) as *environment*
    # secrets. A caller job runs in no environment, so `${{ secrets.KUBECONFIG_DATA }}` there is
    # empty, and a called job's environment only overrides secrets the caller passed or inherited:
    # with names mapped one by one an environment-only secret reads empty in pulumi-stack.yml
    # (actions/runner#1490, https://github.com/actions/runner/issues/1490, and #4453: environment
    # secrets of a reusable workflow resolve empty unless the caller uses `secrets: inherit`).
    # So every call of pulumi-stack.yml inherits (same repository, same commit: the called code
    # could read nothing a pull request branch could not already read), and no other job does.
    declared = set(load("pulumi-stack.yml")["on"]["workflow_call"]["secrets"])
    for name, job in load(path.name)["jobs"].items():
        if job.get("uses") == REUSABLE:
            assert job.get("secrets") == "inherit", (path.name, name)
        else:
            assert job.get("secrets") != "inherit", (path.name, name)
    # The called workflow still reads only the secrets it declares.
    text = (WORKFLOWS_DIR / "pulumi-stack.yml").read_text(encoding="utf-8")
    assert set(re.findall(r"secrets\.([A-Z][A-Z0-9_]*)", text)) <= declared


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_permissions_are_granted_per_job(path: Path) -> None:
    workflow = load(path.name)
    if set(workflow["on"]) == {"workflow_call"}:
        # A reusable workflow runs with exactly what its caller's job grants.
        assert "permissions" not in workflow and all("permissions" not in j for j in workflow["jobs"].values())
        return
    assert workflow["permissions"] == {}, f"{path.name}: the workflow default must grant nothing"
    for name, job in workflow["jobs"].items():
        granted = job.get("permissions")
        assert isinstance(granted, dict), f"{path.name}: job {name} states no permissions"
        if granted.get("id-token") == "write":
            assert job.get("uses") == REUSABLE or path.name == "e2e.yml", (path.name, name)
        if granted.get("pull-requests") == "write":
            assert (path.name, name) in {("pull-request.yml", "preview"), ("pr-comment.yml", "comment")}


def test_only_deploys_share_the_concurrency_group_of_a_stack() -> None:
    # A concurrency group holds one running and one pending job; a newer pending job replaces the
    # pending one (GitHub docs, "Control the concurrency of workflows and jobs"). A drift check or a
    # preview in the deploy's group would replace a deploy waiting there for its approval.
    run = load("pulumi-stack.yml")["jobs"]["run"]
    group = run["concurrency"]["group"]
    assert run["concurrency"]["cancel-in-progress"] is False

    def group_of(command: str, stack: str = "prod", run_id: int = 7) -> str:
        context = {"inputs.command": command, "inputs.stack": stack, "github.run_id": run_id}
        return str(evaluate(group, context))

    assert group_of("up") == group_of("up", run_id=8) == "pulumi-stack-prod"
    assert group_of("up", stack="prod-aws") != group_of("up")
    for command in ("drift", "preview"):
        assert group_of(command) not in (group_of("up"), group_of(command, run_id=8)), command
    for workflow, names in {"deploy.yml": ["dev", "dev-shards", "prod", "prod-shards"], "drift.yml": ["drift"]}.items():
        for name in names:
            assert jobs(workflow)[name]["uses"] == REUSABLE, (workflow, name)


def test_pulumi_cloud_tokens_come_from_oidc() -> None:
    steps = load("pulumi-stack.yml")["jobs"]["run"]["steps"]
    (auth,) = [s for s in steps if s.get("uses", "").startswith("pulumi/auth-actions@")]
    # A team token, the team named per GitHub environment: the preview environment's team holds
    # Stack Read only ("Stack Read ... Allows for running previews", Pulumi Cloud RBAC permission
    # sets), so a pull request's job never holds an organization token (pulumi/auth-actions@14141591
    # action.yml: organization | team | personal).
    assert auth["with"]["requested-token-type"] == "urn:pulumi:token-type:access_token:team"
    assert auth["with"]["scope"] == "team:${{ vars.PULUMI_CLOUD_TEAM }}"
    assert "organization" not in auth["with"]["requested-token-type"]
    guard = next(s for s in steps if "PULUMI_CLOUD_TEAM" in str(s.get("if", "")))
    assert steps.index(guard) < steps.index(auth) and "exit 1" in guard["run"]
    assert runs(guard["if"], {"vars.PULUMI_CLOUD_ORGANIZATION": "acme", "vars.PULUMI_CLOUD_TEAM": ""})
    assert not runs(guard["if"], {"vars.PULUMI_CLOUD_ORGANIZATION": "acme", "vars.PULUMI_CLOUD_TEAM": "t"})
    text = "\n".join(p.read_text(encoding="utf-8") for p in WORKFLOWS)
    assert "PULUMI_ACCESS_TOKEN" not in text, "no long-lived Pulumi Cloud token"


def test_dependabot_keeps_actions_and_the_python_lock_current() -> None:
    path = GITHUB_DIR / "dependabot.yml"
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.dependabot", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert {(u["package-ecosystem"], u["directory"]) for u in config["updates"]} == {
        ("github-actions", "/"),
        ("uv", "/"),
    }
    assert (PROJECT_ROOT / "uv.lock").is_file() and WORKFLOWS_DIR.is_dir()
