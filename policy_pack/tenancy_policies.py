"""The tenancy policy pack's validators: invariants that protect tenants, checked before `pulumi up`.

`pulumi preview --policy-pack policy_pack` runs them against what the program is about to register, so
a change that would weaken a tenant's isolation fails the preview instead of reaching the cluster.
They are plain functions over pulumi_policy's argument objects so the tests call them directly,
and `policy_pack/offline.py` runs the same functions over the offline plan on pull requests that have
no credentials (forks).

The pack reads only what the engine hands it, never the program's modules: it must judge the
program from the outside, the way the API server would see the result. The label keys below are
therefore repeated here; a test keeps them equal to `components/model/core/labels.py`.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceRemediation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Secret,
    StackValidationArgs,
    StackValidationPolicy,
)

# Kept equal to components/model/core/labels.py by tests/policy_pack/test_policy_pack.py.
TENANT_KEY = "tenancy.io/tenant"
# Set by the API server on every namespace; selectors on it cannot be forged.
METADATA_NAME = "kubernetes.io/metadata.name"
PSA_ENFORCE_KEY = "pod-security.kubernetes.io/enforce"
# How the offline plan (tools/plan/harness.py) writes a redacted secret; the engine passes Secret objects
# to remediations instead.
SECRET_PLACEHOLDER = "[secret]"
CLUSTER_ADMIN = "cluster-admin"
DEFAULT_PROTECTED_STACKS = ["prod", "prod-*"]

NAMESPACE = "kubernetes:core/v1:Namespace"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
LIMIT_RANGE = "kubernetes:core/v1:LimitRange"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
CLUSTER_NETWORK_POLICY = "kubernetes:policy.networking.k8s.io/v1alpha2:ClusterNetworkPolicy"
SECRET = "kubernetes:core/v1:Secret"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"

# Cloud resources that hold tenant data: deleting one loses data or makes encrypted data unreadable.
DATA_BEARING_TYPES = frozenset(
    {
        "gcp:sql/databaseInstance:DatabaseInstance",
        "gcp:sql/database:Database",
        "gcp:kms/cryptoKey:CryptoKey",
        "gcp:secretmanager/secret:Secret",
        "aws:rds/instance:Instance",
        "aws:rds/cluster:Cluster",
        "aws:kms/key:Key",
        "aws:secretsmanager/secret:Secret",
        # A tenant's database on a shared RDS instance (pulumi-postgresql / pulumi-mysql).
        "postgresql:index/database:Database",
        "mysql:index/database:Database",
    }
)
# Operator custom resources that hold tenant data on local clusters, by API group and kind (any version).
DATA_BEARING_KINDS = frozenset(
    {("postgresql.cnpg.io", "Cluster"), ("k8s.mariadb.com", "MariaDB"), ("k8s.mariadb.com", "Database")}
)


def stack_of(urn: str) -> str:
    """The stack a resource belongs to: URNs read `urn:pulumi:<stack>::<project>::...`."""
    return urn.split("::", 1)[0].split(":")[-1]


def kubernetes_group_kind(type_token: str) -> tuple[str, str] | None:
    """(API group, kind) of a Kubernetes type token (`kubernetes:apps/v1:Deployment`), else None."""
    parts = type_token.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes" or "/" not in parts[1]:
        return None
    group = parts[1].rsplit("/", 1)[0]
    return ("" if group == "core" else group), parts[2]


def _metadata(props: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = props.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _labels(props: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = _metadata(props).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _where(props: Mapping[str, Any], name: str) -> str:
    """`namespace/name` of a namespaced object (falling back to the Pulumi name), for messages."""
    metadata = _metadata(props)
    object_name = metadata.get("name") or name
    return f"{metadata['namespace']}/{object_name}" if metadata.get("namespace") else str(object_name)


@dataclass(frozen=True)
class _Object:
    """A stack resource reduced to what these checks read."""

    type: str
    urn: str
    name: str
    props: Mapping[str, Any]

    @property
    def namespace(self) -> str | None:
        value = _metadata(self.props).get("namespace")
        return str(value) if value else None


def _objects(args: StackValidationArgs, *types: str) -> list[_Object]:
    return [_Object(r.resource_type, r.urn, r.name, r.props) for r in args.resources if r.resource_type in types]


def tenant_namespaces(args: StackValidationArgs) -> dict[str, tuple[str, str]]:
    """Tenant namespaces in the stack: name -> (tenant, URN), recognised by the tenant label."""
    namespaces: dict[str, tuple[str, str]] = {}
    for namespace in _objects(args, NAMESPACE):
        tenant = _labels(namespace.props).get(TENANT_KEY)
        name = _metadata(namespace.props).get("name")
        if tenant and name:
            namespaces[str(name)] = (str(tenant), namespace.urn)
    return namespaces


def _selects_every_pod(selector: Any) -> bool:
    return isinstance(selector, Mapping) and not selector.get("matchLabels") and not selector.get("matchExpressions")


def _is_default_deny(policy: _Object) -> bool:
    """Selects every pod and isolates both directions; allow rules on top are fine (they are additive)."""
    spec = policy.props.get("spec")
    if not isinstance(spec, Mapping) or not _selects_every_pod(spec.get("podSelector")):
        return False
    return {"Ingress", "Egress"} <= set(spec.get("policyTypes") or [])


def _cluster_isolated(policy: _Object) -> str | None:
    """The namespace an Admin-tier ClusterNetworkPolicy isolates (`tenancy:network.mode:
    clusterNetworkPolicy`): its subject is that one namespace by name, and it denies every other
    namespace in both directions before any NetworkPolicy is consulted."""
    spec = policy.props.get("spec")
    if not isinstance(spec, Mapping) or spec.get("tier") != "Admin":
        return None
    subject = (spec.get("subject") or {}).get("namespaces") or {}
    namespace = (subject.get("matchLabels") or {}).get(METADATA_NAME)
    others = {"namespaces": {"matchExpressions": [{"key": METADATA_NAME, "operator": "NotIn", "values": [namespace]}]}}

    def denies(rules: Any, peers: str) -> bool:
        return any(r.get("action") == "Deny" and others in (r.get(peers) or []) for r in rules or [])

    isolated = namespace and denies(spec.get("ingress"), "from") and denies(spec.get("egress"), "to")
    return str(namespace) if isolated else None


def validate_namespace_guardrails(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """Every tenant namespace has a default-deny NetworkPolicy, a ResourceQuota, a LimitRange and
    enforces Pod Security `restricted`: without any one of them a tenant can starve or reach others."""
    namespaces = tenant_namespaces(args)
    in_namespace: dict[str, set[str]] = defaultdict(set)
    for obj in _objects(args, RESOURCE_QUOTA, LIMIT_RANGE):
        if obj.namespace:
            in_namespace[obj.namespace].add(obj.type)
    for policy in _objects(args, NETWORK_POLICY):
        if policy.namespace and _is_default_deny(policy):
            in_namespace[policy.namespace].add(NETWORK_POLICY)
    for policy in _objects(args, CLUSTER_NETWORK_POLICY):
        isolated = _cluster_isolated(policy)
        if isolated:
            in_namespace[isolated].add(NETWORK_POLICY)
    labels_by_namespace = {str(_metadata(n.props).get("name")): _labels(n.props) for n in _objects(args, NAMESPACE)}
    for name, (tenant, urn) in sorted(namespaces.items()):
        present = in_namespace[name]
        where = f"tenant namespace {name} (tenant {tenant})"
        if NETWORK_POLICY not in present:
            report_violation(
                f"{where} has no default-deny NetworkPolicy (podSelector {{}} with policyTypes Ingress and Egress)"
                " nor Admin-tier ClusterNetworkPolicy denying other namespaces",
                urn,
            )
        if RESOURCE_QUOTA not in present:
            report_violation(f"{where} has no ResourceQuota", urn)
        if LIMIT_RANGE not in present:
            report_violation(f"{where} has no LimitRange", urn)
        enforce = labels_by_namespace.get(name, {}).get(PSA_ENFORCE_KEY)
        if enforce != "restricted":
            report_violation(f"{where} must enforce Pod Security 'restricted' ({PSA_ENFORCE_KEY} is {enforce!r})", urn)


def _admin_roles(args: StackValidationArgs) -> set[str]:
    """cluster-admin and every ClusterRole of the stack that grants all verbs on all resources."""
    roles = {CLUSTER_ADMIN}
    for role in _objects(args, CLUSTER_ROLE):
        for rule in role.props.get("rules") or []:
            if "*" in (rule.get("verbs") or []) and "*" in (rule.get("resources") or []):
                roles.add(str(_metadata(role.props).get("name") or role.name))
    return roles


def _subject_text(subject: Mapping[str, Any]) -> str:
    namespace = f"{subject['namespace']}/" if subject.get("namespace") else ""
    return f"{subject.get('kind')} {namespace}{subject.get('name')}"


def validate_rbac_boundaries(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """No binding gives a tenant cluster-admin, and none reaches into another tenant's namespace.

    Tenant subjects are the ServiceAccounts of tenant namespaces and the groups and users the
    stack binds inside tenant namespaces; a ClusterRoleBinding grants in every namespace at once.
    """
    namespaces = tenant_namespaces(args)
    admin_roles = _admin_roles(args)
    bindings = _objects(args, ROLE_BINDING)
    # Who acts for which tenant: groups and users bound inside the tenant's namespaces.
    people: dict[tuple[str, str], set[str]] = defaultdict(set)
    for binding in bindings:
        owner = namespaces.get(binding.namespace or "")
        for subject in binding.props.get("subjects") or []:
            if owner and subject.get("kind") in {"Group", "User"}:
                people[(str(subject.get("kind")), str(subject.get("name")))].add(owner[0])

    def tenants_of(subject: Mapping[str, Any], default_namespace: str | None) -> set[str]:
        if subject.get("kind") == "ServiceAccount":
            owner = namespaces.get(str(subject.get("namespace") or default_namespace or ""))
            return {owner[0]} if owner else set()
        return people.get((str(subject.get("kind")), str(subject.get("name"))), set())

    for binding in bindings:
        owner = namespaces.get(binding.namespace or "")
        if owner is None:
            continue
        tenant = owner[0]
        where = f"RoleBinding {_where(binding.props, binding.name)}"
        role_ref = binding.props.get("roleRef") or {}
        if role_ref.get("kind") == "ClusterRole" and role_ref.get("name") in admin_roles:
            report_violation(
                f"{where} gives tenant {tenant} cluster-admin (ClusterRole {role_ref.get('name')})", binding.urn
            )
        labelled = _labels(binding.props).get(TENANT_KEY)
        if labelled and labelled != tenant:
            report_violation(
                f"{where} is labelled for tenant {labelled} but sits in tenant {tenant}'s namespace", binding.urn
            )
        for subject in binding.props.get("subjects") or []:
            if subject.get("kind") != "ServiceAccount":
                continue
            others = tenants_of(subject, binding.namespace) - {tenant}
            if others:
                report_violation(
                    f"{where} binds {_subject_text(subject)} of tenant {', '.join(sorted(others))} "
                    f"into tenant {tenant}'s namespace",
                    binding.urn,
                )
    for binding in _objects(args, CLUSTER_ROLE_BINDING):
        role = (binding.props.get("roleRef") or {}).get("name")
        for subject in binding.props.get("subjects") or []:
            owners = tenants_of(subject, None)
            if not owners:
                continue
            where = f"ClusterRoleBinding {_where(binding.props, binding.name)}"
            who = f"{_subject_text(subject)} of tenant {', '.join(sorted(owners))}"
            if role in admin_roles:
                report_violation(f"{where} gives {who} cluster-admin (ClusterRole {role})", binding.urn)
            elif subject.get("kind") == "ServiceAccount":
                report_violation(
                    f"{where} grants {who} ClusterRole {role} in every namespace, including other tenants'",
                    binding.urn,
                )


def is_data_bearing(type_token: str) -> bool:
    group_kind = kubernetes_group_kind(type_token)
    return type_token in DATA_BEARING_TYPES or (group_kind is not None and group_kind in DATA_BEARING_KINDS)


def protected_stack(stack: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(stack, pattern) for pattern in patterns)


def validate_data_protection(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    """In production stacks, data-bearing resources are protected (Pulumi `protect`) and keep the
    cloud's own deletion protection, so neither a bad update nor a deleted tenant file loses data."""
    if not is_data_bearing(args.resource_type):
        return
    stack = stack_of(args.urn)
    patterns = args.get_config().get("protectedStacks", DEFAULT_PROTECTED_STACKS)
    if not protected_stack(stack, patterns):
        return
    what = f"{args.resource_type} {args.name} holds tenant data in stack {stack}"
    if not args.opts.protect:
        report_violation(f"{what} but is not protected: keep tenancy:protection.protectData true", args.urn)
    props = args.props
    if args.resource_type == "gcp:sql/databaseInstance:DatabaseInstance" and props.get("deletionProtection") is False:
        report_violation(f"{what} but turns off Cloud SQL deletion protection (deletionProtection: false)", args.urn)
    if args.resource_type in {"aws:rds/instance:Instance", "aws:rds/cluster:Cluster"}:
        if props.get("deletionProtection") is not True:
            report_violation(f"{what} but has no RDS deletion protection (deletionProtection must be true)", args.urn)
        if props.get("skipFinalSnapshot") is True:
            report_violation(f"{what} but skips the final snapshot (skipFinalSnapshot: true)", args.urn)


