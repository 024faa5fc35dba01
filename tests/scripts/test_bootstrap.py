"""scripts/bootstrap.sh (tools/operations/bootstrap.py) with stand-ins for pulumi, gcloud, aws and kubectl on
PATH: the exact commands a fresh project and cluster would receive, in order, that `stack init`
gets the secrets-provider URL committed in each stack file, and that a second run creates nothing.

The stand-ins answer like the real CLIs: a `describe`/`get`/`head-bucket` probe exits non-zero
for something missing (gcloud and the AWS CLI do), `pulumi stack ls --json` prints a JSON list of
`{"name": ...}` (https://www.pulumi.com/docs/iac/cli/commands/pulumi_stack_ls/).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.scripts.test_scripts import Stubs
from tools.operations.bootstrap import Runner, bootstrap
from tools.plan.harness import PROJECT_ROOT
from tools.scale.shards import generated_files

PULUMI = """case "$1" in
  version) echo v3.272.0 ;;
  stack) if [[ "$2" == ls ]]; then echo "${STUB_STACKS:-[]}"; fi ;;
esac"""
GCLOUD = """pool='{"config": {}}'
case "$*" in
  "projects describe"*) echo 123456789012 ;;
  "container node-pools describe"*) echo "${STUB_POOL:-$pool}" ;;
  *" describe "*) [[ -n "${STUB_EXISTS:-}" ]] || exit 1 ;;
esac"""
AWS = """pool='{"nodegroup": {}}'
case "$*" in
  "sts get-caller-identity"*) echo 111122223333 ;;
  "kms create-key"*) echo 1234abcd-0000 ;;
  "kms describe-key"*"KeyMetadata.Arn"*) echo arn:aws:kms:eu-west-1:111122223333:key/1234abcd-0000 ;;
  "eks describe-nodegroup"*) echo "${STUB_POOL:-$pool}" ;;
  "s3api head-bucket"* | "kms describe-key"* | "iam get-role"* | "iam get-open-id-connect-provider"* \\
    | "eks describe-access-entry"*)
    [[ -n "${STUB_EXISTS:-}" ]] || exit 1 ;;
esac"""
KUBECTL = """[[ "$*" == *" apply -f -" ]] && { echo ---; cat; } >> "$STUB_LOG.stdin"
exit 0"""
# An environment exists once PUT (or with STUB_EXISTS), protected as bootstrap leaves it plus a reviewer.
GH = """name="${2#repos/*/environments/}"; state="$STUB_LOG.env.${name%%/*}"
case "$*" in
  "api -X PUT "*) name="${4#repos/*/environments/}"; touch "$STUB_LOG.env.$name" ;;
  "api -X POST "*) touch "$STUB_LOG.policy" ;;
  *"/deployment-branch-policies")
    if [[ -n "${STUB_EXISTS:-}" || -f "$STUB_LOG.policy" ]]; then
      echo '{"branch_policies": [{"name": "main", "type": "branch"}]}'
    else
      echo '{"branch_policies": []}'
    fi ;;
  "api repos/"*)
    [[ -n "${STUB_EXISTS:-}" || -f "$state" ]] || exit 1
    echo '{"deployment_branch_policy": {"protected_branches": false, "custom_branch_policies": true},
      "protection_rules": [{"type": "required_reviewers", "reviewers": [{"type": "Team"}]}]}' ;;
