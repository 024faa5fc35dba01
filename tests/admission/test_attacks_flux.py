"""Tenant Flux objects played through RBAC and admission (tests/admission/layers.py) on dev, prod and
prod-aws: every way a HelmRelease, Kustomization or source could make a Flux controller act as
itself or as another account is refused (`tenancy-flux`), each next to its legitimate twin, and
every Flux object the platform renders is still admitted."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.admission.rules.vcluster_release import RELEASE_POLICY
from components.delivery.gitops import GITOPS_NAME
from components.model.core.labels import PLATFORM_OWNED_KEY
from components.vcluster.objects import CHART_SOURCE
from components.vcluster.values import INSTALLER_ACCOUNT
from tests.admission.layers import ACME_PROD, WRITERS, Cluster, cluster, platform_identity
from tests.rbac import Subject, UserInfo
from tests.support import kubernetes_objects
from tools.plan.harness import ProgramRun

HELM_RELEASES = "helm.toolkit.fluxcd.io/v2/helmreleases"
KUSTOMIZATIONS = "kustomize.toolkit.fluxcd.io/v1/kustomizations"
OCI = "source.toolkit.fluxcd.io/v1/ocirepositories"
HELM_REPOSITORIES = "source.toolkit.fluxcd.io/v1/helmrepositories"
RESOURCES = {
    "HelmRelease": HELM_RELEASES,
    "Kustomization": KUSTOMIZATIONS,
    "OCIRepository": OCI,
    "HelmRepository": HELM_REPOSITORIES,
    "GitRepository": "source.toolkit.fluxcd.io/v1/gitrepositories",
    "Bucket": "source.toolkit.fluxcd.io/v1/buckets",
}
DEPLOYER = Subject("ServiceAccount", "deployer", ACME_PROD)
VICTIM = "tenant-genomics-lab-prod"


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


def flux(kind: str, **spec: Any) -> dict[str, Any]:
    group = RESOURCES[kind].rpartition("/")[0]
    return {"apiVersion": group, "kind": kind, "metadata": {"name": "web"}, "spec": spec}


def release(**changes: Any) -> dict[str, Any]:
    spec = {"interval": "10m", "serviceAccountName": "deployer", "chartRef": {"kind": "OCIRepository", "name": "web"}}
    return flux("HelmRelease", **{**spec, **changes})


def oci(**changes: Any) -> dict[str, Any]:
    return flux("OCIRepository", **{"interval": "10m", "url": "oci://ghcr.io/acme/charts/web", **changes})


def kustomization(**changes: Any) -> dict[str, Any]:
    spec = {
        "interval": "10m",
        "path": "./deploy",
        "prune": True,
        "serviceAccountName": "deployer",
        "sourceRef": {"kind": "GitRepository", "name": "tenant-gitops"},
    }
    return flux("Kustomization", **{**spec, **changes})


def create(stack: Cluster, who: Subject, obj: dict[str, Any], namespace: str) -> Any:
    return stack.attempt(who, "CREATE", RESOURCES[obj["kind"]], copy.deepcopy(obj), namespace)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_a_release_with_a_kubeconfig_is_refused(stack: Cluster, who: Subject, namespace: str) -> None:
    for kube_config in ({"secretRef": {"name": "stolen", "key": "value"}}, {"configMapRef": {"name": "eks"}}):
        outcome = create(stack, who, release(kubeConfig=kube_config), namespace)
        assert outcome.denied_by("tenancy-flux", "may not set spec.kubeConfig"), outcome
    assert create(stack, who, release(), namespace).stopped_by is None


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
@pytest.mark.parametrize("provider", ["aws", "gcp", "azure"])
def test_sources_may_not_borrow_the_controllers_cloud_identity(
    stack: Cluster, who: Subject, namespace: str, provider: str
) -> None:
    helm_oci = flux("HelmRepository", interval="10m", type="oci", url="oci://ghcr.io/acme/charts")
    for source in (oci(), helm_oci):
        borrowed = copy.deepcopy(source)
        borrowed["spec"]["provider"] = provider
        outcome = create(stack, who, borrowed, namespace)
        assert outcome.denied_by("tenancy-flux", f"may not set spec.provider {provider}"), outcome
        for legit in (source, {**source, "spec": {**source["spec"], "provider": "generic"}}):
            assert create(stack, who, legit, namespace).stopped_by is None
    # Kinds the tenant roles do not write stop earlier.
    bucket = flux("Bucket", interval="10m", bucketName="other-tenant", endpoint="s3.amazonaws.com", provider=provider)
    assert create(stack, who, bucket, namespace).stopped_by == "rbac"


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
@pytest.mark.parametrize("account", ["vcluster", "workload", "default", None])
def test_a_release_runs_as_the_deployer_and_no_other_account(
    stack: Cluster, who: Subject, namespace: str, account: str | None
) -> None:
    other = release(serviceAccountName=account)
    if account is None:
        del other["spec"]["serviceAccountName"]
    outcome = create(stack, who, other, namespace)
    assert outcome.denied_by("tenancy-flux", "must set spec.serviceAccountName: deployer"), outcome


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_sources_of_another_namespace_are_refused(stack: Cluster, who: Subject, namespace: str) -> None:
    chart = {"chart": "web", "sourceRef": {"kind": "HelmRepository", "name": "charts", "namespace": VICTIM}}
    attacks = [
        release(chartRef={"kind": "OCIRepository", "name": "web", "namespace": VICTIM}),
        {**release(chart={"spec": chart}), "spec": {**release()["spec"], "chart": {"spec": chart}}},
    ]
    del attacks[1]["spec"]["chartRef"]
    for attack in attacks:
        outcome = create(stack, who, attack, namespace)
        assert outcome.denied_by("tenancy-flux", "may only use sources of its own namespace"), outcome
    own = release(chartRef={"kind": "OCIRepository", "name": "web", "namespace": namespace})
    assert create(stack, who, own, namespace).stopped_by is None


def kustomization_grant(namespace: str) -> list[dict[str, Any]]:
    """A stray grant (a future role): the deployer may write Kustomizations, Git sources and Buckets."""
    rules = [
        {"apiGroups": ["kustomize.toolkit.fluxcd.io"], "resources": ["kustomizations"], "verbs": ["create"]},
        {"apiGroups": ["source.toolkit.fluxcd.io"], "resources": ["gitrepositories", "buckets"], "verbs": ["create"]},
    ]
    return [
        {"kind": "Role", "metadata": {"name": "stray", "namespace": namespace}, "rules": rules},
        {
            "kind": "RoleBinding",
            "metadata": {"name": "stray", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "stray"},
            "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": namespace}],
        },
    ]


def test_kinds_tenants_do_not_write_stop_at_rbac_and_then_at_admission(
    any_stack_plan: ProgramRun, stack: Cluster
) -> None:
    assert create(stack, DEPLOYER, kustomization(), ACME_PROD).stopped_by == "rbac"
    granted = cluster(any_stack_plan, kustomization_grant(ACME_PROD))
    attacks = {
        "may not set spec.kubeConfig": kustomization(kubeConfig={"secretRef": {"name": "stolen"}}),
        "must name the keys of spec.decryption": kustomization(decryption={"provider": "sops"}),
        "must set spec.serviceAccountName": kustomization(serviceAccountName="vcluster"),
        "may only use sources of its own namespace": kustomization(
            sourceRef={"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}
        ),
    }
    for message, attack in attacks.items():
        assert create(granted, DEPLOYER, attack, ACME_PROD).denied_by("tenancy-flux", message), message
    legit = kustomization(decryption={"provider": "sops", "secretRef": {"name": "sops-age"}})
    assert create(granted, DEPLOYER, legit, ACME_PROD).stopped_by is None
    git = {"interval": "10m", "url": "https://dev.azure.com/acme/_git/app", "ref": {"branch": "main"}}
    bucket = {"interval": "10m", "bucketName": "acme", "endpoint": "s3.amazonaws.com"}
    for kind, spec, provider in (("GitRepository", git, "azure"), ("Bucket", bucket, "aws")):
        outcome = create(granted, DEPLOYER, flux(kind, **spec, provider=provider), ACME_PROD)
        assert outcome.denied_by("tenancy-flux", f"may not set spec.provider {provider}"), outcome
        assert create(granted, DEPLOYER, flux(kind, **spec, provider="generic"), ACME_PROD).stopped_by is None
    # A GitHub App reads its key from the tenant's own Secret, not from the controller.
    github = flux("GitRepository", **git, provider="github", secretRef={"name": "github-app"})
    assert create(granted, DEPLOYER, github, ACME_PROD).stopped_by is None


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_an_object_from_before_the_rule_can_still_be_finalized_and_deleted(
    stack: Cluster, who: Subject, namespace: str
) -> None:
    stored = release(kubeConfig={"secretRef": {"name": "stolen"}})
    finalized = copy.deepcopy(stored)
    finalized["metadata"]["finalizers"] = ["finalizers.fluxcd.io"]
    assert (
        stack.attempt(who, "UPDATE", HELM_RELEASES, finalized, namespace, old=copy.deepcopy(stored)).stopped_by is None
    )
    assert stack.attempt(who, "DELETE", HELM_RELEASES, None, namespace, old=copy.deepcopy(stored)).stopped_by is None
    # Changing its spec is a write like any other.
    changed = copy.deepcopy(stored)
    changed["spec"]["interval"] = "1m"
    outcome = stack.attempt(who, "UPDATE", HELM_RELEASES, changed, namespace, old=copy.deepcopy(stored))
    assert outcome.denied_by("tenancy-flux", "may not set spec.kubeConfig"), outcome


def rendered_flux(run: ProgramRun) -> list[dict[str, Any]]:
    return [o for o in kubernetes_objects(run) if o["kind"] in RESOURCES and o["metadata"].get("namespace")]


def test_every_flux_object_the_platform_renders_is_admitted(any_stack_plan: ProgramRun, stack: Cluster) -> None:
    """The platform writes them; those without a kubeConfig would pass from the tenant's deployer too,
    but a virtual cluster's release and its source, which only the platform writes (issue 43)."""
    objects = rendered_flux(any_stack_plan)
    kinds = {o["kind"] for o in objects}
    assert kinds >= {"HelmRelease", "OCIRepository", "HelmRepository", "GitRepository", "Kustomization"}, kinds
    assert any("kubeConfig" in o["spec"] for o in objects), "a virtual cluster's GitOps Kustomization"
    platform = platform_identity(stack.stack)
    for obj in objects:
        namespace, resource = obj["metadata"]["namespace"], RESOURCES[obj["kind"]]
        for operation, old in (("CREATE", None), ("UPDATE", copy.deepcopy(obj))):
            outcome = stack.attempt(platform, operation, resource, copy.deepcopy(obj), namespace, old=old)
            assert outcome.stopped_by is None, (obj["kind"], obj["metadata"]["name"], outcome)
        if "kubeConfig" in obj["spec"] or obj["kind"] in ("Kustomization", "GitRepository"):
            continue
        deployer = Subject("ServiceAccount", "deployer", namespace)
        outcome = stack.attempt(deployer, "CREATE", resource, copy.deepcopy(obj), namespace)
        installs_a_control_plane = obj["spec"].get("serviceAccountName") == INSTALLER_ACCOUNT or (
            obj["kind"] == "HelmRepository" and obj["metadata"]["name"] == CHART_SOURCE
        )
        if installs_a_control_plane:
            assert outcome.denied_by(RELEASE_POLICY), (obj["kind"], obj["metadata"]["name"], outcome)
            continue
        assert outcome.stopped_by is None, (obj["kind"], obj["metadata"]["name"], outcome)


