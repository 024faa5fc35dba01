"""What the Pulumi engine would refuse or get wrong on a real `up`, checked on an offline plan.

    tenancy engine-rules PLAN_DIR --stack STACK [--platform-plan PLATFORM_PLAN_DIR]

The plan records every resource's explicit provider and the URNs it waits for
(`resources.json`, tools/plan/harness.py). These checks read only those records, so they run on any
written plan and on mutated copies of one (tests/engine/test_mutations.py):

- `unique_urns`: no URN is registered twice.
- `explicit_providers`: where the stack disables default providers, every custom resource and
  every read (`.get`) names its provider.
- `grants_before_use`: a resource encrypted with a customer key waits for the grant that lets
  its service use the key.
- `crds_after_installs`: a custom resource waits for the release that installs its CRD, or its
  API group is a documented prerequisite of the cluster.
- `namespaces_before_objects`: a namespaced object waits for its namespace, where the plan has it.
- `deleted_with_namespaces`: what is deleted with a Namespace (its own `deletedWith`, or one
  inherited from a parent) is an object inside that namespace.
- `protected_namespaces`: nothing is deleted with a protected Namespace (one holding data), and
  every object inside it waits for its isolation (quota, limits, isolation policy).
- `kept_dependencies`: a retained resource uses nothing that is deleted when its tenant leaves
  the state.
- `kept_unchanged` (two plans): a lifecycle transition leaves the inputs of what it keeps alone.

"Waits for" is the engine's order: a resource is registered after its dependencies (`dependsOn`
and the resources whose outputs feed its inputs), its parent and its provider, transitively.
Each check returns `Violation`s naming the resource and what it lacks; an empty list passes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Record = Mapping[str, Any]

PROVIDER_PREFIX = "pulumi:providers:"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
# Deleting these touches nothing outside Pulumi's state: a random value is no cloud object.
STATE_ONLY_PACKAGES = frozenset({"random"})


@dataclass(frozen=True)
class Violation:
    """One broken rule: which rule, which resource, and what to change."""

    rule: str
    urn: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {label(self.urn)}: {self.message}"


def label(urn: str) -> str:
    """`name` (type) of a URN, the way a reviewer finds the resource in a plan (an invoke's token as is)."""
    if "::" not in urn:
        return urn
    qualified_type, _, name = urn.rpartition("::")
    return f"{name} ({qualified_type.rpartition('$')[2].rpartition('::')[2]})"


def package_of(type_token: str) -> str:
    """The Pulumi package of a type token (`gcp` of `gcp:sql/databaseInstance:DatabaseInstance`)."""
    return type_token.split(":", 1)[0]


@dataclass
class PlanGraph:
    """The records of one plan, indexed, with the engine's order as a transitive closure."""

    records: Sequence[Record]
    by_urn: dict[str, Record] = field(init=False)
    _closure: dict[str, frozenset[str]] = field(init=False, default_factory=dict)
    _retained: dict[str, bool] = field(init=False, default_factory=dict)
    _protected: dict[str, bool] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.by_urn = {record["urn"]: record for record in self.records}

    def direct(self, urn: str) -> list[str]:
        """What the engine registers this resource after: dependencies, parent, provider."""
        record = self.by_urn.get(urn)
        if record is None:
            return []
        edges = list(record.get("dependencies") or [])
        if record.get("parent"):
            edges.append(record["parent"])
        if record.get("provider"):
            edges.append(record["provider"])
        return edges

    def waits_for(self, urn: str) -> frozenset[str]:
        """Every URN the resource waits for, transitively (iterative; plans have thousands)."""
        if urn in self._closure:
            return self._closure[urn]
        # Post-order walk: a resource's closure is its edges plus their closures.
        stack: list[tuple[str, bool]] = [(urn, False)]
        visiting: set[str] = set()
        while stack:
            current, expanded = stack.pop()
            if current in self._closure:
                continue
            if expanded:
                visiting.discard(current)
                closure: set[str] = set()
                for edge in self.direct(current):
                    closure.add(edge)
                    closure |= self._closure.get(edge, frozenset())
                self._closure[current] = frozenset(closure)
                continue
            if current in visiting:  # a cycle cannot be registered; never in a recorded plan
                continue
            visiting.add(current)
            stack.append((current, True))
            stack.extend((edge, False) for edge in self.direct(current) if edge not in self._closure)
        return self._closure[urn]

    def retained(self, urn: str) -> bool:
        """Whether the engine keeps the resource in the cloud when it leaves the state.

        `retainOnDelete` left unset is inherited from the parent by the engine
        (https://www.pulumi.com/docs/iac/concepts/resources/options/retainondelete/: "The default
        is to inherit this value from the parent resource"; pulumi/pulumi
        pkg/resource/deploy/source_eval.go `inheritFromParent`); the plan records unset as false, so a
        retained ancestor counts. The engine does not inherit over an explicit `false`, which the
        plan cannot tell from unset: a child that sets `retain_on_delete=False` under a retained
        parent counts as retained here (no plan of the example stacks or mixes has such a child).
        """
        if urn not in self._retained:
            record = self.by_urn.get(urn)
            if record is None:
                self._retained[urn] = False
            else:
                parent = record.get("parent")
                inherited = isinstance(parent, str) and bool(parent) and self.retained(parent)
                self._retained[urn] = bool(record.get("retainOnDelete")) or inherited
        return self._retained[urn]

    def protected(self, urn: str) -> bool:
        """Whether the engine refuses to delete the resource: `protect`, set or inherited from the
        parent (inherited like `retainOnDelete`, `retained`)."""
        if urn not in self._protected:
            record = self.by_urn.get(urn)
            if record is None:
                self._protected[urn] = False
            else:
                parent = record.get("parent")
                inherited = isinstance(parent, str) and bool(parent) and self.protected(parent)
                self._protected[urn] = bool(record.get("protect")) or inherited
        return self._protected[urn]

    def deleted_with(self, urn: str) -> str | None:
        """The resource whose deletion the engine takes as this one's: its own `deletedWith`, else
        its nearest ancestor's. The engine copies an unset `deletedWith` from the parent goal at
        registration (pulumi/pulumi pkg/resource/deploy/source_eval.go `inheritFromParent`: "only
        inherits DeletedWith, Protect, RetainOnDelete, and Provider from parent"), so a component
        registered with `deleted_with` passes it to every child that names none."""
        seen: set[str] = set()
        current: str | None = urn
        while current and current not in seen:
            seen.add(current)
            record = self.by_urn.get(current)
            if record is None:
                return None
            if record.get("deletedWith"):
                return str(record["deletedWith"])
            parent = record.get("parent")
            current = parent if isinstance(parent, str) else None
        return None

    def managed(self) -> Iterable[Record]:
        """Custom resources the program manages (not reads, not providers)."""
        return (
            record
            for record in self.records
            if record.get("custom") and not record.get("read") and not record["type"].startswith(PROVIDER_PREFIX)
        )


# --- one registration per URN ----------------------------------------------------------------


def unique_urns(graph: PlanGraph) -> list[Violation]:
    """The engine refuses a second registration of a URN in one run ("Duplicate resource URN"):
    two resources of one type with one name under one parent. Pulumi's mock monitor does not, so
    the plan is checked instead (a URN is `...::<parent types>$<type>::<name>`,
    https://www.pulumi.com/docs/iac/concepts/resources/names/#urns)."""
    seen: set[str] = set()
    violations = []
    for record in graph.records:
        if record["urn"] in seen:
            violations.append(
                Violation("unique-urn", record["urn"], "registered twice in one run: give one of them another name")
            )
        seen.add(record["urn"])
    return violations


# --- explicit providers ---------------------------------------------------------------------


def explicit_providers(graph: PlanGraph, disabled: Iterable[str]) -> list[Violation]:
    """With `pulumi:disable-default-providers` listing a package (or `*`), the engine refuses any
    resource of that package without an explicit provider, reads included: it swaps in a "denied
    default provider" reference and fails the step
    (https://www.pulumi.com/docs/iac/concepts/resources/providers/#disabling-default-providers,
    pulumi/pulumi#8829). A `.get()` that ignores its options is exactly such a read.
    """
    denied = set(disabled)
    violations = []
    for record in graph.records:
        package = package_of(record["type"])
        if not record.get("custom") or record["type"].startswith(PROVIDER_PREFIX) or record.get("provider"):
            continue
        if "*" in denied or package in denied:
            kind = "read" if record.get("read") else "resource"
            violations.append(
                Violation(
                    "explicit-provider",
                    record["urn"],
                    f"this {kind} names no provider, and the stack disables the default {package} provider "
                    "(pulumi:disable-default-providers): pass the stack's provider in its options",
                )
            )
    return violations


def explicit_invoke_providers(invokes: Iterable[tuple[str, str | None]], disabled: Iterable[str]) -> list[Violation]:
    """The same for invokes (`aws.get_caller_identity()`, `gcp.organizations.get_project()`): a
    function of a disabled package called without `opts=InvokeOptions(provider=...)` goes through
    the denied default provider and fails. The engine's own functions (`pulumi:pulumi:*`) have none.
    """
    denied = set(disabled)
    return [
        Violation(
            "explicit-provider",
            token,
            f"the invoke {token} names no provider, and the stack disables the default "
            f"{package_of(token)} provider: pass InvokeOptions(provider=...)",
        )
        for token, provider in invokes
        if provider is None and package_of(token) != "pulumi" and ("*" in denied or package_of(token) in denied)
    ]


def disabled_default_providers(config: Mapping[str, str]) -> list[str]:
    """`pulumi:disable-default-providers` of a stack's config (tools.plan.harness.stack_config form)."""
    raw = config.get("pulumi:disable-default-providers")
    if not raw:
        return []
    value = json.loads(raw) if raw.strip().startswith("[") else [raw]
    return [str(item) for item in value]


# --- grants before use ----------------------------------------------------------------------


@dataclass(frozen=True)
class KeyUse:
    """A resource kind that a cloud service encrypts with a customer key, through its own agent."""

    type: str
    # Where its inputs name the key (dotted paths, `[]` for every list item).
    key_paths: tuple[str, ...]
    # The service whose agent uses the key (GCP: the ServiceIdentity's `service`).
    service: str
    source: str
    # Whether the service can use the key only through a grant (GCP service agents hold no role on
    # a new key); AWS's default key policy leaves it to the caller's IAM, so no grant is required.
    requires_grant: bool = True


@dataclass(frozen=True)
class GrantKind:
    """A resource that lets a principal use a key: its type, where it names the key, and whether
    the key it names is a key ring (covering every key in it) or one key."""

    type: str
    key_path: str
    ring: bool = False
    # Only grants of these roles count (empty: the type itself is the grant).
    roles: frozenset[str] = frozenset()


GCP_KEY_USER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
GCP_GRANTS = (
    GrantKind("gcp:kms/keyRingIAMMember:KeyRingIAMMember", "keyRingId", ring=True, roles=frozenset({GCP_KEY_USER})),
    GrantKind("gcp:kms/keyRingIAMBinding:KeyRingIAMBinding", "keyRingId", ring=True, roles=frozenset({GCP_KEY_USER})),
    GrantKind("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "cryptoKeyId", roles=frozenset({GCP_KEY_USER})),
    GrantKind("gcp:kms/cryptoKeyIAMBinding:CryptoKeyIAMBinding", "cryptoKeyId", roles=frozenset({GCP_KEY_USER})),
)
# AWS: a key's default policy lets the account's IAM decide, and RDS / Secrets Manager create their
# KMS grants as the caller; a separate key policy or grant, where a stack has one, must come first.
AWS_GRANTS = (GrantKind("aws:kms/keyPolicy:KeyPolicy", "keyId"), GrantKind("aws:kms/grant:Grant", "keyId"))
KEY_USES = (
    KeyUse(
        "gcp:sql/databaseInstance:DatabaseInstance",
        ("encryptionKeyName",),
        "sqladmin.googleapis.com",
        # The Cloud SQL service agent holds cryptoKeyEncrypterDecrypter on the key before the instance.
        "https://cloud.google.com/sql/docs/postgres/configure-cmek",
    ),
    KeyUse(
        "gcp:secretmanager/secret:Secret",
        (
            "replication.userManaged.replicas[].customerManagedEncryption.kmsKeyName",
            "replication.auto.customerManagedEncryption.kmsKeyName",
        ),
        "secretmanager.googleapis.com",
        # The Secret Manager service agent holds cryptoKeyEncrypterDecrypter before a secret uses the key.
        "https://cloud.google.com/secret-manager/docs/cmek",
    ),
    KeyUse(
        "aws:rds/instance:Instance",
        ("kmsKeyId",),
        "rds.amazonaws.com",
        "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Overview.Encryption.Keys.html",
        requires_grant=False,
    ),
    KeyUse(
        "aws:secretsmanager/secret:Secret",
        ("kmsKeyId",),
        "secretsmanager.amazonaws.com",
        "https://docs.aws.amazon.com/secretsmanager/latest/userguide/security-encryption.html",
        requires_grant=False,
    ),
)
# The e-mail domain of each GCP service agent, for grants that name the agent literally.
GCP_AGENT_DOMAINS = {
    "sqladmin.googleapis.com": "gcp-sa-cloud-sql.iam.gserviceaccount.com",
    "secretmanager.googleapis.com": "gcp-sa-secretmanager.iam.gserviceaccount.com",
}
UNKNOWN = "[unknown]"


def values_at(value: Any, path: str) -> list[Any]:
    """Values at a dotted path; `name[]` walks every item of a list."""
    current = [value]
    for part in path.split("."):
        nxt: list[Any] = []
        is_list = part.endswith("[]")
        key = part.removesuffix("[]")
        for item in current:
            if isinstance(item, Mapping) and key in item:
                found = item[key]
                if is_list and isinstance(found, list):
                    nxt.extend(found)
                elif not is_list:
                    nxt.append(found)
        current = nxt
    return [item for item in current if item not in (None, "")]


def _first(values: list[Any]) -> Any:
    return values[0] if values else None


def _covers(grant_kind: GrantKind, grant_key: Any, key: Any) -> bool:
    """Whether a grant on `grant_key` covers `key`; unknown values (a preview) count as covering."""
    if not isinstance(grant_key, str) or not isinstance(key, str) or UNKNOWN in (grant_key, key):
        return True
    if grant_kind.ring:
        return key.startswith(grant_key.rstrip("/") + "/cryptoKeys/")
    return key == grant_key or key.endswith(grant_key) or grant_key.endswith(key)


def _grant_service(graph: PlanGraph, record: Record) -> set[str]:
    """The services whose agents a grant names: through a ServiceIdentity whose output feeds it
    (a direct dependency; further up the chain it would be some other grant's agent), or literally."""
    services = {
        str(graph.by_urn[urn]["inputs"].get("service"))
        for urn in record.get("dependencies") or []
        if urn in graph.by_urn and graph.by_urn[urn]["type"] == "gcp:projects/serviceIdentity:ServiceIdentity"
    }
    members = [record["inputs"].get("member"), *(record["inputs"].get("members") or [])]
    for service, domain in GCP_AGENT_DOMAINS.items():
        if any(isinstance(member, str) and member.endswith(domain) for member in members):
            services.add(service)
    return services


def grants_before_use(
    graph: PlanGraph,
    uses: Sequence[KeyUse] = KEY_USES,
    grant_kinds: Sequence[GrantKind] = GCP_GRANTS + AWS_GRANTS,
) -> list[Violation]:
    """A resource encrypted with a customer key waits for every grant in the plan that lets its
    service's agent use that key: without it the engine creates both at once and the first `up`
    fails ("insufficient permission to use KMS key"). The engine orders only what the program
    declares (https://www.pulumi.com/docs/iac/concepts/resources/options/dependson/: "for
    dependencies the engine cannot see"). AWS grants (key policies, KMS grants) apply to any
    service of the account, so there every grant on the key counts.

    Where the service needs a grant (GCP) and the plan has none covering the key, that is a
    violation too, unless the plan reads its platform stack (a tenants shard: the platform stack,
    deployed before, made the grants).
    """
    platform_elsewhere = any(record["type"] == STACK_REFERENCE for record in graph.records)
    kinds = {kind.type: kind for kind in grant_kinds}
    grants: list[tuple[Record, GrantKind, set[str]]] = []
    for record in graph.managed():
        kind = kinds.get(record["type"])
        if kind is None or (kind.roles and record["inputs"].get("role") not in kind.roles):
            continue
        services = _grant_service(graph, record) if record["type"].startswith("gcp:") else {"*"}
        grants.append((record, kind, services))
    violations = []
    for use in uses:
        for record in graph.managed():
            if record["type"] != use.type:
                continue
            keys = [key for path in use.key_paths for key in values_at(record["inputs"], path)]
            if not keys:
                continue
            waited = graph.waits_for(record["urn"])
            for key in keys:
                needed = [
                    grant
                    for grant, kind, services in grants
                    if (use.service in services or "*" in services)
                    and _covers(kind, _first(values_at(grant["inputs"], kind.key_path)), key)
                    and package_of(grant["type"]) == package_of(use.type)
                ]
                if not needed and use.requires_grant and not platform_elsewhere:
                    violations.append(
                        Violation(
                            "grant-before-use",
                            record["urn"],
                            f"encrypted with key {key}, but nothing in this plan lets {use.service} use it: "
                            f"grant its service agent the key (see {use.source})",
                        )
                    )
                missing = [grant["urn"] for grant in needed if grant["urn"] not in waited]
                if missing:
                    names = ", ".join(label(urn) for urn in missing)
                    violations.append(
                        Violation(
                            "grant-before-use",
                            record["urn"],
                            f"encrypted with key {key} but does not wait for {names}, which lets "
                            f"{use.service} use it: depend on the grant (see {use.source})",
                        )
                    )
    return violations


# --- CRDs before custom resources -----------------------------------------------------------

# API groups a Kubernetes API server serves itself (https://kubernetes.io/docs/reference/
# generated/kubernetes-api/v1.34/): objects in them need no CRD. `core` is the legacy group "".
BUILT_IN_GROUPS = frozenset(
    {
        "core",
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)
# pulumi-kubernetes types that are no API object (`kubernetes:helm.sh/v3:Release`, `yaml`).
_KUBERNETES_OBJECT = re.compile(r"^kubernetes:(?P<group>[^/:]+)/(?P<version>[^:]+):(?P<kind>[A-Za-z0-9]+)$")
PULUMI_KUBERNETES_GROUPS = frozenset({"helm.sh"})

# Charts the platform installs (tenancy:installs, delivery.installFlux) and the CRD groups each
# brings, from the chart at the pinned version.
CHART_CRD_GROUPS: dict[str, frozenset[str]] = {
    # cloudnative-pg/charts charts/cloudnative-pg/templates/crds/crds.yaml (chart 0.29.1)
    "cloudnative-pg": frozenset({"postgresql.cnpg.io"}),
    # cert-manager/cert-manager deploy/charts/cert-manager templates/crds.yaml (v1.21.1), rendered
    # because the edge sets `crds.enabled: true` (components/model/settings/edge.py)
    "cert-manager": frozenset({"cert-manager.io", "acme.cert-manager.io"}),
    # envoyproxy/gateway charts/gateway-helm crds/ (v1.9.1): the Gateway API CRDs and Envoy Gateway's own
    "gateway-helm": frozenset({"gateway.networking.k8s.io", "gateway.envoyproxy.io"}),
    # mariadb-operator/mariadb-operator deploy/charts/mariadb-operator-crds (26.6.0)
    "mariadb-operator-crds": frozenset({"k8s.mariadb.com"}),
    # external-secrets/external-secrets deploy/charts/external-secrets (installCRDs: true by default)
    "external-secrets": frozenset({"external-secrets.io"}),
    # fluxcd-community/helm-charts charts/flux2/templates/*-crds.yaml (flux2 2.17.2)
    "flux2": frozenset(
        {
            "source.toolkit.fluxcd.io",
            "kustomize.toolkit.fluxcd.io",
            "helm.toolkit.fluxcd.io",
            "notification.toolkit.fluxcd.io",
            "image.toolkit.fluxcd.io",
        }
    ),
}


@dataclass(frozen=True)
class Prerequisite:
    """A CRD group the cluster must serve before the first `up`, and who installs it there."""

    group: str
    installed_by: str


# The documented list (docs/first-run.md, "CRDs the cluster must serve"); a test keeps both equal.
CRD_PREREQUISITES: dict[str, Prerequisite] = {
    p.group: p
    for p in (
        Prerequisite("source.toolkit.fluxcd.io", "the cluster's Flux, where `delivery.installFlux` is off"),
        Prerequisite("kustomize.toolkit.fluxcd.io", "the cluster's Flux, where `delivery.installFlux` is off"),
        Prerequisite("helm.toolkit.fluxcd.io", "the cluster's Flux, where `delivery.installFlux` is off"),
        Prerequisite("external-secrets.io", "External Secrets Operator, where `tenancy:installs` does not install it"),
        Prerequisite("karpenter.sh", "Karpenter, on EKS stacks with `kind: karpenter` pools"),
        Prerequisite("karpenter.k8s.aws", "Karpenter, on EKS stacks with `kind: karpenter` pools"),
        Prerequisite(
            "gateway.networking.k8s.io",
            "GKE's Gateway API (`--gateway-api=standard`); on EKS the Gateway API CRDs, before the first `up`",
        ),
        Prerequisite(
            "gateway.k8s.aws",
            "the AWS Load Balancer Controller's Gateway CRDs (LoadBalancerConfiguration), on EKS, before the 1st `up`",
        ),
        Prerequisite("vpcresources.k8s.aws", "the EKS VPC resource controller (Security Groups for Pods, EKS runbook)"),
        Prerequisite(
            "networking.gke.io",
            "GKE FQDN network policy (Dataplane V2, `--enable-fqdn-network-policy`), for egress `hosts`",
        ),
    )
}


# What `tenancy:installs.managedElsewhere` makes the cluster's business too: the charts the stack
# would install bring these, and someone else installs them (docs/real-run.md).
MANAGED_ELSEWHERE: dict[str, Prerequisite] = {
    p.group: p
    for p in (
        Prerequisite("postgresql.cnpg.io", "CloudNativePG, with `installs.managedElsewhere`"),
        Prerequisite("k8s.mariadb.com", "mariadb-operator, with `installs.managedElsewhere`"),
        Prerequisite("cert-manager.io", "cert-manager, with `installs.managedElsewhere`"),
    )
}


def api_group(type_token: str) -> str | None:
    """The API group of a Kubernetes object's type token; None for types that are no API object."""
    match = _KUBERNETES_OBJECT.match(type_token)
    if match is None or match["group"] in PULUMI_KUBERNETES_GROUPS:
        return None
    # `kubernetes:core/v1:Namespace`: the legacy group.
    return match["group"]


def _installed_groups(record: Record) -> frozenset[str]:
    """The CRD groups a release or a CustomResourceDefinition in the plan brings."""
    if record["type"] == "kubernetes:helm.sh/v3:Release":
        chart = str(record["inputs"].get("chart") or "").rstrip("/").rpartition("/")[2]
        return CHART_CRD_GROUPS.get(chart, frozenset())
    if record["type"] == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition":
        group = (record["inputs"].get("spec") or {}).get("group")
        return frozenset({group}) if isinstance(group, str) else frozenset()
    return frozenset()


def installed_groups(graph: PlanGraph) -> frozenset[str]:
    """The CRD groups a plan installs: a platform stack's, which its tenants shards rely on."""
    return frozenset(group for record in graph.managed() for group in _installed_groups(record))


def crds_after_installs(
    graph: PlanGraph,
    prerequisites: Mapping[str, Prerequisite] = CRD_PREREQUISITES,
    installed_before: frozenset[str] = frozenset(),
) -> list[Violation]:
    """A custom resource is created only once its CRD is served: created at the same time as the
    release that installs it, the API server answers "no matches for kind" and the step fails.
    So where the plan installs the CRD, the object must wait for that install (dependsOn,
    https://www.pulumi.com/docs/iac/concepts/resources/options/dependson/); where nothing in the
    plan installs it, its group must be installed by a stack deployed before (`installed_before`:
    a tenants shard's platform stack) or be on the documented list of what the cluster brings."""
    installers: dict[str, list[str]] = {}
    for record in graph.managed():
        for installed in _installed_groups(record):
            installers.setdefault(installed, []).append(record["urn"])
    violations = []
    for record in graph.managed():
        group = api_group(record["type"])
        if group is None or group in BUILT_IN_GROUPS:
            continue
        sources = installers.get(group)
        if sources:
            waited = graph.waits_for(record["urn"])
            if not any(urn in waited for urn in sources):
                names = ", ".join(label(urn) for urn in sources)
                violations.append(
                    Violation(
                        "crd-before-object",
                        record["urn"],
                        f"a {group} object that does not wait for {names}, which installs its CRD: "
                        "depend on the release",
                    )
                )
        elif group not in prerequisites and group not in installed_before:
            violations.append(
                Violation(
                    "crd-before-object",
                    record["urn"],
                    f"nothing in this plan installs the {group} CRDs and the group is not on the documented "
                    "prerequisites (tools/plan/engine_rules.py CRD_PREREQUISITES, docs/first-run.md)",
                )
            )
    return violations


# --- namespaces before the objects in them --------------------------------------------------


def namespaces_before_objects(graph: PlanGraph) -> list[Violation]:
    """An object in a namespace the plan creates waits for that namespace; otherwise the API
    server refuses it ("namespaces not found") when both are created in the same `up`."""
    namespaces = {
        (record["inputs"].get("metadata") or {}).get("name"): record["urn"]
        for record in graph.managed()
        if record["type"] == "kubernetes:core/v1:Namespace"
    }
    violations = []
    for record in graph.managed():
        if api_group(record["type"]) is None:
            continue
        namespace = (record["inputs"].get("metadata") or {}).get("namespace")
        urn = namespaces.get(namespace)
        if urn is not None and urn not in graph.waits_for(record["urn"]):
            violations.append(
                Violation(
                    "namespace-before-object",
                    record["urn"],
                    f"in namespace {namespace}, which this plan creates, but does not wait for it",
                )
            )
    return violations


def deleted_with_namespaces(graph: PlanGraph) -> list[Violation]:
    """`deletedWith` skips the provider's delete call when the target is deleted in the same update
    (https://www.pulumi.com/docs/iac/concepts/resources/options/deletedwith/). Deleting a Namespace
    takes along only the objects inside it; anything else deleted "with" it (a cluster-scoped
    object, a cloud resource, an object of another namespace) is dropped from the state and left
    running. The option is inherited from the parent (`PlanGraph.deleted_with`), so a component
    created with it passes it to cluster-scoped children that set none: checked on the effective
    value, not only on what each resource sets."""
    namespaces = {
        record["urn"]: (record["inputs"].get("metadata") or {}).get("name")
        for record in graph.managed()
        if record["type"] == "kubernetes:core/v1:Namespace"
    }
    violations = []
    for record in graph.managed():
        target = graph.deleted_with(record["urn"])
        if target not in namespaces:
            continue
        name = namespaces[target]
        inside = (record.get("inputs") or {}).get("metadata") or {}
        if api_group(record["type"]) is not None and inside.get("namespace") == name:
            continue
        inherited = "" if record.get("deletedWith") else " (inherited from its parent)"
        violations.append(
            Violation(
                "deleted-with-namespace",
                record["urn"],
                f"deleted with namespace {name}{inherited} but not an object inside it: deleting the namespace "
                "leaves it behind while Pulumi forgets it; set deleted_with only on objects of that namespace",
            )
        )
    return violations


# The objects that isolate a tenant namespace (components/guardrails/namespace.py `_register_guards`):
# its quota and limits, and its isolation policy (guardrails/network.py ISOLATION_POLICY) or, in the
# ClusterNetworkPolicy mode, the cluster-scoped one named after it (cluster_network.py isolation_name).
ISOLATION_TYPES = frozenset({"kubernetes:core/v1:ResourceQuota", "kubernetes:core/v1:LimitRange"})
ISOLATION_POLICY = ("kubernetes:networking.k8s.io/v1:NetworkPolicy", "tenancy-isolation")
CLUSTER_ISOLATION_KIND = "ClusterNetworkPolicy"


def isolation_of(graph: PlanGraph, namespace: str) -> list[str]:
    """The URNs of the objects in the plan that isolate `namespace`."""
    found = []
    for record in graph.managed():
        metadata = (record.get("inputs") or {}).get("metadata") or {}
        inside = metadata.get("namespace") == namespace
        if (
            (inside and record["type"] in ISOLATION_TYPES)
            or (inside and (record["type"], metadata.get("name")) == ISOLATION_POLICY)
            or (
                record["type"].endswith(f":{CLUSTER_ISOLATION_KIND}")
                and metadata.get("name") == f"tenancy-isolation-{namespace}"
            )
        ):
            found.append(record["urn"])
    return found


def protected_namespaces(graph: PlanGraph) -> list[Violation]:
    """A protected Namespace (it holds data, components/lifecycle.py `namespace_options`) whose
    deletion is scheduled, in an update that skips its preview, is refused only when the engine gets
    to it; by then it has skipped the deletion of everything `deletedWith` it, as the namespace's
    deletion was scheduled, and dropped those objects from the state while they stay live
    (pulumi/pulumi pkg/resource/deploy/step.go `DeleteStep.Apply`: `isDeletedWith(s.old.DeletedWith,
    s.otherDeletions)`; the real run found it, docs/real-run.md). So nothing is deleted with it.

    And every object inside it waits for its isolation (quota, limits, isolation policy): the
    engine deletes dependents before what they depend on, in antichains, and leaves every
    transitive dependency of a refused deletion in place (deployment_executor.go, `erroredDeps`),
    so a refused removal of the data leaves it isolated, never behind a deleted policy."""
    violations = []
    for namespace in graph.managed():
        if namespace["type"] != "kubernetes:core/v1:Namespace" or not graph.protected(namespace["urn"]):
            continue
        name = str((namespace["inputs"].get("metadata") or {}).get("name"))
        isolation = isolation_of(graph, name)
        for record in graph.managed():
            if graph.deleted_with(record["urn"]) == namespace["urn"]:
                violations.append(
                    Violation(
                        "protected-namespace",
                        record["urn"],
                        f"deleted with namespace {name}, which is protected: an update that skips its preview "
                        "drops it from the state and leaves it live when the namespace's deletion is refused; "
                        "register it without deleted_with (components/clouds/base.py InNamespace)",
                    )
                )
            inside = ((record.get("inputs") or {}).get("metadata") or {}).get("namespace") == name
            if not inside or api_group(record["type"]) is None or record["urn"] in isolation:
                continue
            missing = [urn for urn in isolation if urn not in graph.waits_for(record["urn"])]
            if missing:
                violations.append(
                    Violation(
                        "protected-namespace",
                        record["urn"],
                        f"in protected namespace {name} but does not wait for its isolation "
                        f"({', '.join(label(urn) for urn in missing)}): a refused removal could delete the "
                        "isolation and leave the data unisolated; depend on EnvironmentResources.ready",
                    )
                )
    return violations


# --- what kept resources use -----------------------------------------------------------------


def kept_dependencies(graph: PlanGraph) -> list[Violation]:
    """A retained resource stays in the cloud when it leaves the state
    (https://www.pulumi.com/docs/iac/concepts/resources/options/retainondelete/); whatever of the
    same tenant it uses and is not retained is deleted in that same step. Deleting what a live
    resource still uses fails (an RDS instance's security group: DependencyViolation) or breaks the
    kept resource. So every custom resource a retained one waits for directly, in the same scope
    (tenant, or cluster-wide), is retained too. Providers, reads and state-only packages
    (`random`) are exempt: deleting them touches nothing in the cloud.

    Protected resources need no such rule: the engine refuses to delete a protected resource and
    fails the whole update at that step (https://www.pulumi.com/docs/iac/concepts/resources/options/protect/),
    and a resource that leaves the program while a kept one stays is deleted only after the kept
    one has been updated to stop using it (the engine runs deletions last).
    """
    violations = []
    for record in graph.managed():
        if not graph.retained(record["urn"]):
            continue
        for urn in record.get("dependencies") or []:
            used = graph.by_urn.get(urn)
            if (
                used is None
                or not used.get("custom")
                or used.get("read")
                or used["type"].startswith(PROVIDER_PREFIX)
                or package_of(used["type"]) in STATE_ONLY_PACKAGES
                or used.get("tenant") != record.get("tenant")
                or graph.retained(urn)
            ):
                continue
            violations.append(
                Violation(
                    "kept-uses-deleted",
                    record["urn"],
                    f"retained, but uses {label(urn)}, which is not: removing the tenant deletes it while "
                    "this stays in the cloud; retain it too",
                )
            )
    return violations


def _compared(record: Record) -> dict[str, Any]:
    """The inputs a lifecycle transition must leave alone (kept_unchanged)."""
    inputs: dict[str, Any] = dict(record.get("inputs") or {})
    if api_group(record["type"]) is None:
        return inputs
    metadata = inputs.get("metadata") or {}
    return {
        "apiVersion": inputs.get("apiVersion"),
        "kind": inputs.get("kind"),
        "metadata": {"name": metadata.get("name"), "namespace": metadata.get("namespace")},
    }


def kept_unchanged(before: PlanGraph, after: PlanGraph) -> list[Violation]:
    """Across a lifecycle transition (a tenant file's `lifecycle:` changed, the two plans before
    and after), what the later state keeps (protected or retained) keeps its inputs. Offline we
    cannot tell an in-place update from a replacement, and a replacement is what must not happen:
    the engine refuses to replace a protected resource, and replacing a retained one creates a new
    one and leaves the old one, data and all, outside the state
    (https://www.pulumi.com/docs/iac/concepts/resources/options/retainondelete/: "when deleting or
    replacing"). Data is registered once and then left alone, whatever the state.

    Kubernetes objects are compared by identity only (apiVersion, kind, name, namespace): a
    suspension labels namespaces and sets `spec.suspend`, which are patches; pulumi-kubernetes
    replaces an object when its identity changes."""
    violations = []
    for record in after.managed():
        earlier = before.by_urn.get(record["urn"])
        kept = record.get("protect") or after.retained(record["urn"])
        if earlier is None or not kept:
            continue
        inputs_before, inputs_after = _compared(earlier), _compared(record)
        if inputs_before == inputs_after:
            continue
        fields = sorted(
            k for k in set(inputs_before) | set(inputs_after) if inputs_before.get(k) != inputs_after.get(k)
        )
        violations.append(
            Violation(
                "kept-unchanged",
                record["urn"],
                f"kept, but the transition changes its inputs ({', '.join(fields)}): leave data untouched",
            )
        )
    return violations


# --- all of them ---------------------------------------------------------------------------------

Check = Callable[[PlanGraph], list[Violation]]


def check_plan(
    records: Sequence[Record],
    disabled: Iterable[str],
    installed_before: frozenset[str] = frozenset(),
    managed_elsewhere: bool = False,
) -> list[Violation]:
    """Every rule on one plan's records; `installed_before`: CRD groups a stack deployed earlier
    installs (a tenants shard's platform stack, `installed_groups` of its plan)."""
    graph = PlanGraph(records)
    disabled_list = list(disabled)
    prerequisites = {**CRD_PREREQUISITES, **(MANAGED_ELSEWHERE if managed_elsewhere else {})}
    checks: list[Check] = [
        unique_urns,
        lambda g: explicit_providers(g, disabled_list),
        grants_before_use,
        lambda g: crds_after_installs(g, prerequisites=prerequisites, installed_before=installed_before),
        namespaces_before_objects,
        deleted_with_namespaces,
        protected_namespaces,
        kept_dependencies,
    ]
    return [violation for check in checks for violation in check(graph)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy engine-rules", description=__doc__.split("\n\n")[0])
    parser.add_argument("plan", type=Path, help="a plan directory (tenancy plan --out)")
    parser.add_argument("--stack", required=True, help="the stack the plan is of (its default-provider settings)")
    parser.add_argument("--platform-plan", type=Path, help="a tenants shard's platform stack plan (what it installs)")
    args = parser.parse_args(argv)
    from tools.plan.harness import stack_config

    records = json.loads((args.plan / "resources.json").read_text(encoding="utf-8"))
    before: frozenset[str] = frozenset()
    if args.platform_plan is not None:
        platform = json.loads((args.platform_plan / "resources.json").read_text(encoding="utf-8"))
        before = installed_groups(PlanGraph(platform))
    config, _ = stack_config(args.stack)
    violations = check_plan(records, disabled_default_providers(config), before)
    for violation in violations:
        print(violation, file=sys.stderr)
    print(f"{len(records)} resources, {len(violations)} engine rule violations")
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