esac"""


def _committed(stack: str) -> str:
    url: str = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text())["secretsprovider"]
    return url


@pytest.fixture
def clis(tmp_path: Path) -> Stubs:
    stubs = Stubs(tmp_path)
    stubs.add("pulumi", PULUMI)
    stubs.add("gcloud", GCLOUD)
    stubs.add("aws", AWS)
    stubs.add("kubectl", KUBECTL)
    stubs.add("gh", GH)
    return stubs


def _run(stubs: Stubs, *args: str, **env: str) -> tuple[int, str, list[str]]:
    result = stubs.run("scripts/bootstrap.sh", *args, PYTHON=sys.executable, **env)
    calls = [line for line in stubs.log.read_text().splitlines() if line != "pulumi version"]
    return result.returncode, result.stderr, calls


def _index(calls: list[str], prefix: str) -> int:
    return next(i for i, call in enumerate(calls) if call.startswith(prefix))


def test_prod_on_gcp_from_nothing(clis: Stubs) -> None:
    code, err, calls = _run(
        clis, "--stack", "prod", "--github-repo", "acme/tenancy", PULUMI_BACKEND_URL="gs://acme-state"
    )
    assert code == 0, err
    url = _committed("prod")
    assert url == "gcpkms://projects/tenancy-prod/locations/europe-west1/keyRings/tenancy-prod/cryptoKeys/pulumi-state"
    order = [
        "gcloud storage buckets create gs://acme-state --project=tenancy-prod --location=europe-west1",
        "gcloud storage buckets update gs://acme-state --versioning",
        "pulumi login gs://acme-state",
        "gcloud kms keyrings create tenancy-prod --location=europe-west1 --project=tenancy-prod",
        "gcloud kms keys create pulumi-state --keyring=tenancy-prod --location=europe-west1 --project=tenancy-prod",
        "pulumi stack ls --json",
        f"pulumi stack init prod --secrets-provider {url}",
        "gcloud iam workload-identity-pools create github",
        "gcloud iam roles create tenancyPreview --project=tenancy-prod",
        "gcloud iam service-accounts create tenancy-prod-preview",
        "gcloud container node-pools describe default-pool --cluster=tenancy-prod --region=europe-west1",
        "gcloud container clusters get-credentials tenancy-prod --region=europe-west1 --project=tenancy-prod",
        "kubectl --kubeconfig ",
        "gh api -X PUT repos/acme/tenancy/environments/prod-preview",
        "gh api -X PUT repos/acme/tenancy/environments/prod",
        "gh api -X POST repos/acme/tenancy/environments/prod/deployment-branch-policies -f name=main -f type=branch",
    ]
    positions = [_index(calls, prefix) for prefix in order]
    assert positions == sorted(positions), [calls[p] for p in positions]
    [init] = [call for call in calls if call.startswith("pulumi stack init")]
    assert init.split(" --secrets-provider ")[1] == url
    # Each environment's identity trusts only that environment's jobs.
    subject = (
        "principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github/subject/"
    )
    members = [c.split("--member=")[1] for c in calls if "--role=roles/iam.workloadIdentityUser" in c]
    assert members == [
        f"{subject}repo:acme/tenancy:environment:prod",
        f"{subject}repo:acme/tenancy:environment:prod-preview",
    ]
    preview = "--member=serviceAccount:tenancy-prod-preview@tenancy-prod.iam.gserviceaccount.com"
    secrets = [c for c in calls if preview in c and "tenancyPreviewSecrets" in c]
    assert secrets and secrets[0].endswith(
        '--condition=expression=resource.name.startsWith("projects/123456789012/secrets/tenancy_"),'
        "title=tenancy-secrets-only"
    )
    assert not [c for c in calls if preview in c and "roles/viewer" in c]
    assert any(preview in c and "roles/cloudkms.cryptoKeyDecrypter" in c for c in calls)
    deploy = "--member=serviceAccount:tenancy-ci@tenancy-prod.iam.gserviceaccount.com"
    assert any(deploy in c and "roles/cloudkms.cryptoKeyEncrypterDecrypter" in c for c in calls)
    assert "commit what stack init added (encryptedkey): git add Pulumi.prod.yaml" in err
    applied = list(yaml.safe_load_all(Path(f"{clis.log}.stdin").read_text()))
    binding = next(d for d in applied if d["metadata"]["name"] == "tenancy-preview-prod")
    assert binding["subjects"][0]["name"] == "tenancy-prod-preview@tenancy-prod.iam.gserviceaccount.com"
    # Every kubectl call names the kubeconfig written for this stack's cluster and its context.
    for call in (c for c in calls if c.startswith("kubectl ")):
        assert " --context gke_tenancy-prod_europe-west1_tenancy-prod " in call, call
    # The preview identity only reads the state: objectViewer on the bucket, decrypt on the key.
    bucket = [c for c in calls if c.startswith("gcloud storage buckets add-iam-policy-binding gs://acme-state")]
    assert [c.split("--role=")[1] for c in bucket if preview in c] == ["roles/storage.objectViewer"]
    assert [c.split("--role=")[1] for c in bucket if deploy in c] == ["roles/storage.objectAdmin"]


def test_a_second_run_creates_nothing_and_never_reinitialises(clis: Stubs) -> None:
    code, err, calls = _run(
        clis,
        "--stack",
        "prod",
        "--github-repo",
        "acme/tenancy",
        PULUMI_BACKEND_URL="gs://acme-state",
        STUB_EXISTS="1",
        STUB_STACKS='[{"name": "acme/tenancy/prod"}]',
    )
    assert code == 0, err
    assert not [c for c in calls if " create " in f"{c} " or "stack init" in c], calls
    assert "stack prod: exists, not re-initialised" in err
    assert any(c.startswith("gcloud iam roles update tenancyPreview") for c in calls)


def test_prod_aws_from_nothing(clis: Stubs) -> None:
    backend = "s3://acme-state?region=eu-west-1"
    code, err, calls = _run(clis, "--stack", "prod-aws", "--github-repo", "acme/tenancy", PULUMI_BACKEND_URL=backend)
    assert code == 0, err
    url = _committed("prod-aws")
    assert url == "awskms://alias/tenancy-prod-pulumi-state?region=eu-west-1"
    order = [
        "aws s3api create-bucket --bucket acme-state --region eu-west-1",
        "aws s3api put-bucket-versioning",
        "aws s3api put-public-access-block",
        f"pulumi login {backend}",
        "aws kms create-key --region eu-west-1",
        "aws kms create-alias --alias-name alias/tenancy-prod-pulumi-state --target-key-id 1234abcd-0000",
        f"pulumi stack init prod-aws --secrets-provider {url}",
        "aws iam create-open-id-connect-provider",
        "aws iam create-role --role-name tenancy-prod-aws ",
        "aws iam create-role --role-name tenancy-prod-aws-preview ",
        "aws eks describe-nodegroup --cluster-name tenancy-prod --nodegroup-name system --region eu-west-1",
    ]
    positions = [_index(calls, prefix) for prefix in order]
    assert positions == sorted(positions), [calls[p] for p in positions]
    trust = {
        c.split()[4]: json.loads(c.split(" --assume-role-policy-document ")[1].split(" ")[0])
        for c in calls
        if "create-role" in c
    }
    assert all(c.endswith(" --max-session-duration 10800") for c in calls if "create-role" in c)
    subjects = {role: doc["Statement"][0]["Condition"]["StringEquals"] for role, doc in trust.items()}
    assert subjects["tenancy-prod-aws-preview"]["token.actions.githubusercontent.com:sub"] == (
        "repo:acme/tenancy:environment:prod-aws-preview"
    )
    assert subjects["tenancy-prod-aws"]["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"
    policy = f"file://{PROJECT_ROOT / 'deploy' / 'identities' / 'aws-preview-policy.json'}"
    assert any("--role-name tenancy-prod-aws-preview --policy-name tenancy-preview" in c and policy in c for c in calls)
    state = {c.split()[4]: c for c in calls if "--policy-name tenancy-state-bucket" in c}
    assert len(state) == 2 and all('"Resource":"arn:aws:s3:::acme-state/*"' in c for c in state.values())
    # The preview role reads objects; only the deploy role writes them.
    assert '"s3:PutObject"' in state["tenancy-prod-aws"] and '"s3:DeleteObject"' in state["tenancy-prod-aws"]
    assert "Put" not in state["tenancy-prod-aws-preview"] and "Delete" not in state["tenancy-prod-aws-preview"]
    for call in (c for c in calls if c.startswith("kubectl ")):
        assert " --context tenancy-prod-aws " in call, call
    entries = [c for c in calls if c.startswith("aws eks create-access-entry")]
    assert [c.split("--kubernetes-groups ")[1] for c in entries] == ["tenancy-platform", "tenancy-preview"]
    assert [c for c in calls if "associate-access-policy" in c and "tenancy-prod-aws-preview" in c] == []


@pytest.mark.parametrize(
    ("stack", "pool", "backend"),
    [
        ("prod", '{"config": {"taints": [{"key": "dedicated", "value": "x", "effect": "NO_SCHEDULE"}]}}', "gs://s"),
        (
            "prod-aws",
            '{"nodegroup": {"taints": [{"key": "dedicated", "effect": "NO_SCHEDULE"}]}}',
            "s3://s?region=eu-west-1",
        ),
    ],
)
def test_a_tainted_system_pool_is_refused(clis: Stubs, stack: str, pool: str, backend: str) -> None:
    code, err, _ = _run(clis, "--stack", stack, PULUMI_BACKEND_URL=backend, STUB_POOL=pool)
    assert code == 1
    assert f"error: Pulumi.{stack}.yaml: tenancy:cluster.systemPool: pool " in err
    assert "has taints" in err


def test_dev_uses_its_file_backend_and_the_passphrase(clis: Stubs, tmp_path: Path) -> None:
    backend = f"file://{tmp_path}/state"
    code, err, calls = _run(clis, "--stack", "dev", PULUMI_BACKEND_URL=backend, PULUMI_CONFIG_PASSPHRASE="x")
    assert code == 0, err
    assert calls == [
        f"pulumi login {backend}",
        "pulumi stack ls --json",
        "pulumi stack init dev --secrets-provider passphrase",
    ]
    code, err, _ = _run(clis, "--stack", "dev", PULUMI_BACKEND_URL=backend)
    assert code == 1 and "Pulumi.dev.yaml: secretsprovider: passphrase: set PULUMI_CONFIG_PASSPHRASE" in err


def test_a_cloud_stack_needs_its_backend(clis: Stubs) -> None:
    code, err, calls = _run(clis, "--stack", "prod")
    assert code == 1 and "stack prod: set PULUMI_BACKEND_URL" in err
    assert calls == []


def _split(tmp_path: Path) -> Path:
    tmp_path.mkdir()
    shutil.copy(PROJECT_ROOT / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod.yaml")
    for path, text in generated_files("prod", 2, "acme", "https://git.example.org/t.git", root=tmp_path).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_split_stack_inits_its_platform_and_every_shard_with_the_committed_url(
    clis: Stubs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _split(tmp_path / "project")
    monkeypatch.setenv("PATH", f"{clis.bin}:/usr/bin:/bin")
    monkeypatch.setenv("STUB_LOG", str(clis.log))
    monkeypatch.setenv("STUB_STACKS", '[{"name": "prod-platform"}]')
    env = {"PULUMI_BACKEND_URL": "gs://acme-state"}
    created = bootstrap("prod", env, root=root, cluster=False, runner=Runner(cwd=root))
    assert created == ["prod-shard-0", "prod-shard-1"]
    inits = [line for line in clis.calls("pulumi") if line.startswith("pulumi stack init")]
    for name in created:
        committed = yaml.safe_load((root / f"Pulumi.{name}.yaml").read_text())["secretsprovider"]
        assert committed == _committed("prod")
        assert f"pulumi stack init {name} --secrets-provider {committed}" in inits
    assert len(inits) == 2


def test_a_shard_under_another_key_is_refused_before_anything_runs(
    clis: Stubs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tools.operations.bootstrap import BootstrapError

    root = _split(tmp_path / "project")
    shard = root / "Pulumi.prod-shard-1.yaml"
    document = yaml.safe_load(shard.read_text())
    shard.write_text(yaml.safe_dump({**document, "secretsprovider": "passphrase"}))
    monkeypatch.setenv("PATH", f"{clis.bin}:/usr/bin:/bin")
    monkeypatch.setenv("STUB_LOG", str(clis.log))
    with pytest.raises(BootstrapError, match=r"Pulumi.prod-shard-1.yaml: secretsprovider: 'passphrase' differs"):
        bootstrap("prod", {"PULUMI_BACKEND_URL": "gs://acme-state"}, root=root, runner=Runner(cwd=root))
    assert clis.log.read_text() == ""