# --- Red team round 8: the platform's GitOps objects under a stray grant ------------------------

GIT_REPOSITORIES = RESOURCES["GitRepository"]
STRAY = UserInfo("ops-bot@example.com", ("ops-bots", "system:authenticated"))
_SA = ("system:serviceaccounts", "system:authenticated")
SOURCE_CONTROLLER = UserInfo("system:serviceaccount:flux-system:source-controller", _SA)
KUSTOMIZE_CONTROLLER = UserInfo("system:serviceaccount:flux-system:kustomize-controller", _SA)
FLUX_FINALIZER = "finalizers.fluxcd.io"


def _gitops_grant() -> list[dict[str, Any]]:
    """Every write on Git sources and Kustomizations, with their status, for a stray group and for Flux's
    two controllers (the rendered plan holds no Flux RBAC: its chart renders it on the cluster)."""
    rules = [
        {
            "apiGroups": ["source.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io"],
            "resources": ["gitrepositories", "gitrepositories/status", "kustomizations", "kustomizations/status"],
            "verbs": ["create", "update", "patch", "delete"],
        }
    ]
    subjects = [{"kind": "Group", "name": "ops-bots"}] + [
        {"kind": "User", "name": who.name} for who in (SOURCE_CONTROLLER, KUSTOMIZE_CONTROLLER)
    ]
    return [
        {"kind": "ClusterRole", "metadata": {"name": "stray-gitops"}, "rules": rules},
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "stray-gitops"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "stray-gitops"},
            "subjects": subjects,
        },
    ]


