"""Bootstrap a stack from nothing: backend, secrets provider, every stack and shard, CI identities.

    scripts/bootstrap.sh --stack prod [--github-repo OWNER/REPO] [--skip-identities] [--skip-cluster] [--no-approval]
    (make bootstrap STACK=prod ARGS="--github-repo acme/tenancy")

One path, every step idempotent: each looks at what exists and completes it, so a second run
changes nothing and a run that failed halfway is finished by running it again. In this order
(docs/bootstrap.md):

1. **Backend**: the bucket of `PULUMI_BACKEND_URL` (gs://, s3://; versioned, no public access, set
   on every run) or a file backend's directory; then `pulumi login`. Pulumi Cloud
   (`PULUMI_CLOUD_ORGANIZATION`, https://) needs nothing created; the signed-in user must belong to
   the organization, and the stacks are created in it (`ORG/NAME`).
2. **Secrets provider**: the Cloud KMS key ring and key, or the AWS KMS key (tagged with its alias,
   so a key whose alias was never created is adopted, not duplicated) and alias, named by the
   `secretsprovider` committed in `Pulumi.<stack>.yaml`; a passphrase stack needs the passphrase.
3. **Stacks**: `pulumi stack init <name> --secrets-provider <the committed URL>` for the stack, or,
   when it is split (`deploy/shards/<stack>.json`), for its platform stack and every shard. A stack
   the backend already has is left alone (re-initialising would mint a new data key).
4. **CI identities** (with `--github-repo`): the deploy identity of environment `<stack>` and the
   preview identity of `<stack>-preview` (docs/ci.md), each trusting only GitHub's OIDC token of
   that environment (`repo:OWNER/REPO:environment:<env>`), with the permissions in
   deploy/identities/ (tools/ci/preview_identity.py); on the state bucket and key the preview
   identity reads and decrypts only (tools/ci/state_access.py).
5. **Cluster** (unless `--skip-cluster`): the system pool named by `tenancy:cluster.systemPool`
   exists and has no taints; the preview ClusterRole is applied to the stack's own cluster, never
   the current kube context, and the Roles of namespaces the first `up` creates once they exist
   (tools/operations/bootstrap_cluster.py).
6. **GitHub environments** (with `--github-repo`): `<stack>` and `<stack>-preview` created when
   missing, and the deploy environment checked: `main` only, required reviewers
   (tools/operations/bootstrap_github.py, docs/adr/0038-github-environments-by-bootstrap.md).

Commands run through the real CLIs (`pulumi`, `gcloud`, `aws`, `kubectl`, `gh`); the tests put
stand-ins on PATH: recording ones for the commands, their order and the provider URL
(tests/scripts/test_bootstrap.py), and ones that keep state, fail and half-succeed
(tests/scripts/test_bootstrap_recovery.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from components.clouds.aws import deploy_rules as aws_deploy_rules
from components.clouds.gcp import deploy_rules
from components.clouds.gcp.edge_roles import DNS_RECORDS_PERMISSIONS, DNS_RECORDS_ROLE_ID
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.settings.pools import GkePool
from components.model.settings.stack import StackSettings
from tools.ci.preview_identity import (
    GCP_ROLE_ID,
    GCP_SECRETS_ROLE_ID,
    OUT_DIR,
    PREVIEW_GROUP,
    gcp_secret_condition,
)
from tools.ci.state_access import GCP_KEY_ROLES, GCS_ROLES, aws_key_policy, s3_state_policy
from tools.operations import bootstrap_cluster, bootstrap_github
from tools.plan.harness import PROJECT_ROOT, stack_config

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
PULUMI_CLOUD_URL = "https://api.pulumi.com"
WIF_POOL = "github"
# What the deploy identity administers on GCP, per resource type the program registers
# (components/clouds/gcp/deploy_rules.py; docs/runbooks/gke.md, "The identity that runs up").
GCP_DEPLOY_ROLES = deploy_rules.deploy_roles()
# The tag bootstrap puts on the AWS KMS key it creates, valued with the alias the key is for.
KEY_TAG = "tenancy-alias"
# Seconds an AWS CI session may last: the role's MaxSessionDuration, and the workflow's
# role-duration-seconds (pulumi-stack.yml); longer than the job's timeout.
AWS_SESSION_SECONDS = 10800
EKS_ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
INSTALL = {
    "pulumi": "curl -fsSL https://get.pulumi.com | sh (the version requirements.txt pins)",
    "gcloud": "https://cloud.google.com/sdk/docs/install",
    "aws": "https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html",
    "kubectl": "https://kubernetes.io/docs/tasks/tools/",
    "gh": "https://cli.github.com (then `gh auth login` as an admin of the repository)",
}


class BootstrapError(Exception):
    """A step that cannot go on; the message names the file and key or the command."""


@dataclass
class Runner:
    """Runs commands, says what it runs, and probes (a command whose exit status is the answer)."""

    dry_run: bool = False
    cwd: Path = PROJECT_ROOT
    log: list[list[str]] = field(default_factory=list)

    def run(
        self, *argv: str, stdin: str | None = None, placeholder: str = "", env: dict[str, str] | None = None
    ) -> str:
        """Run `argv` (with `env` added to the environment); its output. A dry run answers
        `placeholder` where a later command uses the output."""
        print("+ " + " ".join(argv), file=sys.stderr)
        self.log.append(list(argv))
        if self.dry_run:
            return placeholder
        environment = {**os.environ, **env} if env else None
        result = subprocess.run(
            list(argv), input=stdin, capture_output=True, text=True, check=False, cwd=self.cwd, env=environment
        )
        if result.returncode != 0:
            raise BootstrapError(f"`{' '.join(argv)}` failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout.strip()

    def probe(self, *argv: str) -> bool:
        """True when the command succeeds: the thing it describes exists."""
        self.log.append(list(argv))
        if self.dry_run:
            return False
        return subprocess.run(list(argv), capture_output=True, text=True, check=False, cwd=self.cwd).returncode == 0


@dataclass(frozen=True)
class Stack:
    name: str
    secrets_provider: str


def _document(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise BootstrapError(f"{path.name}: no such stack file")
    document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(document, dict):
        raise BootstrapError(f"{path.name}: expected a mapping")
    return document


def stacks_of(stack: str, root: Path = PROJECT_ROOT) -> list[Stack]:
    """The stacks to initialise: `stack`, or its platform stack and shards when it is split.

    Every one must carry the base stack's committed `secretsprovider`: a shard encrypted under
    another key could not be read by the identities granted the base stack's key.
    """
    base = _document(root / f"Pulumi.{stack}.yaml").get("secretsprovider")
    if not isinstance(base, str) or not base:
        raise BootstrapError(
            f"Pulumi.{stack}.yaml: secretsprovider: missing; commit the KMS URL (or `passphrase`) first"
        )
    layout_path = root / "deploy" / "shards" / f"{stack}.json"
    names = [stack]
    if layout_path.is_file():
        layout = json.loads(layout_path.read_text(encoding="utf-8"))
        names = [layout["platform"], *layout["shards"]]
    stacks = []
    for name in names:
        provider = _document(root / f"Pulumi.{name}.yaml").get("secretsprovider")
        if provider != base:
            raise BootstrapError(
                f"Pulumi.{name}.yaml: secretsprovider: {provider!r} differs from Pulumi.{stack}.yaml's {base!r} "
                "(re-run tenancy shards write)"
            )
        stacks.append(Stack(name, base))
    return stacks


def _need(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        raise BootstrapError("; ".join(f"missing: {tool}; install: {INSTALL[tool]}" for tool in missing))


def backend(runner: Runner, url: str, settings: StackSettings) -> None:
    """Create the state bucket when it is missing, then log in."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        Path(parts.path).mkdir(parents=True, exist_ok=True)
    elif parts.scheme == "gs":
        bucket = f"gs://{parts.netloc}"
        if not runner.probe("gcloud", "storage", "buckets", "describe", bucket):
            if settings.gcp is None:
                raise BootstrapError(f"{settings.source}: tenancy:gcp: needed to create {bucket}")
            runner.run(
                "gcloud", "storage", "buckets", "create", bucket, f"--project={settings.gcp.project}",
                f"--location={settings.gcp.region}", "--uniform-bucket-level-access", "--public-access-prevention",
            )  # fmt: skip
        # Every run, not only after a create: a run that stopped between the two leaves a bucket
        # without versioning, which the next run must still fix (the update is idempotent).
        runner.run(
            "gcloud", "storage", "buckets", "update", bucket, "--versioning", "--uniform-bucket-level-access",
            "--public-access-prevention",
        )  # fmt: skip
    elif parts.scheme == "s3":
        region = (parse_qs(parts.query).get("region") or [settings.aws.region if settings.aws else ""])[0]
        if not region:
            raise BootstrapError(f"PULUMI_BACKEND_URL: {url}: add ?region=<region>")
        if not runner.probe("aws", "s3api", "head-bucket", "--bucket", parts.netloc, "--region", region):
            # us-east-1 is the default location and refuses a LocationConstraint naming it (S3 CreateBucket).
            constraint = (
                [] if region == "us-east-1" else ["--create-bucket-configuration", f"LocationConstraint={region}"]
            )
            runner.run("aws", "s3api", "create-bucket", "--bucket", parts.netloc, "--region", region, *constraint)
        # Every run (both calls are idempotent): a run that stopped after the create still converges.
        runner.run(
                "aws", "s3api", "put-bucket-versioning", "--bucket", parts.netloc, "--region", region,
                "--versioning-configuration", "Status=Enabled",
        )  # fmt: skip
        runner.run(
            "aws", "s3api", "put-public-access-block", "--bucket", parts.netloc, "--region", region,
            "--public-access-block-configuration",
            "BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true",
        )  # fmt: skip
    elif parts.scheme != "https":
        raise BootstrapError(f"PULUMI_BACKEND_URL: {url}: expected gs://, s3://, file:// or https:// (Pulumi Cloud)")
    runner.run("pulumi", "login", url)


