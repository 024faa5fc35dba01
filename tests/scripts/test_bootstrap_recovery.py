"""Bootstrap against a fake that keeps state, fails, and half-succeeds (tests/scripts/fake_clouds.py).

A bootstrap that stops halfway (a quota error, a network drop, a timeout after the server acted)
must be finished by running it again: no "already exists" error, no orphan (a second KMS key), no
setting skipped because the thing it belongs to now exists (a bucket without versioning, a pool
without its OIDC provider, an environment without its branch policy). Each test fails every
mutating call of a clean run in turn, before and after the change is made, then runs bootstrap
again and compares what exists with a clean run.
"""

from __future__ import annotations

import functools

import pytest

from tests.scripts.fake_clouds import Failure, FakeCloud, FakeRunner
from tools.operations import bootstrap as bootstrap_module
from tools.operations.bootstrap import BootstrapError, bootstrap
from tools.plan import harness
from tools.plan.harness import PROJECT_ROOT

CASES = {
    "prod": {"PULUMI_BACKEND_URL": "gs://acme-state"},
    "prod-aws": {"PULUMI_BACKEND_URL": "s3://acme-state?region=eu-west-1"},
}
# Namespaces the stacks' Helm releases live in, which only the first `up` creates.
RELEASE_NAMESPACES = {"cert-manager", "external-dns"}


