"""Which secrets, keys and databases each cloud identity of a rendered plan can reach, and from
which Kubernetes namespaces it can be used: computed from every IAM grant the plan registers.

GCP: workload identity bindings (who may act as a Google service account), Secret Manager IAM
members, KMS CryptoKey and KeyRing IAM members, project IAM members. AWS: role trust policies
(Pod Identity associations with the session tags EKS sets, IRSA tokens, the External Secrets
controller for the SecretStores that name a role), role policies and KMS key policies, evaluated
by tests/clouds/iam_policy.py. A database is reached through its credentials secret (the
platform grants no database IAM role on either cloud, which `unmodelled` checks) or, on AWS,
through `rds-db:connect`. Any IAM resource type this module does not model fails the test
instead of being skipped (`unmodelled`).

The cloud-computed values (ARNs, emails, ids) follow the mocks of tools/harness.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from components.clouds.aws.trust_rules import chained_actions
from components.clouds.gcp.edge_roles import DNS_RECORDS_PERMISSIONS, DNS_RECORDS_ROLE_ID
from tests.clouds.iam_policy import Request, allowed
from tests.support import objects_of_kind
from tools.plan.harness import MOCK_ACCOUNT, MOCK_PROJECT, ProgramRun, RecordedResource

SECRET_READERS = {"roles/secretmanager.secretAccessor", "roles/secretmanager.admin", "roles/owner", "roles/editor"}
KEY_USERS = {"roles/cloudkms.cryptoKeyEncrypterDecrypter", "roles/cloudkms.cryptoKeyDecrypter", "roles/owner"}
_WORKLOAD_MEMBER = re.compile(r"serviceAccount:[^\[]+\.svc\.id\.goog\[([^/\]]+)/([^\]]+)\]")
# IAM resource types the reachability below reads; any other IAM-ish type fails `unmodelled`.
MODELLED = {
    "gcp:serviceaccount/account:Account",
    "gcp:serviceaccount/iAMBinding:IAMBinding",
    "gcp:secretmanager/secretIamMember:SecretIamMember",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember",
    "gcp:kms/keyRingIAMMember:KeyRingIAMMember",
    "aws:iam/role:Role",
    "aws:iam/rolePolicy:RolePolicy",
    # The edge's record-set role (cert-manager, external-dns) on the stack's zones: a DNS grant reaches
    # no secret, key or database, so it adds nothing to any identity's reach (checked in _gcp_reach).
    "gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember",
    # A read of that custom role (components/clouds/gcp/edge_roles.py): it grants nothing itself.
    "gcp:projects/iAMCustomRole:IAMCustomRole",
    # external-dns's zone list on the project (roles/dns.reader: zones and records, read only);
    # no secret, key or database (checked in _gcp_reach).
    "gcp:projects/iAMMember:IAMMember",
}
# The owner of a secret a grant names but the plan does not register.
OUTSIDE = "outside-the-plan"
_IAM_TYPE = re.compile(r"(IAM|Iam|iAM)|^aws:iam/|^aws:kms/grant|^gcp:projects/iAM")


@dataclass(frozen=True)
class Asset:
    """A secret, key or database, with the tenant and environment its cloud labels name."""

    kind: str
    name: str
    tenant: str
    environment: str


@dataclass
class Identity:
    """One cloud principal: the namespaces it can be used from and what it reaches."""

    principal: str
    namespaces: set[str] = field(default_factory=set)
    reaches: set[Asset] = field(default_factory=set)


def unmodelled(run: ProgramRun) -> set[str]:
    """IAM resource types in the plan that this module would silently ignore."""
    return {r.type for r in run.resources if _IAM_TYPE.search(r.type) and r.type not in MODELLED}


def _asset(kind: str, name: str, labels: dict[str, str] | None) -> Asset:
    labels = labels or {}
    return Asset(kind, name, labels.get("tenant", "platform"), labels.get("environment", "-"))


def _credential_database(asset: Asset, marker: str) -> Asset | None:
    return Asset("database", asset.name, asset.tenant, asset.environment) if marker in asset.name else None


# --- GCP -------------------------------------------------------------------------------------


def _members(resource: RecordedResource) -> list[str]:
    return list(resource.inputs.get("members", [])) or [resource.inputs["member"]]


def gcp_identities(run: ProgramRun) -> dict[str, Identity]:
    """Every Google service account of the plan, keyed by its `serviceAccount:<email>` member."""
    identities: dict[str, Identity] = {}
    names: dict[str, str] = {}
    for account in run.of_type("gcp:serviceaccount/account:Account"):
        email = f"{account.inputs['accountId']}@{MOCK_PROJECT}.iam.gserviceaccount.com"
        identities[f"serviceAccount:{email}"] = Identity(email)
        names[f"projects/{MOCK_PROJECT}/serviceAccounts/{email}"] = f"serviceAccount:{email}"
    for binding in run.of_type("gcp:serviceaccount/iAMBinding:IAMBinding"):
        assert binding.inputs["role"] == "roles/iam.workloadIdentityUser", binding.inputs
        identity = identities[names[binding.inputs["serviceAccountId"]]]
        for member in _members(binding):
            found = _WORKLOAD_MEMBER.fullmatch(member)
            assert found is not None, member
            identity.namespaces.add(found.group(1))
    _gcp_reach(run, identities)
    return identities


def _gcp_reach(run: ProgramRun, identities: dict[str, Identity]) -> None:
    secrets = {
        f"projects/{MOCK_PROJECT}/secrets/{s.inputs['secretId']}": _asset(
            "secret", s.inputs["secretId"], s.inputs.get("labels")
        )
        for s in run.of_type("gcp:secretmanager/secret:Secret")
        # Reads of secrets kept out of band (shared secrets) are not the plan's: OUTSIDE below.
        if not s.read
    }
    keys = {
        f"{k.inputs['keyRing']}/cryptoKeys/{k.inputs['name']}": _asset("key", k.inputs["name"], k.inputs.get("labels"))
        for k in run.of_type("gcp:kms/cryptoKey:CryptoKey")
    }
    grants: list[tuple[str, Iterable[Asset]]] = []
    for grant in run.of_type("gcp:secretmanager/secretIamMember:SecretIamMember"):
        if grant.inputs["role"] in SECRET_READERS:
            # A secret this plan does not register (a shared platform secret kept out of band).
            secret = secrets.get(grant.inputs["secretId"]) or Asset("secret", grant.inputs["secretId"], OUTSIDE, "-")
            database = _credential_database(secret, "_db_")
            grants.append((grant.inputs["member"], [secret] + ([database] if database else [])))
    for grant in run.of_type("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"):
        if grant.inputs["role"] in KEY_USERS:
            grants.append((grant.inputs["member"], [keys[grant.inputs["cryptoKeyId"]]]))
    for grant in run.of_type("gcp:kms/keyRingIAMMember:KeyRingIAMMember"):
        if grant.inputs["role"] in KEY_USERS:
            ring = grant.inputs["keyRingId"]
            grants.append((grant.inputs["member"], [a for k, a in keys.items() if k.startswith(f"{ring}/")]))
    for grant in run.of_type("gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember"):
        # The custom role holds Cloud DNS permissions only (edge_roles.py): no secret, key or database.
        assert grant.inputs["role"].endswith(f"/roles/{DNS_RECORDS_ROLE_ID}"), grant.inputs
        assert all(p.startswith("dns.") for p in DNS_RECORDS_PERMISSIONS)
    for grant in run.of_type("gcp:projects/iAMMember:IAMMember"):
        assert grant.inputs["role"] == "roles/dns.reader", grant.inputs
    for member, assets in grants:
        if member in identities:
            identities[member].reaches.update(assets)


def gcp_store_identity(run: ProgramRun, namespace: str) -> Identity | None:
    """The identity the namespace's SecretStore reads with: the GSA its account names, if that
    GSA's workload identity binding admits the account (GKE refuses the token otherwise)."""
    [store] = objects_of_kind(run, "SecretStore", namespace)
    auth = store["spec"]["provider"]["gcpsm"]["auth"]["workloadIdentity"]
    account_name = auth["serviceAccountRef"]["name"]
    [account] = [a for a in objects_of_kind(run, "ServiceAccount", namespace) if a["metadata"]["name"] == account_name]
    email = account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"]
    identity = gcp_identities(run)[f"serviceAccount:{email}"]
    return identity if namespace in identity.namespaces else None