@dataclass(frozen=True)
class GcpKey:
    project: str
    location: str
    ring: str
    key: str


def gcp_key(url: str) -> GcpKey:
    """The parts of `gcpkms://projects/P/locations/L/keyRings/R/cryptoKeys/K`."""
    parts = url.removeprefix("gcpkms://").split("/")
    if len(parts) != 8 or parts[0::2] != ["projects", "locations", "keyRings", "cryptoKeys"]:
        raise BootstrapError(
            f"secretsprovider: {url}: expected gcpkms://projects/P/locations/L/keyRings/R/cryptoKeys/K"
        )
    return GcpKey(parts[1], parts[3], parts[5], parts[7])


def aws_key(url: str, settings: StackSettings) -> tuple[str, str]:
    """(alias/<name>, region) of `awskms://alias/<name>?region=<region>`."""
    parts = urlsplit(url)
    key_id = f"{parts.netloc}{parts.path}"
    region = (parse_qs(parts.query).get("region") or [settings.aws.region if settings.aws else ""])[0]
    if not key_id.startswith("alias/") or not region:
        raise BootstrapError(f"secretsprovider: {url}: expected awskms://alias/<name>?region=<region>")
    return key_id, region


def secrets_provider(runner: Runner, url: str, source: str, settings: StackSettings, env: dict[str, str]) -> None:
    """Create the KMS key the committed URL names (or check the passphrase is there)."""
    if url == "passphrase":
        if not env.get("PULUMI_CONFIG_PASSPHRASE") and not env.get("PULUMI_CONFIG_PASSPHRASE_FILE"):
            raise BootstrapError(f"{source}: secretsprovider: passphrase: set PULUMI_CONFIG_PASSPHRASE(_FILE)")
    elif url.startswith("gcpkms://"):
        key = gcp_key(url)
        where = (f"--location={key.location}", f"--project={key.project}")
        if not runner.probe("gcloud", "kms", "keyrings", "describe", key.ring, *where):
            runner.run("gcloud", "kms", "keyrings", "create", key.ring, *where)
        if not runner.probe("gcloud", "kms", "keys", "describe", key.key, f"--keyring={key.ring}", *where):
            runner.run(
                "gcloud", "kms", "keys", "create", key.key, f"--keyring={key.ring}", *where, "--purpose=encryption"
            )  # fmt: skip
    elif url.startswith("awskms://"):
        alias, region = aws_key(url, settings)
        if not runner.probe("aws", "kms", "describe-key", "--key-id", alias, "--region", region):
            # A run that stopped between create-key and create-alias left a key without its alias:
            # the tag finds it, so a second run adopts it instead of creating (and paying for) another.
            found = runner.run(
                "aws", "resourcegroupstaggingapi", "get-resources", "--region", region,
                "--resource-type-filters", "kms:key", "--tag-filters", f"Key={KEY_TAG},Values={alias}",
                "--query", "ResourceTagMappingList[].ResourceARN", "--output", "text",
            )  # fmt: skip
            keys = [arn for arn in found.split() if arn and arn != "None"]
            if len(keys) > 1:
                raise BootstrapError(f"secretsprovider: {url}: {len(keys)} keys tagged {KEY_TAG}={alias}: {keys}")
            key_id = keys[0] if keys else runner.run(
                "aws", "kms", "create-key", "--region", region, "--description", "tenancy Pulumi state secrets",
                "--tags", f"TagKey={KEY_TAG},TagValue={alias}",
                "--query", "KeyMetadata.KeyId", "--output", "text", placeholder="KEY_ID",
            )  # fmt: skip
            runner.run(
                "aws", "kms", "create-alias", "--alias-name", alias, "--target-key-id", key_id, "--region", region
            )
    else:
        raise BootstrapError(f"{source}: secretsprovider: {url}: expected gcpkms://, awskms:// or passphrase")


