"""Role-chaining trust on AWS, as data with its sources: what a role's trust policy must allow for
a caller who already holds a role session.

On EKS Pod Identity, the External Secrets controller's own credentials come from a session that
EKS tags (`eks-cluster-name`, `kubernetes-namespace`, `kubernetes-service-account`, ...), and EKS
marks those tags transitive. When the controller then assumes a tenant role for a SecretStore
(`spec.provider.aws.role`), STS carries the transitive tags into the new session: that is a tagged
AssumeRole, which the target role's trust policy must allow with `sts:TagSession` as well as
`sts:AssumeRole`, or STS denies the call and every SecretStore stays unready.

Sources:
- EKS Pod Identity session tags, transitive:
  https://docs.aws.amazon.com/eks/latest/userguide/pod-id-abac.html
- Chaining roles with session tags (transitive tags are passed on, and the target role must allow
  `sts:TagSession`): https://docs.aws.amazon.com/IAM/latest/UserGuide/id_session-tags.html#id_session-tags_role-chaining
- IRSA: ESO authenticates with the ServiceAccount token (`auth.jwt`), one
  `AssumeRoleWithWebIdentity`, no chaining:
  https://external-secrets.io/latest/provider/aws-secrets-manager/#eks-service-account-credentials
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChainingRule:
    """The actions a trusted caller's statement needs, per way the caller got its own credentials."""

    caller_identity: str
    actions: tuple[str, ...]
    source: str


# The ESO controller's own identity mode (tenancy:aws.identityMode) -> what tenant and shared-secret
# roles must allow it when it assumes them.
CONTROLLER_CHAINING: dict[str, ChainingRule] = {
    "podIdentity": ChainingRule(
        caller_identity="EKS Pod Identity session (transitive session tags)",
        actions=("sts:AssumeRole", "sts:TagSession"),
        source="https://docs.aws.amazon.com/IAM/latest/UserGuide/id_session-tags.html#id_session-tags_role-chaining",
    ),
}


def chained_actions(identity_mode: str) -> list[str]:
    """The actions the controller's trust statement must allow in `identity_mode` (none: no chaining)."""
    rule = CONTROLLER_CHAINING.get(identity_mode)
    return list(rule.actions) if rule is not None else []