# --- AWS -------------------------------------------------------------------------------------


def _role_arn(name: str) -> str:
    return f"arn:aws:iam::{MOCK_ACCOUNT}:role/{name}"


def _trusted(trust: dict[str, Any], arn: str, principal: tuple[str, str], context: dict[str, str]) -> bool:
    action = "sts:AssumeRoleWithWebIdentity" if principal[0] == "Federated" else "sts:AssumeRole"
    return allowed([trust], Request(action, arn, principal, context))


def _chained(trust: dict[str, Any], arn: str, controller: str) -> bool:
    """The controller (on Pod Identity, whose session tags are transitive) assumes `arn`: STS
    authorizes both the AssumeRole and the TagSession of the carried tags
    (components/clouds/aws/trust_rules.py cites the documentation)."""
    principal = ("AWS", controller)
    return all(allowed([trust], Request(action, arn, principal, {})) for action in chained_actions("podIdentity"))


def _pod_identity_users(run: ProgramRun, trusts: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    users: dict[str, set[str]] = {arn: set() for arn in trusts}
    for association in run.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation"):
        inputs = association.inputs
        tags = {
            "aws:RequestTag/eks-cluster-name": inputs["clusterName"],
            "aws:RequestTag/kubernetes-namespace": inputs["namespace"],
            "aws:RequestTag/kubernetes-service-account": inputs["serviceAccount"],
        }
        arn = inputs["roleArn"]
        if arn not in trusts:
            # A role the platform team keeps outside the plan (the edge's controllers): it is bound
            # to a platform namespace only, never a tenant's (tests/edge/test_edge_plan.py).
            assert not inputs["namespace"].startswith("tenant-"), inputs
            continue
        if _trusted(trusts[arn], arn, ("Service", "pods.eks.amazonaws.com"), tags):
            users[arn].add(inputs["namespace"])
    return users


def _irsa_users(run: ProgramRun, trusts: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    """Any ServiceAccount of any namespace may carry any role annotation (tenants write them): the
    trust alone decides. Tried for every namespace with a few account names, the platform's included."""
    users: dict[str, set[str]] = {arn: set() for arn in trusts}
    namespaces = [n["metadata"]["name"] for n in objects_of_kind(run, "Namespace")]
    for arn, trust in trusts.items():
        for statement in trust["Statement"]:
            provider = statement.get("Principal", {}).get("Federated")
            if provider is None:
                continue
            issuer = provider.split("oidc-provider/", 1)[1]
            for namespace in namespaces:
                for account in ("workload", "default", "deployer", "attacker"):
                    context = {
                        f"{issuer}:sub": f"system:serviceaccount:{namespace}:{account}",
                        f"{issuer}:aud": "sts.amazonaws.com",
                    }
                    if _trusted(trust, arn, ("Federated", provider), context):
                        users[arn].add(namespace)
    return users


def _store_users(run: ProgramRun, trusts: dict[str, dict[str, Any]], controller: str | None) -> dict[str, set[str]]:
    users: dict[str, set[str]] = {arn: set() for arn in trusts}
    for store in objects_of_kind(run, "SecretStore"):
        role = store["spec"]["provider"].get("aws", {}).get("role")
        if role is not None and controller is not None and _chained(trusts[role], role, controller):
            users[role].add(store["metadata"]["namespace"])
    return users


def aws_identities(run: ProgramRun, controller: str | None) -> dict[str, Identity]:
    """Every IAM role of the plan, keyed by ARN; `controller`: the External Secrets controller's role."""
    trusts = {
        _role_arn(r.name): json.loads(r.inputs["assumeRolePolicy"])
        for r in run.of_type("aws:iam/role:Role")
        if not r.read
    }
    identities = {arn: Identity(arn) for arn in trusts}
    for users in (_pod_identity_users(run, trusts), _irsa_users(run, trusts), _store_users(run, trusts, controller)):
        for arn, namespaces in users.items():
            identities[arn].namespaces.update(namespaces)
    policies: dict[str, list[dict[str, Any]]] = {arn: [] for arn in trusts}
    for policy in run.of_type("aws:iam/rolePolicy:RolePolicy"):
        policies[_role_arn(policy.inputs["role"])].append(json.loads(policy.inputs["policy"]))
    _aws_reach(run, identities, policies)
    return identities


_Keys = dict[str, tuple[Asset, str | None]]


def _may(policies: list[dict[str, Any]], keys: _Keys, arn: str, action: str, resource: str, key: str | None) -> bool:
    """The role's policies allow it, and for a key the key policy too (none: the default key
    policy, which lets IAM policies decide)."""
    if not allowed(policies, Request(action, resource)):
        return False
    if key is None:
        return True
    key_policy = keys[key][1]
    return key_policy is None or allowed([json.loads(key_policy)], Request(action, key, ("AWS", arn)))


def _probes(run: ProgramRun, region: str) -> dict[str, Asset]:
    """A secret name in every tenant environment's path, whether or not it has secrets yet: a
    policy reaching another environment's path is caught even where that path is still empty."""
    probes: dict[str, Asset] = {}
    for namespace in objects_of_kind(run, "Namespace"):
        labels = namespace["metadata"].get("labels", {})
        if "tenancy.io/tenant" in labels:
            tenant, environment = labels["tenancy.io/tenant"], labels["tenancy.io/environment"]
            name = f"tenancy/{tenant}/{environment}/probe"
            probes[region.format("secretsmanager", f"secret:{name}-AbCdEf")] = Asset("probe", name, tenant, environment)
    return probes


def _aws_reach(run: ProgramRun, identities: dict[str, Identity], policies: dict[str, list[dict[str, Any]]]) -> None:
    region = f"arn:aws:{{}}:eu-west-1:{MOCK_ACCOUNT}:{{}}"
    keys: _Keys = {
        region.format("kms", f"key/{k.name}"): (_asset("key", k.name, k.inputs.get("tags")), k.inputs.get("policy"))
        for k in run.of_type("aws:kms/key:Key")
    }
    probes = _probes(run, region)
    for arn, identity in identities.items():
        own = policies[arn]
        for probe_arn, probe in probes.items():
            if _may(own, keys, arn, "secretsmanager:GetSecretValue", probe_arn, None):
                identity.reaches.add(probe)
        for key, (asset, _) in keys.items():
            if _may(own, keys, arn, "kms:Decrypt", key, key):
                identity.reaches.add(asset)
        for secret in run.of_type("aws:secretsmanager/secret:Secret"):
            name = secret.inputs["name"]
            secret_arn = region.format("secretsmanager", f"secret:{name}-AbCdEf")
            # Secrets Manager decrypts with the caller's own kms:Decrypt on the secret's key.
            secret_key = secret.inputs.get("kmsKeyId")
            readable = _may(own, keys, arn, "secretsmanager:GetSecretValue", secret_arn, None) and (
                secret_key is None or _may(own, keys, arn, "kms:Decrypt", secret_key, secret_key)
            )
            if readable:
                asset = _asset("secret", name, secret.inputs.get("tags"))
                database = _credential_database(asset, "/db/")
                identity.reaches.update([asset] + ([database] if database else []))
        if _may(own, keys, arn, "rds-db:connect", region.format("rds-db", "dbuser:*/*"), None):
            identity.reaches.add(Asset("database", "rds-db:connect (IAM authentication)", "*", "*"))


def aws_store_identity(run: ProgramRun, namespace: str, controller: str | None) -> Identity | None:
    """The role the namespace's SecretStore reads with, if its trust admits that use."""
    [store] = objects_of_kind(run, "SecretStore", namespace)
    identities = aws_identities(run, controller)
    provider = store["spec"]["provider"]["aws"]
    if "role" in provider:
        identity = identities[provider["role"]]
    else:
        account_name = provider["auth"]["jwt"]["serviceAccountRef"]["name"]
        [account] = [
            a for a in objects_of_kind(run, "ServiceAccount", namespace) if a["metadata"]["name"] == account_name
        ]
        identity = identities[account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"]]
    return identity if namespace in identity.namespaces else None
