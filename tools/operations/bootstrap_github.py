"""Bootstrap step: the GitHub environments the cloud trust rests on, created when missing, verified always.

Every cloud identity trusts one environment's OIDC subject (`repo:OWNER/REPO:environment:<env>`,
tools/ci/identity.py). The subject only means something if the environment's rules hold: a job
naming an environment that does not exist makes GitHub create it with no rules at all (GitHub docs,
"Managing environments for deployment": "Referencing an environment that does not exist will
create an environment with the referenced name"), so any branch's job would then get the deploy
identity's token. So, per base stack (docs/adr/0038-github-environments-by-bootstrap.md):

- `<stack>` (deploy): created with deployment branches limited to custom policies, and the one
  policy `main` (type branch). An existing environment is never changed, only checked: custom
  branch policies on, protected-branches mode off, exactly the policy `main`; and, unless the
  stack is declared to need no approval, at least one required reviewer (reviewers are people or
  teams of the organisation: bootstrap cannot choose them, so it says what to add).
- `<stack>-preview`: created with no branch restriction (pull requests come from any branch); its
  identity is read-only (tools/ci/state_access.py, deploy/identities/).

REST endpoints (GitHub docs, "REST API endpoints for deployment environments" and "... for
deployment branch policies"): GET/PUT /repos/{owner}/{repo}/environments/{name},
GET/POST /repos/{owner}/{repo}/environments/{name}/deployment-branch-policies.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

DEPLOY_BRANCH = "main"


class _Runner(Protocol):
    dry_run: bool

    def run(self, *argv: str, stdin: str | None = None, placeholder: str = "") -> str: ...

    def probe(self, *argv: str) -> bool: ...


class UnprotectedEnvironmentError(Exception):
    """An existing environment whose rules do not protect the identity that trusts it."""


def _api(repo: str, path: str = "") -> str:
    return f"repos/{repo}/environments{path}"


def _get(runner: _Runner, endpoint: str) -> dict[str, Any]:
    text = runner.run("gh", "api", endpoint, placeholder="{}")
    document: dict[str, Any] = json.loads(text or "{}")
    return document


def ensure_environments(runner: _Runner, repo: str, stack: str, *, approval: bool = True) -> list[str]:
    """Create the stack's two environments when missing, then check the deploy one; the names created.

    Raises UnprotectedEnvironmentError naming every rule that is missing, after creating what it could.
    """
    created: list[str] = []
    deploy, preview = stack, f"{stack}-preview"
    if not runner.probe("gh", "api", _api(repo, f"/{preview}")):
        runner.run("gh", "api", "-X", "PUT", _api(repo, f"/{preview}"), "--input", "-", stdin="{}")
        created.append(preview)
    if not runner.probe("gh", "api", _api(repo, f"/{deploy}")):
        body = {"deployment_branch_policy": {"protected_branches": False, "custom_branch_policies": True}}
        runner.run("gh", "api", "-X", "PUT", _api(repo, f"/{deploy}"), "--input", "-", stdin=json.dumps(body))
        created.append(deploy)
    if runner.dry_run:
        return created
    environment = _get(runner, _api(repo, f"/{deploy}"))
    names: set[tuple[Any, Any]] = set()
    # The policies exist only in custom mode (the endpoint answers 404 otherwise).
    if (environment.get("deployment_branch_policy") or {}).get("custom_branch_policies"):
        listing = _get(runner, _api(repo, f"/{deploy}/deployment-branch-policies"))
        names = {(p.get("name"), p.get("type", "branch")) for p in listing.get("branch_policies", [])}
        # Custom mode with no policy admits no branch: adding `main` only completes a run that
        # stopped between creating the environment and its policy; it never widens one.
        if not names:
            runner.run(
                "gh", "api", "-X", "POST", _api(repo, f"/{deploy}/deployment-branch-policies"),
                "-f", f"name={DEPLOY_BRANCH}", "-f", "type=branch",
            )  # fmt: skip
            names = {(DEPLOY_BRANCH, "branch")}
    problems = deploy_problems(environment, names, approval=approval)
    if problems:
        where = f"https://github.com/{repo}/settings/environments"
        raise UnprotectedEnvironmentError(
            f"GitHub environment {deploy} ({where}): "
            + "; ".join(problems)
            + " (docs/bootstrap.md#github-environments)"
        )
    return created


def deploy_problems(environment: dict[str, Any], policies: set[tuple[Any, Any]], *, approval: bool) -> list[str]:
    """What the deploy environment lacks for its subject to mean "a reviewed job on main"."""
    problems = []
    branch_policy = environment.get("deployment_branch_policy") or {}
    if not branch_policy.get("custom_branch_policies") or branch_policy.get("protected_branches"):
        problems.append("deployment branches: choose 'Selected branches and tags' (any branch may deploy now)")
    elif policies != {(DEPLOY_BRANCH, "branch")}:
        listed = sorted(f"{name} ({kind})" for name, kind in policies)
        problems.append(f"deployment branches: exactly the branch {DEPLOY_BRANCH!r}, found {listed}")
    reviewers = [
        rule
        for rule in environment.get("protection_rules") or []
        if rule.get("type") == "required_reviewers" and rule.get("reviewers")
    ]
    if approval and not reviewers:
        problems.append("required reviewers: add at least one person or team (or pass --no-approval for this stack)")
    return problems
