"""Every `with:` key a workflow passes is an input the pinned action defines.

GitHub only warns about an unexpected input ("Unexpected input(s) ..., valid inputs are ...") and
runs the step anyway, so a misspelt or removed input silently falls back to the action's default.
The inputs below were read from each action's `action.yml` at the pinned commit
(`git show <sha>:action.yml` of the action's repository); a Dependabot bump changes the SHA, and
this test then fails until the inputs of the new commit are read and recorded here.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.test_workflows import WORKFLOWS, load

INPUTS: dict[str, set[str]] = {
    # actions/checkout@3d3c42e5 (v7.0.1) action.yml
    "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1": {
        "allow-unsafe-pr-checkout",
        "clean",
        "fetch-depth",
        "fetch-tags",
        "filter",
        "github-server-url",
        "lfs",
        "path",
        "persist-credentials",
        "ref",
        "repository",
        "set-safe-directory",
        "show-progress",
        "sparse-checkout",
        "sparse-checkout-cone-mode",
        "ssh-key",
        "ssh-known-hosts",
        "ssh-strict",
        "ssh-user",
        "submodules",
        "token",
    },
    # actions/setup-python@5fda3b95 (v7.0.0) action.yml
    "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97": {
        "allow-prereleases",
        "architecture",
        "cache",
        "cache-dependency-path",
        "check-latest",
        "freethreaded",
        "pip-version",
        "python-version",
        "python-version-file",
        "token",
        "update-environment",
    },
    # actions/upload-artifact v7.0.0 (bbbca2dd) action.yml: the stored snapshot of the repository
    # holds no v7.0.1 (043fb46d), so these are the inputs of v7.0.0, not verified at the pin.
    "actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a": {
        "archive",
        "compression-level",
        "if-no-files-found",
        "include-hidden-files",
        "name",
        "overwrite",
        "path",
        "retention-days",
    },
    # actions/download-artifact@3e5f45b2 (v8.0.1) action.yml
    "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c": {
        "artifact-ids",
        "digest-mismatch",
        "github-token",
        "merge-multiple",
        "name",
        "path",
        "pattern",
        "repository",
        "run-id",
        "skip-decompress",
    },
    # pulumi/actions@8e5e406f (v7.0.0) action.yml (only pulumi-version is used: install only,
    # src/main.ts makeInstallationConfig requires `command` to be absent)
    "pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d": {
        "always-include-summary",
        "cloud-url",
        "color",
        "command",
        "comment-on-pr",
        "comment-on-pr-number",
        "comment-on-summary",
        "config-map",
        "continue-on-error",
        "debug",
        "diff",
        "edit-pr-comment",
        "exclude",
        "exclude-dependents",
        "exclude-protected",
        "expect-no-changes",
        "github-token",
        "log-flow",
        "log-verbosity",
        "message",
        "parallel",
        "plan",
        "policyPackConfigs",
        "policyPacks",
        "pulumi-version",
        "pulumi-version-file",
        "refresh",
        "remove",
        "replace",
        "secrets-provider",
        "stack-name",
        "suppress-outputs",
        "suppress-progress",
        "target",
        "target-dependents",
        "upsert",
        "work-dir",
    },
    # pulumi/auth-actions@14141591 (v2.1.0) action.yml
    "pulumi/auth-actions@141415910c3beb54e03b48e9057c204c97b956f2": {
        "cloud-url",
        "export-environment-variables",
        "organization",
        "requested-token-type",
        "scope",
        "token-expiration",
    },
    # google-github-actions/auth@7c6bc770 (v3.0.0) action.yml
    "google-github-actions/auth@7c6bc770dae815cd3e89ee6cdf493a5fab2cc093": {
        "access_token_lifetime",
        "access_token_scopes",
        "access_token_subject",
        "audience",
        "cleanup_credentials",
        "create_credentials_file",
        "credentials_json",
        "delegates",
        "export_environment_variables",
        "id_token_audience",
        "id_token_include_email",
        "project_id",
        "request_reason",
        "service_account",
        "token_format",
        "universe",
        "workload_identity_provider",
    },
    # google-github-actions/get-gke-credentials@3da1e46a (v3.0.0) action.yml
    "google-github-actions/get-gke-credentials@3da1e46a907576cefaa90c484278bb5b259dd395": {
        "cluster_name",
        "context_name",
        "fleet_membership_name",
        "location",
        "namespace",
        "project_id",
        "quota_project_id",
        "use_auth_provider",
        "use_connect_gateway",
        "use_dns_based_endpoint",
        "use_internal_ip",
    },
    # aws-actions/configure-aws-credentials@8df58475 (v6.0.0) action.yml
    "aws-actions/configure-aws-credentials@8df5847569e6427dd6c4fb1cf565c83acfa8afa7": {
        "action-timeout-s",
        "allowed-account-ids",
        "audience",
        "aws-access-key-id",
        "aws-region",
        "aws-secret-access-key",
        "aws-session-token",
        "disable-retry",
        "force-skip-oidc",
        "http-proxy",
        "inline-session-policy",
        "managed-session-policies",
        "mask-aws-account-id",
        "no-proxy",
        "output-credentials",
        "output-env-credentials",
        "retry-max-attempts",
        "role-chaining",
        "role-duration-seconds",
        "role-external-id",
        "role-session-name",
        "role-skip-session-tagging",
        "role-to-assume",
        "special-characters-workaround",
        "transitive-tag-keys",
        "unset-current-credentials",
        "use-existing-credentials",
        "web-identity-token-file",
    },
}


def action_steps() -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path in WORKFLOWS:
        for name, job in load(path.name)["jobs"].items():
            for step in job.get("steps", []):
                if "uses" in step and not step["uses"].startswith(("$/", "./")):
                    found.append((f"{path.name}:{name}", step["uses"], step.get("with") or {}))
    return found


@pytest.mark.parametrize(("where", "uses", "given"), action_steps(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_input_given_is_defined_by_the_pinned_action(where: str, uses: str, given: dict[str, Any]) -> None:
    assert uses in INPUTS, f"{where}: {uses} is pinned to a commit whose action.yml inputs are not recorded"
    unknown = set(given) - INPUTS[uses]
    assert not unknown, f"{where}: {uses} defines no input {sorted(unknown)}"


def test_the_check_sees_a_misspelt_input() -> None:
    uses = "google-github-actions/get-gke-credentials@3da1e46a907576cefaa90c484278bb5b259dd395"
    assert {"cluster": "x"}.keys() - INPUTS[uses] == {"cluster"}
