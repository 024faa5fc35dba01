"""The deploy identities' permissions in the GKE and EKS runbooks, rendered from the clouds' deploy
rules (components/clouds/gcp/deploy_rules.py, components/clouds/aws/deploy_rules.py), so the
runbooks list exactly what the bootstrap grants."""

from __future__ import annotations

from components.clouds.aws import deploy_rules as aws_rules
from components.clouds.gcp import deploy_rules as gcp_rules


def _codes(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"`{value}`" for value in values)


def aws_deploy() -> str:
    """One row per resource type (actions on itself, actions its inputs need elsewhere), the reads."""
    lines = ["| Resource type | Actions | On what its inputs name |", "| --- | --- | --- |"]
    for type_token, rule in sorted(aws_rules.RULES.items()):
        uses = "; ".join(f"{_codes(actions)} on its `{name}` ({kind})" for name, (actions, kind) in rule.uses.items())
        lines.append(f"| `{type_token}` | {_codes(rule.actions)} | {uses or '-'} |")
    for type_token, actions in sorted(aws_rules.READS.items()):
        lines.append(f"| `{type_token}` (read) | {_codes(actions)} | - |")
    lines += [
        "",
        "As one policy (`deploy_policy`, attached by the bootstrap as `tenancy-deploy`): IAM writes on the",
        f"program's own roles only ({_codes(aws_rules.PROGRAM_ROLES)}); KMS key actions, with",
        f"{_codes(sorted({*aws_rules.RDS_KEY, *aws_rules.SECRETS_KEY}))}, on keys tagged `managed-by: tenancy`",
        "only (`kms:CreateKey` only with that tag), aliases under `alias/tenancy/`; Secrets Manager on",
        f"`tenancy/*`; {_codes(aws_rules.PASS_ROLE)} on the stack's node roles, edge controller roles and",
        "tenant roles; RDS, EC2, EKS actions and the reads on `*`.",
    ]
    return "\n".join(lines) + "\n"


def gcp_deploy() -> str:
    """The roles per resource type, the roles beyond them, the APIs, and what is conditioned."""
    lines = ["| Resource types | Role | API |", "| --- | --- | --- |"]
    for prefix, rule in gcp_rules.prefix_rules().items():
        lines.append(f"| `{prefix}*` | `{rule.role}` | `{rule.api}` |")
    lines += ["", "Conditions and scopes:", ""]
    for role, (title, why) in sorted(gcp_rules.CONDITIONED.items()):
        lines.append(f"- `{role}`: {why} (condition `{title}`).")
    for role, why in sorted(gcp_rules.ON_ACCOUNTS.items()):
        lines.append(f"- `{role}`: {why}")
    lines += ["", f"APIs to enable: {_codes(gcp_rules.required_apis())}."]
    return "\n".join(lines) + "\n"