def existing_stacks(runner: Runner, organization: str = "") -> set[str]:
    """Stack names the backend has for this project (the last part of `org/project/stack`); on
    Pulumi Cloud only those of `organization` (`pulumi stack ls --organization`)."""
    scope = ["--organization", organization] if organization else []
    listing = runner.run("pulumi", "stack", "ls", "--json", *scope)
    return {str(entry["name"]).rsplit("/", 1)[-1] for entry in json.loads(listing or "[]")}


def check_organization(runner: Runner, organization: str) -> None:
    """The signed-in Pulumi Cloud user belongs to `organization` (`pulumi whoami --json`, field
    `organizations`, pkg/cmd/pulumi/whoami/whoami.go): otherwise `stack init ORG/NAME` fails halfway."""
    text = runner.run("pulumi", "whoami", "--json", placeholder=json.dumps({"organizations": [organization]}))
    organizations = json.loads(text or "{}").get("organizations") or []
    if organization not in organizations:
        raise BootstrapError(
            f"PULUMI_CLOUD_ORGANIZATION: {organization!r} is not an organization of the signed-in user "
            f"(theirs: {organizations}); sign in as a member, or correct the variable"
        )


def init_stacks(runner: Runner, stacks: list[Stack], root: Path, organization: str = "") -> list[str]:
    """`pulumi stack init` each stack the backend lacks, with its committed provider; the names initialised.

    On Pulumi Cloud the stack is created in `organization` (`ORG/NAME`), not in the user's default
    organization, which is where CI (an organization's team token) would never find it.
    """
    have = existing_stacks(runner, organization)
    created = []
    for stack in stacks:
        if stack.name in have:
            print(f"stack {stack.name}: exists, not re-initialised", file=sys.stderr)
            continue
        name = f"{organization}/{stack.name}" if organization else stack.name
        runner.run("pulumi", "stack", "init", name, "--secrets-provider", stack.secrets_provider)
        created.append(stack.name)
        after = _document(root / f"Pulumi.{stack.name}.yaml").get("secretsprovider")
        if not runner.dry_run and after != stack.secrets_provider:
            raise BootstrapError(f"Pulumi.{stack.name}.yaml: secretsprovider changed to {after!r} by stack init")
    return created