@pytest.fixture(scope="module")
def granted_gitops(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan, _gitops_grant())


def gitops_objects(run: ProgramRun) -> list[dict[str, Any]]:
    """The platform's `tenant-gitops` GitRepository and Kustomization of every tenant environment."""
    return [o for o in rendered_flux(run) if o["metadata"]["name"] == GITOPS_NAME]


def _changed(obj: dict[str, Any], change: str) -> dict[str, Any]:
    """`obj` (with Flux's finalizer) after one of a stray's changes."""
    changed = copy.deepcopy(obj)
    if change == "spec":
        field = "url" if obj["kind"] == "GitRepository" else "path"
        changed["spec"][field] = "https://git.example.org/evil.git" if field == "url" else "./evil"
    elif change == "finalizer":
        changed["metadata"]["finalizers"] = []
    else:
        del changed["metadata"]["labels"][PLATFORM_OWNED_KEY]
    return changed


def _finalized(obj: dict[str, Any]) -> dict[str, Any]:
    stored = copy.deepcopy(obj)
    stored["metadata"]["finalizers"] = [FLUX_FINALIZER]
    return stored


@pytest.mark.parametrize("change", ["spec", "finalizer", "label"])
def test_the_platforms_gitops_objects_are_locked(granted_gitops: Cluster, change: str) -> None:
    """A stray grant repointing the source (the repository then applies as the deployer, or inside a
    virtual cluster as its admin), deleting the Kustomization (Flux prunes everything it applied) or
    taking its finalizer (the deletion then skips the prune's bookkeeping), or the label off either."""
    objects = gitops_objects(granted_gitops.run)
    assert {o["kind"] for o in objects} == {"GitRepository", "Kustomization"}, objects
    for obj in objects:
        assert obj["metadata"]["labels"][PLATFORM_OWNED_KEY] == "true", obj["metadata"]
        namespace, resource, stored = obj["metadata"]["namespace"], RESOURCES[obj["kind"]], _finalized(obj)
        for verb in ("update", "patch"):
            outcome = granted_gitops.attempt(
                STRAY, "UPDATE", resource, _changed(stored, change), namespace, old=copy.deepcopy(stored), verb=verb
            )
            assert outcome.denied_by("tenancy-platform-owned"), (obj["kind"], namespace, outcome)
        outcome = granted_gitops.attempt(STRAY, "DELETE", resource, None, namespace, old=copy.deepcopy(stored))
        assert outcome.denied_by("tenancy-platform-owned"), (obj["kind"], namespace, outcome)
        # The tenant's roles read them only.
        deployer = Subject("ServiceAccount", "deployer", namespace)
        outcome = granted_gitops.attempt(deployer, "UPDATE", resource, _changed(stored, change), namespace, old=stored)
        assert outcome.stopped_by == "rbac", outcome


