"""The cloud trust each GitHub environment gets: one identity per environment, bound to its subject.

    tenancy ci-identity --repository acme/tenancy --stack prod [--aws-account 123456789012]

Every job that signs in to a cloud runs in a GitHub environment (`<stack>` for deploys,
`<stack>-preview` for previews and drift checks, pulumi-stack.yml). GitHub then issues an OIDC
token whose subject is `repo:<owner>/<repo>:environment:<environment>`, and no longer
`repo:<owner>/<repo>:ref:refs/heads/main` ("About security hardening with OpenID Connect",
https://docs.github.com/en/actions/security-for-github-actions/security-hardening-your-deployments/about-security-hardening-with-openid-connect,
"Example subject claims": filtering for a specific environment). So a trust on the branch ref never
matches, and a trust on the whole repository would let any branch's preview job, which any
pull request from a branch of the repository can run, ask for the deploy identity. Each cloud
identity therefore trusts exactly one environment's subject: the deploy identity trusts
`<stack>`, whose deployment branch rule admits only `main` and whose reviewers gate prod; the
preview identity trusts `<stack>-preview` and has read-only rights (docs/adr/0031).

It prints, for one stack, the subjects and the trust to configure on each cloud: the AWS IAM role
trust policies and the GCP principals to grant `roles/iam.workloadIdentityUser`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

ISSUER = "token.actions.githubusercontent.com"
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_STACK = re.compile(r"^[A-Za-z0-9_.-]+$")


def environments(stack: str) -> dict[str, str]:
    """The GitHub environments of a (base) stack, by role, as the workflows name them."""
    return {"deploy": stack, "preview": f"{stack}-preview"}


def subject(repository: str, environment: str) -> str:
    """The `sub` claim of a job running in `environment` (GitHub's environment subject format)."""
    return f"repo:{repository}:environment:{environment}"


def aws_trust_policy(repository: str, environment: str, account: str) -> dict[str, Any]:
    """The trust policy of the IAM role for one environment: GitHub's OIDC provider, this subject only."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": f"arn:aws:iam::{account}:oidc-provider/{ISSUER}"},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{ISSUER}:aud": "sts.amazonaws.com",
                        f"{ISSUER}:sub": subject(repository, environment),
                    }
                },
            }
        ],
    }


def gcp_principal(project_number: str, pool: str, repository: str, environment: str) -> str:
    """The workload identity principal of one environment (provider maps google.subject=assertion.sub)."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{pool}/subject/{subject(repository, environment)}"
    )


def trust(repository: str, stack: str, aws_account: str, gcp_project_number: str, pool: str) -> dict[str, Any]:
    """Per role (deploy, preview): the environment, its subject and each cloud's trust."""
    if not _REPOSITORY.match(repository):
        raise ValueError(f"--repository: expected owner/name, got {repository!r}")
    if not _STACK.match(stack):
        raise ValueError(f"--stack: expected a stack name, got {stack!r}")
    return {
        role: {
            "environment": environment,
            "subject": subject(repository, environment),
            "awsTrustPolicy": aws_trust_policy(repository, environment, aws_account),
            "gcpPrincipal": gcp_principal(gcp_project_number, pool, repository, environment),
        }
        for role, environment in environments(stack).items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy ci-identity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repository", required=True, help="owner/name of this repository on GitHub")
    parser.add_argument("--stack", required=True, help="a base stack (its shards use its environments)")
    parser.add_argument("--aws-account", default="AWS_ACCOUNT_ID", help="AWS account id in the role ARNs printed")
    parser.add_argument(
        "--gcp-project-number", default="PROJECT_NUMBER", help="Google project number in the principals printed"
    )
    parser.add_argument("--gcp-pool", default="github", help="workload identity pool id (default github)")
    args = parser.parse_args(argv)
    try:
        result = trust(args.repository, args.stack, args.aws_account, args.gcp_project_number, args.gcp_pool)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