def _subject(repo: str, environment: str) -> str:
    """GitHub's OIDC subject for a job in an environment (docs.github.com, "About security hardening
    with OpenID Connect", example subject claims: `repo:ORG/REPO:environment:NAME`)."""
    return f"repo:{repo}:environment:{environment}"


def gcp_identities(
    runner: Runner, stack: str, settings: StackSettings, repo: str, state: GcpKey | None, bucket: str | None
) -> None:
    """A service account per environment, impersonable only from that environment's jobs. On the
    state bucket and key the preview only reads and decrypts (a DIY preview takes no lock and writes
    nothing, tools/ci/state_access.py); the deploy identity writes objects and encrypts."""
    assert settings.gcp is not None
    project = settings.gcp.project
    number = runner.run(
        "gcloud", "projects", "describe", project, "--format=value(projectNumber)", placeholder="PROJECT_NUMBER"
    )  # fmt: skip
    where = ("--location=global", f"--project={project}")
    if not runner.probe("gcloud", "iam", "workload-identity-pools", "describe", WIF_POOL, *where):
        runner.run("gcloud", "iam", "workload-identity-pools", "create", WIF_POOL, *where)
    # Looked for on its own: a run that stopped after creating the pool must still add its provider.
    provider = ("--workload-identity-pool", WIF_POOL, *where)
    if not runner.probe("gcloud", "iam", "workload-identity-pools", "providers", "describe", WIF_POOL, *provider):
        runner.run(
            "gcloud", "iam", "workload-identity-pools", "providers", "create-oidc", WIF_POOL,
            f"--workload-identity-pool={WIF_POOL}", *where, f"--issuer-uri={GITHUB_ISSUER}",
            "--attribute-mapping=google.subject=assertion.sub,attribute.repository=assertion.repository",
            f"--attribute-condition=assertion.repository=='{repo}'",
        )  # fmt: skip
    for role_id in (GCP_ROLE_ID, GCP_SECRETS_ROLE_ID):
        verb = (
            "update"
            if runner.probe("gcloud", "iam", "roles", "describe", role_id, f"--project={project}")
            else "create"
        )
        file = OUT_DIR / ("gcp-preview-role.yaml" if role_id == GCP_ROLE_ID else "gcp-preview-secrets-role.yaml")
        runner.run("gcloud", "iam", "roles", verb, role_id, f"--project={project}", f"--file={file}", "--quiet")
    # cert-manager's and external-dns's role on the stack's zones: record sets only (edge_roles.py).
    records = (DNS_RECORDS_ROLE_ID, f"--project={project}")
    runner.run(
        "gcloud", "iam", "roles",
        "update" if runner.probe("gcloud", "iam", "roles", "describe", *records) else "create", *records,
        "--title=tenancy DNS records", f"--permissions={','.join(DNS_RECORDS_PERMISSIONS)}", "--stage=GA",
        "--quiet",
    )  # fmt: skip
    users = [u for u in settings.policy.platform_identities.users if u.endswith(f"@{project}.iam.gserviceaccount.com")]
    if len(users) != 1:
        raise BootstrapError(
            f"{settings.source}: tenancy:policy.platformIdentities.users: list exactly one service account of "
            f"{project} (the deploy identity of environment {stack}); found {users}"
        )
    accounts = {stack: users[0], f"{stack}-preview": f"tenancy-{stack}-preview@{project}.iam.gserviceaccount.com"}
    for environment, email in accounts.items():
        preview = environment.endswith("-preview")
        if not runner.probe("gcloud", "iam", "service-accounts", "describe", email, f"--project={project}"):
            runner.run(
                "gcloud", "iam", "service-accounts", "create", email.split("@")[0], f"--project={project}",
                f"--display-name=tenancy {environment}",
            )  # fmt: skip
        principal = (
            f"principal://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/{WIF_POOL}"
            f"/subject/{_subject(repo, environment)}"
        )
        runner.run(
            "gcloud", "iam", "service-accounts", "add-iam-policy-binding", email, f"--project={project}",
            "--role=roles/iam.workloadIdentityUser", f"--member={principal}",
        )  # fmt: skip
        member = f"--member=serviceAccount:{email}"
        secrets_only = f"expression={gcp_secret_condition(number)},title=tenancy-secrets-only"
        bindings = (
            [
                (f"projects/{project}/roles/{GCP_ROLE_ID}", "None"),
                (f"projects/{project}/roles/{GCP_SECRETS_ROLE_ID}", secrets_only),
            ]
            if preview
            else [(role, deploy_rules.grant_condition(role) or "None") for role in GCP_DEPLOY_ROLES]
        )
        for role, condition in bindings:
            runner.run(
                "gcloud", "projects", "add-iam-policy-binding", project, member, f"--role={role}",
                f"--condition={condition}",
            )  # fmt: skip
        if not preview:
            # actAs only on the accounts node pools run as (deploy_rules.ON_ACCOUNTS), never on the project.
            for node_account in node_pool_accounts(settings):
                runner.run(
                    "gcloud", "iam", "service-accounts", "add-iam-policy-binding", node_account,
                    f"--project={project}", member, f"--role={deploy_rules.SERVICE_ACCOUNT_USER}",
                )  # fmt: skip
        access = "preview" if preview else "deploy"
        if state is not None:
            runner.run(
                "gcloud", "kms", "keys", "add-iam-policy-binding", state.key, f"--keyring={state.ring}",
                f"--location={state.location}", f"--project={state.project}", member,
                f"--role={GCP_KEY_ROLES[access]}",
            )  # fmt: skip
        if bucket is not None:
            runner.run(
                "gcloud", "storage", "buckets", "add-iam-policy-binding", bucket, member,
                f"--role={GCS_ROLES[access]}",
            )  # fmt: skip