def test_flux_keeps_reconciling_the_platforms_gitops_objects(granted_gitops: Cluster) -> None:
    """The twins: each object's own Flux controller adds and removes its finalizer and writes its status;
    the platform changes and deletes them; a Git source of the stray's own is not the lock's."""
    platform = platform_identity(granted_gitops.stack)
    for obj in gitops_objects(granted_gitops.run):
        namespace, resource = obj["metadata"]["namespace"], RESOURCES[obj["kind"]]
        own, other = (
            (SOURCE_CONTROLLER, KUSTOMIZE_CONTROLLER)
            if obj["kind"] == "GitRepository"
            else (KUSTOMIZE_CONTROLLER, SOURCE_CONTROLLER)
        )
        for new, old in ((_finalized(obj), obj), (obj, _finalized(obj))):
            outcome = granted_gitops.attempt(
                own, "UPDATE", resource, copy.deepcopy(new), namespace, old=copy.deepcopy(old), verb="patch"
            )
            assert outcome.stopped_by is None, (obj["kind"], outcome.decision.denials)
            # Not another group's controller, and not with anything else changed.
            outcome = granted_gitops.attempt(
                other, "UPDATE", resource, copy.deepcopy(new), namespace, old=copy.deepcopy(old)
            )
            assert outcome.denied_by("tenancy-platform-owned"), (obj["kind"], outcome)
        sneaky = _changed(_finalized(obj), "spec")
        outcome = granted_gitops.attempt(own, "UPDATE", resource, sneaky, namespace, old=copy.deepcopy(obj))
        assert outcome.denied_by("tenancy-platform-owned"), (obj["kind"], outcome)
        reported = _finalized(obj) | {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        outcome = granted_gitops.attempt(
            own, "UPDATE", resource, reported, namespace, old=_finalized(obj), subresource="status"
        )
        assert outcome.stopped_by is None, (obj["kind"], outcome.decision.denials)
        changed = _changed(obj, "spec")
        assert granted_gitops.attempt(platform, "UPDATE", resource, changed, namespace, old=obj).stopped_by is None
        assert granted_gitops.attempt(platform, "DELETE", resource, None, namespace, old=obj).stopped_by is None
    mine = flux("GitRepository", interval="10m", url="https://git.example.org/acme/app.git", ref={"branch": "main"})
    outcome = granted_gitops.attempt(STRAY, "CREATE", GIT_REPOSITORIES, copy.deepcopy(mine), ACME_PROD)
    assert outcome.stopped_by is None and "tenancy-platform-owned" not in outcome.decision.applied, outcome
    moved = _changed(mine, "spec")
    outcome = granted_gitops.attempt(STRAY, "UPDATE", GIT_REPOSITORIES, moved, ACME_PROD, old=mine)
    assert outcome.stopped_by is None, outcome.decision.denials