@pytest.fixture(autouse=True)
def _tools_present(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fake answers every CLI; nothing needs to be installed.
    monkeypatch.setattr(bootstrap_module, "_need", lambda *tools: None)
    # The committed files do not change during a test: read each once (hundreds of runs below).
    monkeypatch.setattr(bootstrap_module, "stack_config", functools.cache(harness.stack_config))
    monkeypatch.setattr(bootstrap_module, "_document", functools.cache(bootstrap_module._document))


def _run(cloud: FakeCloud, stack: str, **options: bool) -> FakeRunner:
    runner = FakeRunner(cloud, PROJECT_ROOT)
    # The committed stack files already carry their encryptedkey: init does not rewrite them here.
    bootstrap(stack, CASES[stack], repo="acme/tenancy", approval=False, root=PROJECT_ROOT, runner=runner, **options)
    return runner


def _clean(stack: str) -> tuple[FakeCloud, FakeRunner]:
    cloud = FakeCloud()
    return cloud, _run(cloud, stack)


@pytest.mark.parametrize("stack", sorted(CASES))
def test_a_second_run_changes_nothing(stack: str) -> None:
    cloud, _ = _clean(stack)
    before = cloud.snapshot()
    _run(cloud, stack)
    assert cloud.snapshot() == before


@pytest.mark.parametrize("stack", sorted(CASES))
@pytest.mark.parametrize("mode", ["before", "after"])
def test_a_run_failing_at_any_step_is_finished_by_the_next(stack: str, mode: str) -> None:
    reference, _ = _clean(stack)
    expected = reference.snapshot()
    steps = list(reference.mutations)
    assert len(steps) > 20, steps
    for index, step in enumerate(steps):
        cloud = FakeCloud(fail=Failure(index, mode))
        with pytest.raises(BootstrapError, match="injected"):
            _run(cloud, stack)
        cloud.fail = None
        _run(cloud, stack)
        assert cloud.snapshot() == expected, f"failing {mode} `{step}` left a different end state"


def test_an_aws_key_created_without_its_alias_is_adopted_not_duplicated() -> None:
    cloud = FakeCloud()
    # create-key succeeds but the call times out; create-alias never runs.
    runner = FakeRunner(cloud, PROJECT_ROOT)
    create_key = next(
        i for i, call in enumerate(_clean("prod-aws")[0].mutations) if call.startswith("aws kms create-key")
    )
    cloud.fail = Failure(create_key, "after")
    with pytest.raises(BootstrapError):
        bootstrap("prod-aws", CASES["prod-aws"], repo="acme/tenancy", approval=False, runner=runner)
    cloud.fail = None
    _run(cloud, "prod-aws")
    assert list(cloud.things["kms-key"]) == ["key-1"]
    assert cloud.things["kms-alias"]["alias/tenancy-prod-pulumi-state"]["key"] == "key-1"


@pytest.mark.parametrize("stack", sorted(CASES))
def test_release_roles_wait_for_their_namespaces(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    cloud, _ = _clean(stack)
    applied = set(cloud.things["k8s"])
    assert "ClusterRole//tenancy-preview" in applied
    early = [key for key in applied if key.split("/")[1] in RELEASE_NAMESPACES]
    assert not early, f"applied before their namespace exists: {early}"
    assert "do not exist yet (the first `up` creates them)" in capsys.readouterr().err
    # After the first `up`: the same command applies the Roles.
    cloud.namespaces |= RELEASE_NAMESPACES
    _run(cloud, stack, identities=False)
    for namespace in RELEASE_NAMESPACES:
        assert f"Role/{namespace}/tenancy-preview-helm-state" in cloud.things["k8s"]
        assert f"RoleBinding/{namespace}/tenancy-preview-helm-state" in cloud.things["k8s"]


@pytest.mark.parametrize("stack", sorted(CASES))
def test_the_preview_identity_is_read_only_on_the_state(stack: str) -> None:
    cloud, _ = _clean(stack)
    if stack == "prod":
        bucket = cloud.things["binding"]["bucket:gs://acme-state"]
        preview = "serviceAccount:tenancy-prod-preview@tenancy-prod.iam.gserviceaccount.com"
        assert [role for role, members in bucket.items() if preview in members] == ["roles/storage.objectViewer"]
        key = cloud.things["binding"]["key:tenancy-prod/pulumi-state"]
        assert [role for role, members in key.items() if preview in members] == ["roles/cloudkms.cryptoKeyDecrypter"]
    else:
        role = cloud.things["iam-role"]["tenancy-prod-aws-preview"]
        assert '"Action":["s3:GetObject"]' in role["tenancy-state-bucket"]
        assert '"Action":["kms:Decrypt"]' in role["tenancy-state-key"]


def test_the_deploy_environment_must_be_reviewed_and_main_only() -> None:
    cloud = FakeCloud()
    runner = FakeRunner(cloud, PROJECT_ROOT)
    with pytest.raises(BootstrapError, match="required reviewers: add at least one"):
        bootstrap("prod", CASES["prod"], repo="acme/tenancy", runner=runner)
    # It created both, the deploy one limited to main, before saying what it cannot choose.
    assert cloud.things["environment"]["prod"]["policies"] == [{"name": "main", "type": "branch"}]
    assert "prod-preview" in cloud.things["environment"]
    cloud.things["environment"]["prod"]["protection_rules"] = [
        {"type": "required_reviewers", "reviewers": [{"type": "Team", "reviewer": {"slug": "platform"}}]}
    ]
    bootstrap("prod", CASES["prod"], repo="acme/tenancy", runner=FakeRunner(cloud, PROJECT_ROOT))
    # An environment someone opened to every branch is reported, never silently changed.
    cloud.things["environment"]["prod"]["deployment_branch_policy"] = None
    with pytest.raises(BootstrapError, match="deployment branches: choose 'Selected branches and tags'"):
        bootstrap("prod", CASES["prod"], repo="acme/tenancy", runner=FakeRunner(cloud, PROJECT_ROOT))
    assert cloud.things["environment"]["prod"]["deployment_branch_policy"] is None
    cloud.things["environment"]["prod"]["deployment_branch_policy"] = {"custom_branch_policies": True}
    cloud.things["environment"]["prod"]["policies"].append({"name": "*", "type": "branch"})
    with pytest.raises(
        BootstrapError, match=r"exactly the branch 'main', found \['\* \(branch\)', 'main \(branch\)'\]"
    ):
        bootstrap("prod", CASES["prod"], repo="acme/tenancy", runner=FakeRunner(cloud, PROJECT_ROOT))


def test_pulumi_cloud_stacks_are_created_in_the_organization() -> None:
    cloud = FakeCloud()
    runner = FakeRunner(cloud, PROJECT_ROOT)
    env = {"PULUMI_CLOUD_ORGANIZATION": "acme"}
    bootstrap("prod", env, repo="acme/tenancy", approval=False, runner=runner)
    calls = [" ".join(argv) for argv in runner.log]
    assert "pulumi login https://api.pulumi.com" in calls
    assert "pulumi stack ls --json --organization acme" in calls
    assert any(c.startswith("pulumi stack init acme/prod --secrets-provider gcpkms://") for c in calls)
    with pytest.raises(BootstrapError, match="'globex' is not an organization of the signed-in user"):
        bootstrap("prod", {"PULUMI_CLOUD_ORGANIZATION": "globex"}, runner=FakeRunner(FakeCloud(), PROJECT_ROOT))


def test_kubectl_never_uses_the_current_context() -> None:
    for stack in sorted(CASES):
        _, runner = _clean(stack)
        kubectl = [argv for argv in runner.log if argv[0] == "kubectl"]
        assert kubectl and all(argv[1] in ("--kubeconfig", "--context") for argv in kubectl), kubectl
        assert all("--context" in argv for argv in kubectl)
