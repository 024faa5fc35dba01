"""Stack-level refusals for issue 13: platform lock-out (hole 9), Flux lockdown (hole 10) and names
shared between tenants and the platform (hole 8).

Every problem names the settings file and key (`Pulumi.prod-aws.yaml:
tenancy:policy.platformIdentities`) or the tenant file and field, and is raised before anything
is registered, like every other problem in the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from components.model.checks.edge import edge_settings_problems
from components.model.core.errors import Problem
from components.model.core.labels import namespace_name
from components.model.settings.network import CLUSTER_MODE
from components.model.tenant_file.isolation import virtual_environments

if TYPE_CHECKING:
    from components.model.checks.capabilities import CloudRules
    from components.model.settings.stack import ClusterSettings, StackSettings
    from components.model.tenant_file.spec import TenantSpec

# The groups PlatformIdentities lists by default: kind/kubeadm put the admin kubeconfig in them.
KUBEADM_ADMIN_GROUPS = frozenset({"system:masters", "kubeadm:cluster-admins"})
# Groups that would exempt far more than the platform from the platform-owned rule.
_TOO_BROAD_GROUPS = frozenset({"system:authenticated", "system:unauthenticated", "system:serviceaccounts"})
_POLICY_KEY = "tenancy:policy.platformIdentities"
# Split stacks (tools/scale/shards.py) are reconciled by Pulumi Kubernetes Operator Stack objects whose
# workspace pod runs as this service account; in-cluster, that is who the Kubernetes provider is.
OPERATOR_NAMESPACE = "pulumi-kubernetes-operator"
OPERATOR_SERVICE_ACCOUNT = "tenancy-deployer"
OPERATOR_IDENTITY = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_SERVICE_ACCOUNT}"
_FLUX_ACK_KEY = "tenancy:delivery.fluxLockdownAcknowledged"
# Why a managed cluster needs its own platform identity (the kubeadm groups never apply there).


def platform_identity_problems(settings: StackSettings) -> list[Problem]:
    """A managed-cluster stack must name the identity its own `up` runs as (hole 9).

    The platform-owned rule (components/admission/rules/platform_owned.py) denies every change to
    quotas, limit ranges, bindings and tenant Namespaces except by platform identities. On kind the
    admin kubeconfig is in `kubeadm:cluster-admins`/`system:masters`, which are listed by default; on
    GKE and EKS it is not, so without an explicit identity the stack's second `up` is denied by the
    policy its first `up` installed.
    """
    identities = settings.policy.platform_identities
    problems = _too_broad(settings)
    enforced = settings.policy.enabled and settings.policy.actions.platform_owned == "Deny"
    operator_run = settings.base_stack is not None and settings.stack_role != "all"
    if enforced and operator_run and OPERATOR_IDENTITY not in identities.users:
        problems.append(
            Problem(
                settings.source,
                f"{_POLICY_KEY}.users",
                f"this split stack is reconciled by the Pulumi Kubernetes Operator as {OPERATOR_IDENTITY!r}; "
                "list it, or its resyncs are denied by the platform-owned rule (`tenancy shards write` "
                "adds it)",
            )
        )
    return problems


def up_identity_problems(settings: StackSettings, cloud: CloudRules) -> list[Problem]:
    """A managed-cluster stack must name the identity its own `up` runs as (hole 9); the cloud says
    how its clusters authenticate `pulumi up` (`CloudCapabilities.up_identity_hint`), None where
    that identity is a built-in admin group the rules already exempt (kind's kubeadm admin)."""
    identities = settings.policy.platform_identities
    enforced = settings.policy.enabled and settings.policy.actions.platform_owned == "Deny"
    own = [*identities.users, *(set(identities.groups) - KUBEADM_ADMIN_GROUPS)]
    hint = cloud.capabilities.up_identity_hint
    if not enforced or hint is None or own:
        return []
    return [
        Problem(
            settings.source,
            _POLICY_KEY,
            f"cloud {cloud.name} needs the identity that runs `pulumi up` listed here, or the stack's "
            f"platform-owned admission rule denies its own updates: {hint}",
        )
    ]


def _too_broad(settings: StackSettings) -> list[Problem]:
    """Platform identities that would exempt tenants too: built-in groups and tenant service accounts."""
    identities = settings.policy.platform_identities
    problems: list[Problem] = []
    for index, group in enumerate(identities.groups):
        if group in _TOO_BROAD_GROUPS or group.startswith("system:serviceaccounts:tenant-"):
            problems.append(
                Problem(
                    settings.source,
                    f"{_POLICY_KEY}.groups.{index}",
                    f"{group!r} includes tenant identities; it would exempt them from the platform-owned rule",
                )
            )
    for index, user in enumerate(identities.users):
        if user == "system:anonymous" or user.startswith("system:serviceaccount:tenant-"):
            problems.append(
                Problem(
                    settings.source,
                    f"{_POLICY_KEY}.users.{index}",
                    f"{user!r} is a tenant or anonymous identity; it may not be a platform identity",
                )
            )
    return problems


_CONTEXT_KEY = "tenancy:cluster.context"


def cluster_context_problems(cluster: ClusterSettings, source: str, *, required: bool) -> list[Problem]:
    """A stack whose cluster is reached through the kubeconfig alone must name its context (issue 24).

    Without one the Kubernetes provider uses whatever context is current: on a platform engineer's
    laptop that may be a production cluster, and `make up` would apply the dev stack there. Clouds
    whose stacks reach their cluster through the cloud's own credentials do not require it
    (`CloudCapabilities.kube_context_required`).
    """
    if not required or cluster.context:
        return []
    return [
        Problem(
            source,
            _CONTEXT_KEY,
            f"this stack must name the kubeconfig context it applies to (for the kind cluster "
            f"{cluster.name!r}: kind-{cluster.name}); without it `pulumi up` applies to whatever context is "
            "current, which may be another cluster",
        )
    ]


def secrets_operator_problems(settings: StackSettings) -> list[Problem]:
    """The ESO identity the platform-owned rule trusts runs where the stack says ESO runs."""
    identity = settings.policy.secrets_operator_identity
    namespace = settings.data.secrets_operator_namespace
    if identity.startswith(f"system:serviceaccount:{namespace}:"):
        return []
    return [
        Problem(
            settings.source,
            "tenancy:policy.secretsOperatorIdentity",
            f"{identity!r} is not a service account of the External Secrets namespace {namespace!r} "
            "(tenancy:data.secretsOperatorNamespace); the platform-owned rule would deny its finalizer patches",
        )
    ]


def settings_problems(settings: StackSettings) -> list[Problem]:
    """Every check here that needs only the settings (called from stack.parse_settings)."""
    problems = [*platform_identity_problems(settings), *secrets_operator_problems(settings)]
    problems += edge_settings_problems(settings)
    # Checked here, with the key named, not in the model: a model-wide error names no key, and `--set
    # tenancy:environments=[dev]` must be seen as the cause (tools/plan/dirs.py attribute_overrides).
    if unknown := sorted(set(settings.read_only_environments) - set(settings.environments)):
        problems.append(
            Problem(
                settings.source,
                "tenancy:readOnlyEnvironments",
                f"names {', '.join(unknown)}, which tenancy:environments ({', '.join(settings.environments)}) "
                "does not list",
            )
        )
    for environment in settings.quota_split:
        if environment not in settings.environments:
            problems.append(
                Problem(
                    settings.source,
                    f"tenancy:quotaSplit.{environment}",
                    f"not an environment of this stack (environments: {', '.join(settings.environments)})",
                )
            )
    return problems


# Pool kinds the stack creates on the cloud, each tainted `tenancy.io/pool=<pool>:NoSchedule`.
_CREATED_POOL_KINDS = frozenset({"gke", "eks", "karpenter"})
_SYSTEM_POOL_KEY = "tenancy:cluster.systemPool"


def system_pool_problems(settings: StackSettings, cloud: CloudRules) -> list[Problem]:
    """A stack that creates the cluster's pools must name the untainted pool the platform's own pods use.

    Every pool the stack creates carries a NoSchedule taint that only tenant pods tolerate; CoreDNS,
    Karpenter's controller, External Secrets and Flux tolerate none of them, so without an
    untainted pool outside the stack they stay Pending and no tenant secret or release converges.
    """
    kinds = set(cloud.capabilities.pool_kinds) & _CREATED_POOL_KINDS  # a kind the cloud cannot run is its own problem
    created = sorted(name for name, pool in settings.node_pools.items() if pool.kind in kinds)
    system = settings.cluster.system_pool
    if system is not None and system in settings.node_pools:
        return [
            Problem(
                settings.source,
                _SYSTEM_POOL_KEY,
                f"{system!r} is a pool of tenancy:nodePools, which the stack taints for tenants; name the "
                "cluster's own untainted pool (GKE node pool or EKS managed node group) outside the stack",
            )
        ]
    if created and system is None:
        return [
            Problem(
                settings.source,
                _SYSTEM_POOL_KEY,
                f"every pool this stack creates is tainted ({', '.join(created)}): name the cluster's untainted "
                "pool where CoreDNS, Karpenter, External Secrets and Flux run "
                "(docs/bootstrap.md#5-cluster-the-system-pool)",
            )
        ]
    return []


def renders_flux_objects(spec: TenantSpec) -> bool:
    """Whether the tenant gets Flux objects (a HelmRelease per chart app or virtual cluster, a Kustomization)."""
    virtual = virtual_environments(spec.isolation, spec.environments)
    return spec.gitops is not None or any(app.chart is not None for app in spec.apps) or bool(virtual)


def flux_problems(tenants: Sequence[tuple[TenantSpec, str]], settings: StackSettings) -> list[Problem]:
    """Tenant Flux objects need a Flux in lockdown: installed here or acknowledged (hole 10).

    A HelmRelease without `serviceAccountName` runs as helm-controller itself, which is cluster-admin
    on a default Flux installation; only `--default-service-account`, `--no-cross-namespace-refs` and
    `--no-remote-bases` make one Flux safe to share (components/delivery/flux.py).
    """
    delivery = settings.delivery
    if delivery.flux_locked_down:
        return []
    users = sorted(label for spec, label in tenants if renders_flux_objects(spec))
    if not users:
        return []
    named = ", ".join(users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
    return [
        Problem(
            settings.source,
            _FLUX_ACK_KEY,
            f"tenants render Flux HelmReleases or Kustomizations ({named}) but this stack does not install Flux "
            "(tenancy:delivery.installFlux is false); a Flux without the multi-tenancy lockdown runs a tenant's "
            "HelmRelease as cluster-admin. Set installFlux: true, or set fluxLockdownAcknowledged: true to confirm "
            "the cluster's Flux runs with --no-cross-namespace-refs=true, --default-service-account=default and "
            "--no-remote-bases=true",
        )
    ]


def shared_name_problems(tenants: Sequence[tuple[TenantSpec, str]], settings: StackSettings) -> list[Problem]:
    """Tenant namespaces that are platform namespaces, and tenant groups that are platform identities (hole 8).

    A platform namespace is admitted by every tenant's NetworkPolicy, and a platform identity group
    skips the platform-owned rule: a tenant must not be able to stand in either place.
    """
    platform_namespaces = {ns.name for ns in settings.platform_namespaces} | {
        settings.delivery.flux_namespace,
        settings.data.shared_instances_namespace,
        settings.data.shared_secrets_namespace,
        settings.data.secrets_operator_namespace,
        settings.dns.namespace,
    }
    platform_groups = set(settings.policy.platform_identities.groups)
    problems: list[Problem] = []
    for spec, label in tenants:
        for environment in spec.environments:
            namespace = namespace_name(spec.name, environment)
            if namespace in platform_namespaces:
                problems.append(
                    Problem(label, "name", f"namespace {namespace!r} is a platform namespace of this stack")
                )
        for role in ("admin", "operator", "viewer"):
            for index, group in enumerate(getattr(spec.access, role)):
                if group in platform_groups:
                    problems.append(
                        Problem(
                            label,
                            f"access.{role}.{index}",
                            f"{group!r} is a platform identity group ({_POLICY_KEY}.groups); "
                            "its members would bypass the platform-owned rule",
                        )
                    )
    return problems


_SAAS_DOC = "docs/network.md#egress-to-saas-apis-without-stable-addresses"


def egress_host_problems(settings: StackSettings, cloud: CloudRules) -> list[Problem]:
    """Egress entries by host name where nothing would enforce them: refused, never rendered half.

    Only a dataplane that resolves names itself can allow a host (`CloudCapabilities.egress_hosts`);
    a NetworkPolicy matches addresses only. In the ClusterNetworkPolicy mode the isolation is a
    cluster-wide Admin-tier policy that a namespaced FQDNNetworkPolicy cannot open, so it is refused too.
    """
    problems = []
    for name, entry in settings.network.egress.items():
        if not entry.hosts:
            continue
        key = f"tenancy:network.egress.{name}.hosts"
        if not cloud.capabilities.egress_hosts:
            why = f"cloud {cloud.name!r} cannot enforce egress by host name: its network policies match addresses only"
        elif settings.network.mode == CLUSTER_MODE:
            why = (
                "hosts are rendered as a namespaced FQDNNetworkPolicy, which cannot open the cluster-wide "
                f"isolation of tenancy:network.mode {CLUSTER_MODE!r}"
            )
        else:
            continue
        problems.append(
            Problem(
                settings.source,
                key,
                f"{why}; list the service's published address ranges as cidrs, or send its traffic through "
                f"an egress proxy or gateway in a platform namespace with its own allow-list ({_SAAS_DOC})",
            )
        )
    return problems


def catalog_problems(
    tenants: Sequence[tuple[TenantSpec, str]], settings: StackSettings, cloud: CloudRules
) -> list[Problem]:
    """Every check here that needs the tenants or the stack's cloud (called once from catalog.py)."""
    return (
        up_identity_problems(settings, cloud)
        + system_pool_problems(settings, cloud)
        + egress_host_problems(settings, cloud)
        + flux_problems(tenants, settings)
        + shared_name_problems(tenants, settings)
    )