def node_pool_accounts(settings: StackSettings) -> list[str]:
    """The service accounts the stack's GKE node pools run as (the deploy identity acts as them)."""
    pools = [pool for pool in settings.node_pools.values() if isinstance(pool, GkePool)]
    return sorted({pool.service_account for pool in pools if pool.service_account})


def _trust_policy(account: str, repo: str, environment: str) -> str:
    provider = f"arn:aws:iam::{account}:oidc-provider/token.actions.githubusercontent.com"
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": provider},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            "token.actions.githubusercontent.com:aud": "sts.amazonaws.com",
                            "token.actions.githubusercontent.com:sub": _subject(repo, environment),
                        }
                    },
                }
            ],
        },
        separators=(",", ":"),
    )


def aws_identities(
    runner: Runner, stack: str, settings: StackSettings, repo: str, state_alias: str | None, bucket: str | None
) -> None:
    """An IAM role per environment, assumable only from that environment's jobs, whose sessions may
    last AWS_SESSION_SECONDS (an `up` outlives the default hour). On the state the preview only
    reads (GetObject, ListBucket) and decrypts (tools/ci/state_access.py)."""
    assert settings.aws is not None
    region = settings.aws.region
    account = runner.run(
        "aws", "sts", "get-caller-identity", "--query", "Account", "--output", "text", placeholder="ACCOUNT_ID"
    )  # fmt: skip
    provider = f"arn:aws:iam::{account}:oidc-provider/token.actions.githubusercontent.com"
    if not runner.probe("aws", "iam", "get-open-id-connect-provider", "--open-id-connect-provider-arn", provider):
        runner.run(
            "aws", "iam", "create-open-id-connect-provider", f"--url={GITHUB_ISSUER}",
            "--client-id-list=sts.amazonaws.com",
        )  # fmt: skip
    key_arn = ""
    if state_alias is not None:
        key_arn = runner.run(
            "aws", "kms", "describe-key", "--key-id", state_alias, "--region", region,
            "--query", "KeyMetadata.Arn", "--output", "text", placeholder="KEY_ARN",
        )  # fmt: skip
    groups = [g for g in settings.policy.platform_identities.groups if not g.startswith(("system:", "kubeadm:"))]
    if not groups:
        raise BootstrapError(
            f"{settings.source}: tenancy:policy.platformIdentities.groups: name the Kubernetes group of the deploy role"
        )
    cluster = settings.cluster.name
    for environment in (stack, f"{stack}-preview"):
        preview = environment.endswith("-preview")
        role = f"tenancy-{environment}"
        trust = _trust_policy(account, repo, environment)
        duration = str(AWS_SESSION_SECONDS)
        if runner.probe("aws", "iam", "get-role", "--role-name", role):
            runner.run("aws", "iam", "update-assume-role-policy", "--role-name", role, "--policy-document", trust)
            runner.run("aws", "iam", "update-role", "--role-name", role, "--max-session-duration", duration)
        else:
            runner.run(
                "aws", "iam", "create-role", "--role-name", role, "--assume-role-policy-document", trust,
                "--max-session-duration", duration,
            )  # fmt: skip
        if preview:
            runner.run(
                "aws", "iam", "put-role-policy", "--role-name", role, "--policy-name", "tenancy-preview",
                "--policy-document", f"file://{OUT_DIR / 'aws-preview-policy.json'}",
            )  # fmt: skip
        if not preview:
            # What the program's resource types need, as data (components/clouds/aws/deploy_rules.py).
            runner.run(
                "aws", "iam", "put-role-policy", "--role-name", role, "--policy-name", "tenancy-deploy",
                "--policy-document", json.dumps(aws_deploy_rules.deploy_policy(settings), separators=(",", ":")),
            )  # fmt: skip
        access = "preview" if preview else "deploy"
        if key_arn:
            document = aws_key_policy(key_arn, access)
            runner.run(
                "aws", "iam", "put-role-policy", "--role-name", role, "--policy-name", "tenancy-state-key",
                "--policy-document", json.dumps(document, separators=(",", ":")),
            )  # fmt: skip
        if bucket is not None:
            runner.run(
                "aws", "iam", "put-role-policy", "--role-name", role, "--policy-name", "tenancy-state-bucket",
                "--policy-document", json.dumps(s3_state_policy(bucket, access), separators=(",", ":")),
            )  # fmt: skip
        arn = f"arn:aws:iam::{account}:role/{role}"
        entry = ("--cluster-name", cluster, "--principal-arn", arn, "--region", region)
        if not runner.probe("aws", "eks", "describe-access-entry", *entry):
            runner.run(
                "aws", "eks", "create-access-entry", *entry,
                "--kubernetes-groups", PREVIEW_GROUP if preview else groups[0],
            )  # fmt: skip
        if not preview:
            runner.run(
                "aws", "eks", "associate-access-policy", *entry, "--policy-arn", EKS_ADMIN_POLICY,
                "--access-scope", "type=cluster",
            )  # fmt: skip