def _unwrap(value: Any) -> Any:
    """The raw value behind pulumi_policy's proxies, where Secret markers survive (remediations)."""
    if isinstance(value, dict | list | str) or value is None:
        return value
    try:
        return value["__target"]
    except (KeyError, TypeError, IndexError):
        return value


def is_secret(value: Any) -> bool:
    return isinstance(value, Secret) or value == SECRET_PLACEHOLDER


def plain_text_keys(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """Keys of `data` and `stringData` whose values are not secrets, by field (values never read)."""
    raw = _unwrap(props)
    found: dict[str, list[str]] = {}
    for field in ("data", "stringData"):
        value = _unwrap(raw.get(field)) if isinstance(raw, Mapping) else None
        if value is None or is_secret(value):
            continue
        if isinstance(value, Mapping):
            keys = sorted(str(key) for key, item in value.items() if not is_secret(item))
        else:
            keys = ["*"]
        if keys:
            found[field] = keys
    return found


def validate_secret_values(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    """A Kubernetes Secret's data and stringData values must be Pulumi secrets (encrypted in state).

    Needs to see secret markers: the offline plan keeps them (`[secret]`), but the engine's Analyze
    call hands policies plain values (pulumi/pulumi-policy#241), so in `pulumi preview` the same
    rule runs as `remediate_secret_values` instead.
    """
    if args.resource_type != SECRET:
        return
    for field, keys in plain_text_keys(args.props).items():
        report_violation(
            f"Secret {_where(args.props, args.name)} has plain-text values in {field} ({', '.join(keys)}): "
            "pass them as Pulumi secrets (pulumi.Output.secret, pulumi_random results)",
            args.urn,
        )


def remediate_secret_values(args: ResourceValidationArgs) -> Mapping[str, Any] | None:
    """In the engine: mark every plain-text data/stringData value of a Kubernetes Secret as secret,
    so it is encrypted in state. Remediations are the one policy hook that sees secret markers."""
    if args.resource_type != SECRET:
        return None
    found = plain_text_keys(args.props)
    if not found:
        return None
    props = dict(_unwrap(args.props))
    for field in found:
        value = _unwrap(props[field])
        if isinstance(value, Mapping):
            props[field] = {key: item if is_secret(item) else Secret(item) for key, item in value.items()}
        else:
            props[field] = Secret(value)
    return props


PROTECTED_STACKS_SCHEMA = PolicyConfigSchema(
    properties={
        "protectedStacks": {
            "type": "array",
            "items": {"type": "string"},
            "default": DEFAULT_PROTECTED_STACKS,
            "description": "stack name patterns (fnmatch) whose data-bearing resources must be protected",
        }
    }
)

POLICIES: list[Policy] = [
    StackValidationPolicy(
        name="tenant-namespace-guardrails",
        description="Every tenant namespace has default-deny networking, a quota, a limit range and PSA restricted.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=validate_namespace_guardrails,
    ),
    StackValidationPolicy(
        name="tenant-rbac-boundaries",
        description="No binding gives a tenant cluster-admin or reaches into another tenant's namespace.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=validate_rbac_boundaries,
    ),
    ResourceValidationPolicy(
        name="tenant-data-protected-in-prod",
        description="Databases, keys and secret stores of tenants are protected in production stacks.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=validate_data_protection,
        config_schema=PROTECTED_STACKS_SCHEMA,
    ),
    ResourceValidationPolicy(
        name="kubernetes-secrets-not-plaintext",
        description="Kubernetes Secret values are Pulumi secrets, never plain text in state.",
        enforcement_level=EnforcementLevel.REMEDIATE,
        # The runtime accepts a plain mapping (or None); the SDK's annotation only admits awaitables.
        remediate=cast(ResourceRemediation, remediate_secret_values),
    ),
]