def system_pool(runner: Runner, settings: StackSettings) -> None:
    """The pool named by tenancy:cluster.systemPool exists and has no taints."""
    pool = settings.cluster.system_pool
    if pool is None:
        return
    if settings.cloud == "gcp" and settings.gcp is not None:
        location = settings.gcp.cluster_location or settings.gcp.region
        # A zone ends in `-<letter>` (europe-west1-b); gcloud takes zonal and regional clusters apart.
        where = f"--zone={location}" if location[-2:-1] == "-" else f"--region={location}"
        text = runner.run(
            "gcloud", "container", "node-pools", "describe", pool, f"--cluster={settings.cluster.name}",
            where, f"--project={settings.gcp.project}", "--format=json",
        )  # fmt: skip
        taints = ((json.loads(text or "{}").get("config") or {}).get("taints")) or []
    elif settings.cloud == "aws" and settings.aws is not None:
        text = runner.run(
            "aws", "eks", "describe-nodegroup", "--cluster-name", settings.cluster.name, "--nodegroup-name", pool,
            "--region", settings.aws.region, "--output", "json",
        )  # fmt: skip
        taints = ((json.loads(text or "{}").get("nodegroup") or {}).get("taints")) or []
    else:
        return
    if taints:
        raise BootstrapError(
            f"{settings.source}: tenancy:cluster.systemPool: pool {pool!r} has taints {taints}; CoreDNS, Karpenter, "
            "External Secrets and Flux need an untainted pool"
        )


def preview_subject(stack: str, settings: StackSettings) -> tuple[str, str] | None:
    """(kind, name) of the preview identity as the cluster sees it, or None where there is none (kind).

    GKE names a Google service account by its e-mail as the Kubernetes user; the EKS access entry of
    the preview role carries the group of deploy/identities/kubernetes-preview-clusterrole.yaml.
    """
    if settings.cloud == "gcp" and settings.gcp is not None:
        return "User", f"tenancy-{stack}-preview@{settings.gcp.project}.iam.gserviceaccount.com"
    if settings.cloud == "aws":
        return "Group", PREVIEW_GROUP
    return None


def check_preview_identity(stack: str, settings: StackSettings) -> None:
    """The preview identity this script binds must be one `tenancy-preview-dry-run` holds to dry runs.

    Otherwise RBAC's `patch` would let it write for real (docs/bootstrap.md#4-ci-identities).
    """
    subject = preview_subject(stack, settings)
    if subject is None:
        return
    kind, name = subject
    field = "users" if kind == "User" else "groups"
    if name not in getattr(settings.policy.preview_identities, field):
        raise BootstrapError(
            f"{settings.source}: tenancy:policy.previewIdentities.{field}: list {name!r} (the preview identity "
            "bound to the tenancy-preview ClusterRole), or its patches would not be held to dry runs"
        )


def bootstrap(
    stack: str,
    env: dict[str, str],
    *,
    repo: str | None = None,
    identities: bool = True,
    cluster: bool = True,
    approval: bool = True,
    root: Path = PROJECT_ROOT,
    runner: Runner | None = None,
) -> list[str]:
    """Every step above, in order; returns the stacks initialised by this run.

    Each step looks at what exists and completes it, so a run that failed halfway is finished by
    running it again (tests/scripts/test_bootstrap_recovery.py replays failures at every step).
    """
    runner = runner or Runner(cwd=root)
    config, _ = stack_config(stack, root=root)
    source = f"Pulumi.{stack}.yaml"
    try:
        settings = parse_settings(config, source)
    except ConfigurationError as error:
        raise BootstrapError(str(error)) from error
    if identities or cluster:
        check_preview_identity(stack, settings)
    stacks = stacks_of(stack, root)
    organization = env.get("PULUMI_CLOUD_ORGANIZATION", "")
    url = env.get("PULUMI_BACKEND_URL", "") or (PULUMI_CLOUD_URL if organization else "")
    if not url and stack == "dev":
        url = f"file://{root}/.pulumi-state"
    if not url:
        raise BootstrapError(
            f"stack {stack}: set PULUMI_BACKEND_URL to its state backend (gs://, s3://), or "
            "PULUMI_CLOUD_ORGANIZATION for Pulumi Cloud"
        )
    if url.startswith("https://") and not organization:
        raise BootstrapError(
            f"PULUMI_BACKEND_URL: {url}: Pulumi Cloud: set PULUMI_CLOUD_ORGANIZATION too, the organization "
            "the stacks belong to (CI looks for them there)"
        )
    provider = stacks[0].secrets_provider
    cloud_stack = settings.cloud in ("gcp", "aws")
    tools = ["pulumi"]
    tools += (
        ["gcloud"] if settings.cloud == "gcp" or provider.startswith("gcpkms://") or url.startswith("gs://") else []
    )
    tools += ["aws"] if settings.cloud == "aws" or provider.startswith("awskms://") or url.startswith("s3://") else []
    tools += ["kubectl"] if cluster and cloud_stack else []
    tools += ["gh"] if identities and repo and cloud_stack else []
    if not runner.dry_run:
        _need(*tools)
    backend(runner, url, settings)
    if url.startswith("https://"):
        check_organization(runner, organization)
    secrets_provider(runner, provider, source, settings, env)
    created = init_stacks(runner, stacks, root, organization if url.startswith("https://") else "")
    if identities and repo and settings.cloud == "gcp":
        state = gcp_key(provider) if provider.startswith("gcpkms://") else None
        bucket = f"gs://{urlsplit(url).netloc}" if url.startswith("gs://") else None
        gcp_identities(runner, stack, settings, repo, state, bucket)
    elif identities and repo and settings.cloud == "aws":
        alias = aws_key(provider, settings)[0] if provider.startswith("awskms://") else None
        bucket = urlsplit(url).netloc if url.startswith("s3://") else None
        aws_identities(runner, stack, settings, repo, alias, bucket)
    elif identities and cloud_stack:
        print("note: no --github-repo: CI identities skipped (docs/bootstrap.md#4-ci-identities)", file=sys.stderr)
    if url.startswith("https://") and identities and repo:
        print(
            f"note: Pulumi Cloud: give the team named by PULUMI_CLOUD_TEAM in environment {stack}-preview "
            f"Stack Read, and in {stack} Stack Write (docs/ci.md#pulumi-cloud)",
            file=sys.stderr,
        )
    if cluster and cloud_stack:
        system_pool(runner, settings)
        cluster_access(runner, stack, settings)
    if identities and repo and cloud_stack:
        try:
            bootstrap_github.ensure_environments(runner, repo, stack, approval=approval)
        except bootstrap_github.UnprotectedEnvironmentError as problem:
            raise BootstrapError(str(problem)) from problem
    if created:
        files = " ".join(f"Pulumi.{name}.yaml" for name in created)
        print(f"commit what stack init added (encryptedkey): git add {files}", file=sys.stderr)
    return created


def cluster_access(runner: Runner, stack: str, settings: StackSettings) -> None:
    """The preview identity's Kubernetes access, applied to this stack's cluster by name
    (bootstrap_cluster): the cluster-wide part now, the Roles of release namespaces once they exist."""
    extra = []
    subject = preview_subject(stack, settings)
    if subject is not None and subject[0] == "User":
        # GKE names a Google service account by its e-mail as the Kubernetes user.
        extra.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": f"tenancy-preview-{stack}"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "tenancy-preview"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": subject[1]}],
            }
        )
    with tempfile.TemporaryDirectory(prefix="tenancy-bootstrap-") as directory:
        try:
            kubectl = bootstrap_cluster.kubectl(runner, stack, settings, Path(directory))
        except ValueError as error:
            raise BootstrapError(str(error)) from error
        missing = bootstrap_cluster.apply_preview_access(runner, kubectl, extra)
    if missing:
        print(
            f"note: namespaces {', '.join(missing)} do not exist yet (the first `up` creates them): after it, run "
            f"`scripts/bootstrap.sh --stack {stack} --skip-identities` again to let previews read their Helm "
            "releases (docs/go-live.md)",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy bootstrap", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", required=True, help="stack name; reads Pulumi.<stack>.yaml")
    parser.add_argument("--github-repo", help="OWNER/REPO whose environments' jobs may act as the CI identities")
    parser.add_argument("--skip-identities", action="store_true", help="do not create the CI identities")
    parser.add_argument("--skip-cluster", action="store_true", help="no system pool check, no preview ClusterRole")
    parser.add_argument(
        "--no-approval",
        action="store_true",
        help="accept a deploy environment without required reviewers (a stack nobody must approve)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run none")
    args = parser.parse_args(argv)
    try:
        bootstrap(
            args.stack,
            dict(os.environ),
            repo=args.github_repo,
            identities=not args.skip_identities,
            cluster=not args.skip_cluster,
            approval=not args.no_approval,
            runner=Runner(dry_run=args.dry_run, cwd=PROJECT_ROOT),
        )
    except BootstrapError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
