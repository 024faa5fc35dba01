"""The control plane's pod template is the platform's (issue 43, item 2b): every way to change it,
by every identity of the threat model, each beside its legitimate twin.

The control plane pod runs as the syncer's account, so whoever changes what it is made of writes as
the syncer. What it is made of: the StatefulSet `vcluster` (and its status and ControllerRevisions),
the config Secret and CoreDNS's ConfigMap the chart renders, Helm's records of the release, the
HelmRelease naming the installer account, its HelmRepository and HelmChart, and the running pod
itself. Each request is played through RBAC over the rendered roles and bindings, then the rendered
admission bundle with the real CEL engine (tests/admission/layers.py), on dev, prod and prod-aws.
UPDATE and PATCH reach admission alike (a patch arrives as an UPDATE of the patched object); both
are played, with the RBAC verb each needs.

Identities: the tenant's deployer and admins, the syncer, a workload pod's account, the preview
identity, a stray identity granted every write on these kinds (the second-lock promise), and the
legitimate writers: the installer (helm-controller impersonating it), the platform, the StatefulSet
controller, the garbage collector, helm-controller and source-controller. Controllers are given
their rights by a planted grant that is not `system:masters` (a platform group, which every lock
lets through and would make the twins prove nothing).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.admission.rules.vcluster_claims import VOLUME_BINDER
from components.admission.rules.vcluster_control_plane import CONTROL_PLANE_POLICY
from components.admission.rules.vcluster_release import RELEASE_POLICY
from components.admission.rules.vcluster_selector import SELECTOR_POLICY
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.vcluster.objects import CHART_SOURCE, CONTROL_PLANE_KEY
from components.vcluster.values import (
    CERTS_SECRET,
    CONFIG_SECRET,
    CONTROL_PLANE_REPLICAS,
    CONTROL_PLANE_SELECTOR,
    COREDNS_CONFIG_MAP,
    INSTALLER_ACCOUNT,
    KUBECONFIG_SECRET,
    RELEASE_SECRET_PREFIX,
    SYNCER_ACCOUNT,
    WORKLOAD_ACCOUNT,
)
from tests.admission.layers import Cluster, Outcome, cluster, platform_identity, stack_policy
from tests.admission.test_preview_dry_run import preview, preview_rbac
from tests.rbac import Subject, UserInfo
from tests.support import kubernetes_objects, objects_of_kind
from tests.vcluster import chart_pods
from tests.vcluster.helpers import HARD, HARD_ADMIN, SOFT, hard_tenant, run_tenants, soft_tenant, stack_virtual_clusters

STATEFULSETS, REVISIONS = "apps/v1/statefulsets", "apps/v1/controllerrevisions"
SECRETS, CONFIG_MAPS, PODS = "/v1/secrets", "/v1/configmaps", "/v1/pods"
CLAIMS = "/v1/persistentvolumeclaims"
HELM_RELEASES = "helm.toolkit.fluxcd.io/v2/helmreleases"
HELM_REPOSITORIES, HELM_CHARTS = (
    "source.toolkit.fluxcd.io/v1/helmrepositories",
    "source.toolkit.fluxcd.io/v1/helmcharts",
)
_SA = ("system:serviceaccounts", "system:authenticated")

DEPLOYER = Subject("ServiceAccount", "deployer", HARD)
ADMINS = Subject("Group", HARD_ADMIN)
SYNCER = Subject("ServiceAccount", SYNCER_ACCOUNT, HARD)
WORKLOAD = Subject("ServiceAccount", WORKLOAD_ACCOUNT, HARD)
INSTALLER = Subject("ServiceAccount", INSTALLER_ACCOUNT, HARD)
STRAY = UserInfo("stray@example.com", ("strays", "system:authenticated"))
STATEFULSET_CONTROLLER = UserInfo("system:serviceaccount:kube-system:statefulset-controller", _SA)
GARBAGE_COLLECTOR = UserInfo("system:serviceaccount:kube-system:generic-garbage-collector", _SA)
HELM_CONTROLLER = UserInfo("system:serviceaccount:flux-system:helm-controller", _SA)
SOURCE_CONTROLLER = UserInfo("system:serviceaccount:flux-system:source-controller", _SA)
NAMESPACE_CONTROLLER = UserInfo("system:serviceaccount:kube-system:namespace-controller", _SA)
BINDER = UserInfo(VOLUME_BINDER, _SA)
# The HorizontalPodAutoscaler controller, with and without --use-service-account-credentials (the
# latter is every controller of kube-controller-manager, the ephemeral volume controller's included).
HPA_CONTROLLER = UserInfo("system:serviceaccount:kube-system:horizontal-pod-autoscaler", _SA)
KUBE_CONTROLLER_MANAGER = UserInfo("system:kube-controller-manager", ("system:authenticated",))
EPHEMERAL_VOLUME_CONTROLLER = UserInfo("system:serviceaccount:kube-system:ephemeral-volume-controller", _SA)
# Every identity of the tenant's side that can reach the host namespace at all.
TENANT_SIDE: list[Subject | UserInfo] = [DEPLOYER, ADMINS, SYNCER, WORKLOAD, STRAY]
_REGISTRIES = ["ghcr.io/example"]
_MIRROR = "ghcr.io/example/mirror"
_EVIL = "ghcr.io/example/evil-syncer:1.0.0"


def _grant() -> list[dict[str, Any]]:
    """Every verb on every resource for the stray group and the controllers (not system:masters)."""
    users = [
        STATEFULSET_CONTROLLER,
        GARBAGE_COLLECTOR,
        HELM_CONTROLLER,
        SOURCE_CONTROLLER,
        NAMESPACE_CONTROLLER,
        BINDER,
        HPA_CONTROLLER,
        KUBE_CONTROLLER_MANAGER,
        EPHEMERAL_VOLUME_CONTROLLER,
    ]
    subjects = [{"kind": "User", "name": u.name} for u in users] + [{"kind": "Group", "name": "strays"}]
    return [
        {
            "kind": "ClusterRole",
            "metadata": {"name": "test-everything"},
            "rules": [{"apiGroups": ["*"], "resources": ["*", "*/*"], "verbs": ["*"]}],
        },
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "test-everything"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "test-everything"},
            "subjects": subjects,
        },
    ]


@pytest.fixture(scope="module", params=["dev", "prod", "prod-aws"])
def host(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    stack = str(request.param)
    policy = stack_policy(stack, allowedRegistries=_REGISTRIES)
    mirror = stack_virtual_clusters(stack, imageRegistry=_MIRROR)
    run = run_tenants(
        tmp_path_factory.mktemp(stack), hard_tenant(), soft_tenant(), stack=stack, policy=policy, virtualClusters=mirror
    )
    return cluster(run, _grant() + preview_rbac(stack))


# --- The objects, as the chart and the platform render them -------------------------------------


def release(host: Cluster) -> dict[str, Any]:
    [found] = [r for r in objects_of_kind(host.run, "HelmRelease", HARD) if r["metadata"]["name"] == "vcluster"]
    return copy.deepcopy(found)


def control_plane_pod(host: Cluster) -> dict[str, Any]:
    pod = chart_pods.control_plane_pod(release(host)["spec"]["values"], HARD, "vcluster")
    del pod["metadata"]["namespace"]
    return pod


def statefulset(host: Cluster) -> dict[str, Any]:
    """The StatefulSet `vcluster` as chart 0.20.0 renders it (the pod template of tests/vcluster/chart_pods.py)."""
    pod = control_plane_pod(host)
    labels = pod["metadata"]["labels"]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "vcluster", "labels": {**CONTROL_PLANE_SELECTOR, "heritage": "Helm"}},
        "spec": {
            "replicas": 1,
            "serviceName": "vcluster-headless",
            "selector": {"matchLabels": dict(CONTROL_PLANE_SELECTOR)},
            "template": {"metadata": {"labels": labels}, "spec": pod["spec"]},
        },
        "status": {"replicas": 1, "currentRevision": "vcluster-5d8f7", "updateRevision": "vcluster-5d8f7"},
    }


def with_image(obj: dict[str, Any], image: str) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    spec = changed["spec"]["template"]["spec"] if changed["kind"] == "StatefulSet" else changed["spec"]
    spec["containers"][0]["image"] = image
    return changed


def revision(host: Cluster, image: str | None = None) -> dict[str, Any]:
    """A ControllerRevision as the StatefulSet controller writes it (its data: the template patch)."""
    template = statefulset(host)["spec"]["template"]
    if image is not None:
        template["spec"]["containers"][0]["image"] = image
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "vcluster", "uid": "u1", "controller": True}
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "vcluster-5d8f7", "labels": dict(CONTROL_PLANE_SELECTOR), "ownerReferences": [owner]},
        "data": {"spec": {"template": {"$patch": "replace", **template}}},
        "revision": 1,
    }


def secret(name: str, config: str = "controlPlane: {}", **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, **metadata},
        "type": "Opaque",
        "data": {"config.yaml": config},
    }


def config_map(name: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **metadata}, "data": {"k": "v"}}


def record(version: int, name: str | None = None) -> dict[str, Any]:
    """One of Helm's release records (helm v3 pkg/storage/driver/secrets.go newSecretsObject)."""
    labels = {"owner": "helm", "name": "vcluster", "status": "deployed", "version": str(version)}
    body = secret(name or f"{RELEASE_SECRET_PREFIX}{version}", labels=labels)
    body["type"] = "helm.sh/release.v1"
    body["data"] = {"release": "H4sIAAAAAAAA"}
    return body


def helm_chart(host: Cluster, version: str = "0.20.0") -> dict[str, Any]:
    """The HelmChart helm-controller writes from the HelmRelease's chart template."""
    chart = release(host)["spec"]["chart"]["spec"]
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmChart",
        "metadata": {"name": f"{HARD}-vcluster"},
        "spec": {**chart, "version": version},
    }


def source(host: Cluster) -> dict[str, Any]:
    [found] = [r for r in objects_of_kind(host.run, "HelmRepository", HARD) if r["metadata"]["name"] == CHART_SOURCE]
    return copy.deepcopy(found)


def refused(outcome: Outcome, policy: str) -> bool:
    """Stopped: by RBAC (the identity lacks the verb), or by `policy` in admission."""
    return outcome.stopped_by == "rbac" or outcome.denied_by(policy)


def admitted(outcome: Outcome) -> bool:
    return outcome.stopped_by is None


# --- The StatefulSet --------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["update", "patch"])
def test_no_tenant_identity_changes_the_control_planes_template(host: Cluster, verb: str) -> None:
    """Another image in the template: the StatefulSet controller's next vcluster-0 would run it as the syncer."""
    old = statefulset(host)
    for who in TENANT_SIDE:
        outcome = host.attempt(
            who, "UPDATE", STATEFULSETS, with_image(old, _EVIL), HARD, old=copy.deepcopy(old), verb=verb
        )
        assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    # The deployer holds the RBAC verb: admission is what stops it.
    outcome = host.attempt(DEPLOYER, "UPDATE", STATEFULSETS, with_image(old, _EVIL), HARD, old=old, verb=verb)
    assert outcome.denied_by(CONTROL_PLANE_POLICY, "part of the virtual cluster's control plane"), outcome


@pytest.mark.parametrize("verb", ["update", "patch"])
def test_the_installer_upgrades_the_control_plane(host: Cluster, verb: str) -> None:
    """helm-controller upgrading the release (a three-way patch) or correcting drift (server-side apply)."""
    old = statefulset(host)
    upgraded = with_image(old, f"{_MIRROR}/loft-sh/vcluster-pro:0.20.1")
    outcome = host.attempt(INSTALLER, "UPDATE", STATEFULSETS, upgraded, HARD, old=old, verb=verb)
    assert admitted(outcome), outcome.decision.denials
    assert CONTROL_PLANE_POLICY in outcome.decision.applied


def test_what_the_installer_writes_is_still_judged_when_the_pod_is_made(host: Cluster) -> None:
    """The lock is who writes the template; the pod the StatefulSet controller makes from it is still
    judged by every host rule (an image from no allowed registry is refused there)."""
    old = statefulset(host)
    unlisted = with_image(old, "docker.io/x/y:1")
    assert admitted(host.attempt(INSTALLER, "UPDATE", STATEFULSETS, copy.deepcopy(unlisted), HARD, old=old))
    pod = control_plane_pod(host)
    pod["spec"] = unlisted["spec"]["template"]["spec"]
    assert host.attempt(STATEFULSET_CONTROLLER, "CREATE", PODS, pod, HARD).denied_by("tenancy-workloads")


def test_no_tenant_identity_creates_or_deletes_the_control_planes_statefulset(host: Cluster) -> None:
    """Created before the release (Helm adopts an object carrying its annotations, merging into it), or
    deleted to be created again: both are the template by another way."""
    body = with_image(statefulset(host), _EVIL)
    body["metadata"]["annotations"] = {"meta.helm.sh/release-name": "vcluster", "meta.helm.sh/release-namespace": HARD}
    for who in TENANT_SIDE:
        assert refused(host.attempt(who, "CREATE", STATEFULSETS, copy.deepcopy(body), HARD), CONTROL_PLANE_POLICY), who
        assert refused(
            host.attempt(who, "DELETE", STATEFULSETS, None, HARD, old=statefulset(host)), CONTROL_PLANE_POLICY
        )
    assert host.attempt(DEPLOYER, "CREATE", STATEFULSETS, body, HARD).denied_by(CONTROL_PLANE_POLICY)
    assert admitted(host.attempt(INSTALLER, "CREATE", STATEFULSETS, statefulset(host), HARD))
    assert admitted(host.attempt(INSTALLER, "DELETE", STATEFULSETS, None, HARD, old=statefulset(host)))
    assert admitted(host.attempt(GARBAGE_COLLECTOR, "DELETE", STATEFULSETS, None, HARD, old=statefulset(host)))


def test_the_tenants_own_statefulsets_are_not_the_rules_business(host: Cluster) -> None:
    mine = statefulset(host)
    mine["metadata"]["name"] = "web"
    mine["spec"]["template"]["spec"]["serviceAccountName"] = "default"
    outcome = host.attempt(DEPLOYER, "UPDATE", STATEFULSETS, with_image(mine, _EVIL), HARD, old=copy.deepcopy(mine))
    assert CONTROL_PLANE_POLICY not in outcome.decision.applied and admitted(outcome), outcome
    # In a namespace that is no virtual cluster's, the names are reserved all the same.
    assert host.attempt(Subject("Group", "idp:soft-admins"), "CREATE", STATEFULSETS, statefulset(host), SOFT).denied_by(
        CONTROL_PLANE_POLICY
    )


def scale(replicas: int) -> dict[str, Any]:
    """The `scale` of the StatefulSet `vcluster` (what `kubectl scale` and the autoscalers write)."""
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "vcluster"},
        "spec": {"replicas": replicas},
    }


@pytest.mark.parametrize("verb", ["update", "patch"])
def test_the_control_plane_scales_to_zero_or_one_only(host: Cluster, verb: str) -> None:
    """vCluster v0.20.0 elects a leader only when the release asks for more than one replica: a second
    replica is a second syncer, unelected, deleting what the first writes (red team round 7)."""
    for who in [*TENANT_SIDE, HPA_CONTROLLER, KUBE_CONTROLLER_MANAGER, STATEFULSET_CONTROLLER]:
        outcome = host.attempt(
            who, "UPDATE", STATEFULSETS, scale(2), HARD, old=scale(1), subresource="scale", verb=verb
        )
        assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    for who in (DEPLOYER, HPA_CONTROLLER, KUBE_CONTROLLER_MANAGER):
        outcome = host.attempt(
            who, "UPDATE", STATEFULSETS, scale(2), HARD, old=scale(1), subresource="scale", verb=verb
        )
        assert outcome.denied_by(CONTROL_PLANE_POLICY, "it scales to 0 or 1 only"), (who, outcome)
    # Nor through the StatefulSet's own spec.replicas, by the collectors' identity either.
    two = statefulset(host)
    two["spec"]["replicas"] = 2
    outcome = host.attempt(KUBE_CONTROLLER_MANAGER, "UPDATE", STATEFULSETS, two, HARD, old=statefulset(host), verb=verb)
    assert outcome.denied_by(CONTROL_PLANE_POLICY, "it scales to 0 or 1 only"), outcome
    # The twins: stopped and started again by the tenant; any count by the platform and its release.
    for replicas, before in ((0, 1), (1, 0)):
        outcome = host.attempt(
            DEPLOYER, "UPDATE", STATEFULSETS, scale(replicas), HARD, old=scale(before), subresource="scale", verb=verb
        )
        assert admitted(outcome), outcome.decision.denials
        assert CONTROL_PLANE_POLICY in outcome.decision.applied
    three = scale(3)
    platform = platform_identity(host.stack)
    outcome = host.attempt(platform, "UPDATE", STATEFULSETS, three, HARD, old=scale(1), subresource="scale", verb=verb)
    assert admitted(outcome), outcome.decision.denials
    assert admitted(host.attempt(INSTALLER, "UPDATE", STATEFULSETS, two, HARD, old=statefulset(host), verb=verb))
    # The tenant's own StatefulSets scale as they like.
    mine = scale(5)
    mine["metadata"]["name"] = "web"
    outcome = host.attempt(
        DEPLOYER, "UPDATE", STATEFULSETS, mine, HARD, old=scale(1) | {"metadata": {"name": "web"}}, subresource="scale"
    )
    assert admitted(outcome) and CONTROL_PLANE_POLICY not in outcome.decision.applied, outcome


def test_the_release_sets_the_replica_count_the_lock_holds(host: Cluster) -> None:
    """The count tenants may return to is the release's own, named in its values."""
    values = release(host)["spec"]["values"]["controlPlane"]["statefulSet"]
    assert values["highAvailability"]["replicas"] == CONTROL_PLANE_REPLICAS == 1


AUTOSCALERS = {
    "hpa": ("autoscaling/v2/horizontalpodautoscalers", "HorizontalPodAutoscaler", "autoscaling/v2", "scaleTargetRef"),
    "keda": ("keda.sh/v1alpha1/scaledobjects", "ScaledObject", "keda.sh/v1alpha1", "scaleTargetRef"),
    "vpa": (
        "autoscaling.k8s.io/v1/verticalpodautoscalers",
        "VerticalPodAutoscaler",
        "autoscaling.k8s.io/v1",
        "targetRef",
    ),
}


def autoscaler(kind: str, target: str, target_kind: str = "StatefulSet") -> dict[str, Any]:
    _, name, api_version, field = AUTOSCALERS[kind]
    spec: dict[str, Any] = {field: {"apiVersion": "apps/v1", "kind": target_kind, "name": target}}
    if kind == "hpa":
        spec |= {"minReplicas": 2, "maxReplicas": 3}
    return {"apiVersion": api_version, "kind": name, "metadata": {"name": "cp"}, "spec": spec}


@pytest.mark.parametrize("kind", sorted(AUTOSCALERS))
def test_no_tenant_identity_points_an_autoscaler_at_the_control_plane(host: Cluster, kind: str) -> None:
    """An autoscaler's writes come from its controller (which the scale lock holds to 0 or 1 as well);
    the object that aims it is refused first, with a message saying why."""
    resource = AUTOSCALERS[kind][0]
    for who in (DEPLOYER, STRAY):
        outcome = host.attempt(who, "CREATE", resource, autoscaler(kind, "vcluster"), HARD)
        assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    outcome = host.attempt(STRAY, "CREATE", resource, autoscaler(kind, "vcluster", "statefulset"), HARD)
    assert outcome.denied_by(CONTROL_PLANE_POLICY, "targets the StatefulSet vcluster"), outcome
    retargeted = host.attempt(
        STRAY, "UPDATE", resource, autoscaler(kind, "vcluster"), HARD, old=autoscaler(kind, "web"), verb="patch"
    )
    assert retargeted.denied_by(CONTROL_PLANE_POLICY), retargeted
    # The twins: the tenant's own workloads, a Deployment that happens to be named vcluster, the platform.
    for body in (autoscaler(kind, "web"), autoscaler(kind, "vcluster", "Deployment")):
        outcome = host.attempt(STRAY, "CREATE", resource, body, HARD)
        assert CONTROL_PLANE_POLICY not in outcome.decision.applied, outcome
    platform = platform_identity(host.stack)
    assert not host.attempt(platform, "CREATE", resource, autoscaler(kind, "vcluster"), HARD).denied_by(
        CONTROL_PLANE_POLICY
    )


def test_only_the_statefulset_controller_writes_the_status(host: Cluster) -> None:
    """`status.currentRevision` picks the revision pods below the current count are built from."""
    old = statefulset(host)
    moved = copy.deepcopy(old)
    moved["status"]["currentRevision"] = "vcluster-evil"
    for who in TENANT_SIDE:
        outcome = host.attempt(
            who, "UPDATE", STATEFULSETS, copy.deepcopy(moved), HARD, old=copy.deepcopy(old), subresource="status"
        )
        assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    assert host.attempt(STRAY, "UPDATE", STATEFULSETS, moved, HARD, old=old, subresource="status").denied_by(
        CONTROL_PLANE_POLICY
    )
    outcome = host.attempt(STATEFULSET_CONTROLLER, "UPDATE", STATEFULSETS, moved, HARD, old=old, subresource="status")
    assert admitted(outcome), outcome.decision.denials
    # The installer applies the chart, not the controller's status.
    assert host.attempt(INSTALLER, "UPDATE", STATEFULSETS, moved, HARD, old=old, subresource="status").stopped_by


def test_no_one_but_the_controller_writes_the_revisions_pods_are_built_from(host: Cluster) -> None:
    """A revision carrying the set's selector is adopted; during a rollout pods come from the current one."""
    for who in [*TENANT_SIDE, INSTALLER]:
        planted = host.attempt(who, "CREATE", REVISIONS, revision(host, _EVIL), HARD)
        assert refused(planted, CONTROL_PLANE_POLICY), (who, planted)
        removed = host.attempt(who, "DELETE", REVISIONS, None, HARD, old=revision(host))
        assert refused(removed, CONTROL_PLANE_POLICY), (who, removed)
    # Without the owner reference, the selector labels alone match (the controller adopts such orphans).
    orphan = revision(host, _EVIL)
    del orphan["metadata"]["ownerReferences"]
    assert host.attempt(STRAY, "CREATE", REVISIONS, orphan, HARD).denied_by(CONTROL_PLANE_POLICY)
    assert admitted(host.attempt(STATEFULSET_CONTROLLER, "CREATE", REVISIONS, revision(host), HARD))
    assert admitted(host.attempt(GARBAGE_COLLECTOR, "DELETE", REVISIONS, None, HARD, old=revision(host)))
    # The tenant's own StatefulSets' revisions are not the rule's.
    mine = revision(host)
    mine["metadata"] = {"name": "web-6c9f", "labels": {"app": "web"}}
    assert CONTROL_PLANE_POLICY not in host.attempt(STRAY, "CREATE", REVISIONS, mine, HARD).decision.applied


# --- What the syncer starts with: the config Secret and CoreDNS's manifests --------------------


def test_no_tenant_identity_rewrites_the_syncers_configuration(host: Cluster) -> None:
    """The whole values of the release (exportKubeConfig's server, the sync settings...) as the syncer reads them."""
    old = secret(CONFIG_SECRET)
    hostile = secret(CONFIG_SECRET, config="exportKubeConfig: {server: https://169.254.169.254}")
    for who in TENANT_SIDE:
        for operation, new, previous in [("UPDATE", hostile, old), ("CREATE", hostile, None), ("DELETE", None, old)]:
            outcome = host.attempt(
                who,
                operation,
                SECRETS,
                copy.deepcopy(new) if new else None,
                HARD,
                old=copy.deepcopy(previous) if previous else None,
            )
            assert refused(outcome, CONTROL_PLANE_POLICY), (who, operation, outcome)
    outcome = host.attempt(
        DEPLOYER, "UPDATE", SECRETS, copy.deepcopy(hostile), HARD, old=copy.deepcopy(old), verb="patch"
    )
    assert outcome.denied_by(CONTROL_PLANE_POLICY), outcome
    assert admitted(host.attempt(INSTALLER, "UPDATE", SECRETS, hostile, HARD, old=old, verb="patch"))


def test_the_syncer_keeps_its_bookkeeping_on_the_config_secret(host: Cluster) -> None:
    """vCluster v0.20.0 pkg/setup/config.go updateSecretAnnotations: the control plane does not start without it."""
    old = secret(CONFIG_SECRET, annotations={"meta.helm.sh/release-name": "vcluster"})
    noted = copy.deepcopy(old)
    noted["metadata"]["annotations"].update(
        {"vcluster.loft.sh/distro": "k8s", "vcluster.loft.sh/store": "embedded-database"}
    )
    assert admitted(host.attempt(SYNCER, "UPDATE", SECRETS, copy.deepcopy(noted), HARD, old=copy.deepcopy(old)))
    # The same door carries nothing else: data, another annotation, and the deployer.
    with_data = copy.deepcopy(noted)
    with_data["data"]["config.yaml"] = "exportKubeConfig: {server: https://169.254.169.254}"
    assert host.attempt(SYNCER, "UPDATE", SECRETS, with_data, HARD, old=copy.deepcopy(old)).denied_by(
        CONTROL_PLANE_POLICY
    )
    other = copy.deepcopy(noted)
    other["metadata"]["annotations"]["meta.helm.sh/release-name"] = "other"
    assert host.attempt(SYNCER, "UPDATE", SECRETS, other, HARD, old=copy.deepcopy(old)).denied_by(CONTROL_PLANE_POLICY)
    assert host.attempt(DEPLOYER, "UPDATE", SECRETS, noted, HARD, old=old).denied_by(CONTROL_PLANE_POLICY)


def test_no_tenant_identity_rewrites_corednss_manifests(host: Cluster) -> None:
    old = config_map(COREDNS_CONFIG_MAP)
    changed = config_map(COREDNS_CONFIG_MAP, annotations={"x": "y"})
    changed["data"] = {"coredns.yaml": "kind: Deployment"}
    for who in TENANT_SIDE:
        outcome = host.attempt(who, "UPDATE", CONFIG_MAPS, copy.deepcopy(changed), HARD, old=copy.deepcopy(old))
        assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    assert host.attempt(DEPLOYER, "UPDATE", CONFIG_MAPS, changed, HARD, old=old, verb="patch").denied_by(
        CONTROL_PLANE_POLICY
    )
    assert admitted(host.attempt(INSTALLER, "UPDATE", CONFIG_MAPS, changed, HARD, old=old))
    assert admitted(host.attempt(DEPLOYER, "CREATE", CONFIG_MAPS, config_map("settings"), HARD))


# --- Helm's records of the release ----------------------------------------------------------------


def test_no_tenant_identity_plants_or_rewrites_a_release_record(host: Cluster) -> None:
    """Helm rolls back to a record read by name, and drift correction applies the last record's manifest,
    found by label: a record of the tenant's would be applied as the installer."""
    for who in TENANT_SIDE:
        for planted in (record(9), record(9, name="innocent-looking")):
            assert refused(host.attempt(who, "CREATE", SECRETS, planted, HARD), CONTROL_PLANE_POLICY), (who, planted)
        outcome = host.attempt(who, "UPDATE", SECRETS, record(1) | {"data": {"release": "evil"}}, HARD, old=record(1))
        assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    # Taking the labels off a record (or putting them on) is matched through the old object too.
    unlabelled = record(1)
    unlabelled["metadata"]["name"] = "mine"
    unlabelled["metadata"]["labels"] = {}
    relabelled = host.attempt(DEPLOYER, "UPDATE", SECRETS, unlabelled, HARD, old=record(1, name="mine"))
    assert relabelled.denied_by(CONTROL_PLANE_POLICY), relabelled
    assert host.attempt(DEPLOYER, "CREATE", SECRETS, record(9), HARD).denied_by(CONTROL_PLANE_POLICY)
    # helm-controller, as the installer: a new record, the status of the last, and history pruning.
    assert admitted(host.attempt(INSTALLER, "CREATE", SECRETS, record(2), HARD))
    superseded = record(1)
    superseded["metadata"]["labels"]["status"] = "superseded"
    assert admitted(host.attempt(INSTALLER, "UPDATE", SECRETS, superseded, HARD, old=record(1)))
    assert admitted(host.attempt(INSTALLER, "DELETE", SECRETS, None, HARD, old=record(1)))


def test_the_tenants_own_releases_keep_their_records(host: Cluster) -> None:
    """A release of the tenant's own (its chart apps, applied as the deployer) under another name."""
    mine = record(1, name="sh.helm.release.v1.web.v1")
    mine["metadata"]["labels"]["name"] = "web"
    outcome = host.attempt(DEPLOYER, "CREATE", SECRETS, mine, HARD)
    assert admitted(outcome) and CONTROL_PLANE_POLICY not in outcome.decision.applied, outcome


# --- The Flux objects that install the release -------------------------------------------------


def test_the_release_is_applied_as_the_installer(host: Cluster) -> None:
    assert release(host)["spec"]["serviceAccountName"] == INSTALLER_ACCOUNT


@pytest.mark.parametrize(
    "change",
    [
        {"values": {"controlPlane": {"statefulSet": {"image": {"repository": "evil/syncer"}}}}},
        # Back to the deployer with the tenant's values: the release would be applied as the tenant.
        {"serviceAccountName": "deployer", "values": {}},
        {"suspend": True},
        {"postRenderers": [{"kustomize": {"images": [{"name": "loft-sh/vcluster-pro", "newName": "evil"}]}}]},
    ],
)
def test_no_tenant_identity_changes_the_release(host: Cluster, change: dict[str, Any]) -> None:
    old = release(host)
    new = copy.deepcopy(old)
    new["spec"].update(change)
    for who in TENANT_SIDE:
        for verb in ("update", "patch"):
            outcome = host.attempt(
                who, "UPDATE", HELM_RELEASES, copy.deepcopy(new), HARD, old=copy.deepcopy(old), verb=verb
            )
            assert refused(outcome, RELEASE_POLICY), (who, verb, outcome)
    assert host.attempt(DEPLOYER, "UPDATE", HELM_RELEASES, new, HARD, old=old, verb="patch").denied_by(RELEASE_POLICY)


def test_the_platform_changes_the_release_and_flux_keeps_its_finalizer(host: Cluster) -> None:
    old = release(host)
    bumped = copy.deepcopy(old)
    bumped["spec"]["chart"]["spec"]["version"] = "0.20.1"
    assert admitted(
        host.attempt(platform_identity(host.stack), "UPDATE", HELM_RELEASES, bumped, HARD, old=old, verb="patch")
    )
    finalized = release(host)
    finalized["metadata"]["finalizers"] = ["finalizers.fluxcd.io"]
    assert admitted(
        host.attempt(HELM_CONTROLLER, "UPDATE", HELM_RELEASES, finalized, HARD, old=release(host), verb="patch")
    )
    # A tenant asking for a reconcile (`flux reconcile helmrelease vcluster`): an annotation, spec unchanged.
    asked = release(host)
    asked["metadata"]["annotations"] = {**asked["metadata"]["annotations"], "reconcile.fluxcd.io/requestedAt": "now"}
    outcome = host.attempt(DEPLOYER, "UPDATE", HELM_RELEASES, asked, HARD, old=release(host), verb="patch")
    assert admitted(outcome), outcome.decision.denials


def test_no_tenant_identity_deletes_the_release_or_imitates_it(host: Cluster) -> None:
    """Deleting it uninstalls the control plane as the installer; another release naming the installer
    would be applied as it, with the tenant's chart and values."""
    imitation = release(host)
    imitation["metadata"] = {"name": "mine", "namespace": HARD}
    imitation["spec"]["values"] = {"controlPlane": {"statefulSet": {"image": {"repository": "evil/syncer"}}}}
    for who in TENANT_SIDE:
        assert refused(host.attempt(who, "DELETE", HELM_RELEASES, None, HARD, old=release(host)), RELEASE_POLICY), who
        assert refused(host.attempt(who, "CREATE", HELM_RELEASES, copy.deepcopy(imitation), HARD), RELEASE_POLICY), who
    outcome = host.attempt(DEPLOYER, "CREATE", HELM_RELEASES, imitation, HARD)
    assert outcome.denied_by(RELEASE_POLICY) and outcome.denied_by("tenancy-flux"), outcome
    # The tenant's own releases run as the deployer, as before.
    mine = copy.deepcopy(imitation)
    mine["spec"]["serviceAccountName"] = "deployer"
    outcome = host.attempt(DEPLOYER, "CREATE", HELM_RELEASES, mine, HARD)
    assert RELEASE_POLICY not in outcome.decision.applied and not outcome.denied_by("tenancy-flux"), outcome
    assert admitted(host.attempt(platform_identity(host.stack), "DELETE", HELM_RELEASES, None, HARD, old=release(host)))


def test_no_tenant_identity_points_the_chart_elsewhere(host: Cluster) -> None:
    """The HelmRepository's URL and the HelmChart helm-controller makes decide which chart the installer applies."""
    old = source(host)
    moved = copy.deepcopy(old)
    moved["spec"]["url"] = "https://charts.attacker.example"
    for who in TENANT_SIDE:
        outcome = host.attempt(
            who, "UPDATE", HELM_REPOSITORIES, copy.deepcopy(moved), HARD, old=copy.deepcopy(old), verb="patch"
        )
        assert refused(outcome, RELEASE_POLICY), (who, outcome)
        chart = helm_chart(host)
        other = copy.deepcopy(chart)
        other["spec"]["sourceRef"] = {"kind": "HelmRepository", "name": "mine"}
        outcome = host.attempt(who, "UPDATE", HELM_CHARTS, other, HARD, old=chart, verb="patch")
        assert refused(outcome, RELEASE_POLICY), (who, outcome)
    assert host.attempt(DEPLOYER, "UPDATE", HELM_REPOSITORIES, moved, HARD, old=old).denied_by(RELEASE_POLICY)
    # source-controller's finalizer, helm-controller's HelmChart, the platform's source.
    finalized = source(host)
    finalized["metadata"]["finalizers"] = ["finalizers.fluxcd.io"]
    assert admitted(host.attempt(SOURCE_CONTROLLER, "UPDATE", HELM_REPOSITORIES, finalized, HARD, old=source(host)))
    assert admitted(host.attempt(HELM_CONTROLLER, "CREATE", HELM_CHARTS, helm_chart(host), HARD))
    bumped = helm_chart(host, "0.20.1")
    assert admitted(
        host.attempt(HELM_CONTROLLER, "UPDATE", HELM_CHARTS, bumped, HARD, old=helm_chart(host), verb="patch")
    )
    assert admitted(host.attempt(platform_identity(host.stack), "UPDATE", HELM_REPOSITORIES, moved, HARD, old=old))
    assert host.attempt(STRAY, "CREATE", HELM_CHARTS, helm_chart(host), HARD).denied_by(RELEASE_POLICY)


def test_only_flux_writes_the_status_the_release_is_installed_from(host: Cluster) -> None:
    """helm-controller fetches the chart from the artifact URL and digest in the HelmChart's status,
    and reads where the release is stored from the HelmRelease's: each status is its controller's."""
    chart = helm_chart(host)
    served = chart | {
        "status": {"artifact": {"url": "http://source-controller.flux-system.svc/c.tgz", "digest": "sha256:a"}}
    }
    forged = chart | {"status": {"artifact": {"url": "http://attacker.example/c.tgz", "digest": "sha256:b"}}}
    for who in TENANT_SIDE:
        outcome = host.attempt(
            who, "UPDATE", HELM_CHARTS, copy.deepcopy(forged), HARD, old=copy.deepcopy(served), subresource="status"
        )
        assert refused(outcome, RELEASE_POLICY), (who, outcome)
    assert host.attempt(STRAY, "UPDATE", HELM_CHARTS, forged, HARD, old=served, subresource="status").denied_by(
        RELEASE_POLICY
    )
    # Not even the other Flux controller: the HelmChart's status is source-controller's.
    assert host.attempt(
        HELM_CONTROLLER, "UPDATE", HELM_CHARTS, forged, HARD, old=served, subresource="status"
    ).denied_by(RELEASE_POLICY)
    assert admitted(
        host.attempt(SOURCE_CONTROLLER, "UPDATE", HELM_CHARTS, served, HARD, old=chart, subresource="status")
    )
    old = release(host)
    moved = old | {"status": {"storageNamespace": SOFT}}
    assert host.attempt(STRAY, "UPDATE", HELM_RELEASES, moved, HARD, old=old, subresource="status").denied_by(
        RELEASE_POLICY
    )
    stored = old | {"status": {"storageNamespace": HARD}}
    assert admitted(host.attempt(HELM_CONTROLLER, "UPDATE", HELM_RELEASES, stored, HARD, old=old, subresource="status"))


def test_the_preview_dry_runs_the_release_and_writes_nothing(host: Cluster) -> None:
    """The preview is judged like the `up` it previews: its dry run of the platform's change passes."""
    old = release(host)
    bumped = copy.deepcopy(old)
    bumped["spec"]["chart"]["spec"]["version"] = "0.20.1"
    who = preview(host.stack)
    dry = host.attempt(
        who, "UPDATE", HELM_RELEASES, copy.deepcopy(bumped), HARD, old=copy.deepcopy(old), verb="patch", dry_run=True
    )
    assert admitted(dry), dry.decision.denials
    real = host.attempt(who, "UPDATE", HELM_RELEASES, bumped, HARD, old=old, verb="patch")
    assert real.denied_by("tenancy-preview-dry-run") and real.denied_by(RELEASE_POLICY), real
    # Nor may it write the control plane for real, whatever its role holds.
    real_write = host.attempt(
        who, "UPDATE", STATEFULSETS, with_image(statefulset(host), _EVIL), HARD, old=statefulset(host), verb="patch"
    )
    assert real_write.stopped_by is not None, real_write


# --- The running pod and the accounts -------------------------------------------------------------


@pytest.mark.parametrize("verb", ["update", "patch"])
def test_no_tenant_identity_changes_the_running_control_plane(host: Cluster, verb: str) -> None:
    """A pod's images are mutable: `kubectl set image pod/vcluster-0` would run the tenant's image as the syncer."""
    old = control_plane_pod(host)
    for who in TENANT_SIDE:
        outcome = host.attempt(who, "UPDATE", PODS, with_image(old, _EVIL), HARD, old=copy.deepcopy(old), verb=verb)
        assert refused(outcome, "tenancy-syncer-account"), (who, outcome)
    outcome = host.attempt(DEPLOYER, "UPDATE", PODS, with_image(old, _EVIL), HARD, old=copy.deepcopy(old), verb=verb)
    assert outcome.denied_by("tenancy-syncer-account", "its spec is the platform's StatefulSet template"), outcome


def test_no_debug_container_joins_the_control_plane(host: Cluster) -> None:
    """An ephemeral container may mount the pod's volumes, the syncer's token among them."""
    old = control_plane_pod(host)
    debugged = copy.deepcopy(old)
    debugged["spec"]["ephemeralContainers"] = [
        {
            "name": "debug",
            "image": f"{_MIRROR}/busybox:1.37.0",
            "imagePullPolicy": "Always",
            "volumeMounts": [{"name": "kube-api-access", "mountPath": "/t"}],
        }
    ]
    for who in [*TENANT_SIDE, STATEFULSET_CONTROLLER]:
        outcome = host.attempt(
            who,
            "UPDATE",
            PODS,
            copy.deepcopy(debugged),
            HARD,
            old=copy.deepcopy(old),
            subresource="ephemeralcontainers",
        )
        assert refused(outcome, "tenancy-syncer-account"), (who, outcome)
    stray = host.attempt(STRAY, "UPDATE", PODS, debugged, HARD, old=old, subresource="ephemeralcontainers")
    assert stray.denied_by("tenancy-syncer-account"), stray


def test_the_control_plane_pods_controllers_still_do_their_work(host: Cluster) -> None:
    old = control_plane_pod(host)
    # The StatefulSet controller labelling it with its revision (metadata only; a pod's spec is its template).
    relabelled = copy.deepcopy(old)
    relabelled["metadata"]["labels"] = {**relabelled["metadata"]["labels"], "controller-revision-hash": "vcluster-6b7c"}
    assert admitted(host.attempt(STATEFULSET_CONTROLLER, "UPDATE", PODS, relabelled, HARD, old=copy.deepcopy(old)))
    # Nor does the StatefulSet controller change the spec of a running pod.
    assert host.attempt(
        STATEFULSET_CONTROLLER, "UPDATE", PODS, with_image(old, _EVIL), HARD, old=copy.deepcopy(old)
    ).denied_by("tenancy-syncer-account")
    # The garbage collector orphaning it, a tenant labelling it: the spec is as it was.
    orphaned = copy.deepcopy(old)
    orphaned["metadata"]["ownerReferences"] = []
    assert admitted(
        host.attempt(GARBAGE_COLLECTOR, "UPDATE", PODS, orphaned, HARD, old=copy.deepcopy(old), verb="patch")
    )
    labelled = copy.deepcopy(old)
    labelled["metadata"]["labels"] = {**labelled["metadata"]["labels"], "team": "research"}
    assert admitted(host.attempt(DEPLOYER, "UPDATE", PODS, labelled, HARD, old=copy.deepcopy(old), verb="patch"))
    # Restarting it: the StatefulSet controller makes it again from the platform's template.
    assert admitted(host.attempt(DEPLOYER, "DELETE", PODS, None, HARD, old=old))


def on_own_claim(pod: dict[str, Any]) -> dict[str, Any]:
    """`pod` with its claims renamed to one of the tenant's own StatefulSet `web`."""
    changed = copy.deepcopy(pod)
    for volume in changed["spec"].get("volumes", []):
        if "persistentVolumeClaim" in volume:
            volume["persistentVolumeClaim"]["claimName"] = "data-web-0"
    return changed


def test_no_pod_runs_as_the_installer(host: Cluster) -> None:
    pod = copy.deepcopy(control_plane_pod(host))
    del pod["metadata"]["ownerReferences"]
    for field in ("serviceAccountName", "serviceAccount"):
        as_installer = copy.deepcopy(pod)
        as_installer["spec"].pop("serviceAccountName", None)
        as_installer["spec"][field] = INSTALLER_ACCOUNT
        for who in (DEPLOYER, SYNCER, STRAY):
            outcome = host.attempt(who, "CREATE", PODS, copy.deepcopy(as_installer), HARD)
            assert outcome.denied_by(
                "tenancy-syncer-account", f"no pod runs as the ServiceAccount {INSTALLER_ACCOUNT}"
            ), (
                who,
                outcome,
            )
    # The twin: the deployer's pod under an account of the tenant's (on a claim of its own: the control
    # plane's are its own pods' alone, test_no_other_pod_mounts_the_control_planes_volume; not the
    # deployer itself, test_no_pod_runs_as_the_deployer).
    mine = on_own_claim(pod)
    mine["spec"]["serviceAccountName"] = "ci"
    assert not host.attempt(DEPLOYER, "CREATE", PODS, mine, HARD).denied_by("tenancy-syncer-account")


def test_the_installer_holds_the_charts_kinds_and_nothing_more(host: Cluster) -> None:
    for resource, group in [("statefulsets", "apps"), ("services", ""), ("secrets", ""), ("configmaps", "")]:
        for verb in ("create", "get", "list", "patch", "update", "delete"):
            assert host.authz.allowed(INSTALLER, verb, resource, HARD, group=group), (verb, resource)
    for verb, resource, group in [
        ("create", "pods", ""),
        ("create", "pods/exec", ""),
        ("create", "serviceaccounts/token", ""),
        ("create", "rolebindings", "rbac.authorization.k8s.io"),
        ("update", "statefulsets/status", "apps"),
        ("create", "controllerrevisions", "apps"),
        ("patch", "helmreleases", "helm.toolkit.fluxcd.io"),
    ]:
        assert not host.authz.allowed(INSTALLER, verb, resource, HARD, group=group), (verb, resource)
    for namespace in (SOFT, "flux-system", "kube-system"):
        assert not host.authz.allowed(INSTALLER, "create", "secrets", namespace), namespace


@pytest.mark.parametrize("account", [INSTALLER_ACCOUNT, SYNCER_ACCOUNT])
def test_the_accounts_are_the_platforms(host: Cluster, account: str) -> None:
    """An annotation (a cloud identity) or a deletion and new account under the same name is the platform's to make."""
    [old] = [a for a in objects_of_kind(host.run, "ServiceAccount", HARD) if a["metadata"]["name"] == account]
    annotated = copy.deepcopy(old)
    annotated["metadata"]["annotations"] = {"iam.gke.io/gcp-service-account": "evil@example.iam.gserviceaccount.com"}
    for who in TENANT_SIDE:
        outcome = host.attempt(
            who, "UPDATE", "/v1/serviceaccounts", copy.deepcopy(annotated), HARD, old=copy.deepcopy(old)
        )
        assert refused(outcome, "tenancy-platform-owned"), (who, outcome)
        assert refused(
            host.attempt(who, "DELETE", "/v1/serviceaccounts", None, HARD, old=copy.deepcopy(old)),
            "tenancy-platform-owned",
        )
    assert host.attempt(DEPLOYER, "DELETE", "/v1/serviceaccounts", None, HARD, old=old).denied_by(
        "tenancy-platform-owned"
    )


def test_the_release_waits_for_the_installer(host: Cluster) -> None:
    """helm-controller impersonates the installer from its first reconcile (the upgrade that moves an
    existing release off the deployer included): its account and binding exist before the release.
    That the installer outlives the release when it goes: tests/vcluster/test_isolation_model.py."""
    resources = {r.name: r for r in host.run.resources}
    release_resource = resources["hard-dev-vcluster"]
    assert release_resource.type.endswith(":HelmRelease")
    installer = [resources["hard-dev-vcluster-installer-account"], resources["hard-dev-vcluster-installer"]]
    assert {r.urn for r in installer} <= set(release_resource.dependencies)


# --- The outside review's four doors: the certificates, the volume, owners, resize --------------


def certs(**data: str) -> dict[str, Any]:
    """The Secret vCluster v0.20.0 pkg/certs/ensure.go creates: every PKI file under its own key."""
    body = {"ca.crt": "Y2E=", "ca.key": "a2V5", "controller-manager.conf": "a3ViZWNvbmZpZw==", **data}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": CERTS_SECRET}, "type": "Opaque", "data": body}


# A kubeconfig whose user runs a command: the control plane would run it with the syncer's token.
_EXEC_KUBECONFIG = "dXNlcnM6IFt7bmFtZTogeCwgdXNlcjoge2V4ZWM6IHtjb21tYW5kOiAvYmluL3NofX19XQ=="


def test_no_tenant_identity_writes_the_control_planes_certificates(host: Cluster) -> None:
    """Every key of the Secret is written into /data/pki at each start: a kubeconfig of the tenant's
    choosing (an `exec` user) or the tenant's own CA would be the control plane's."""
    old, hostile = certs(), certs(**{"controller-manager.conf": _EXEC_KUBECONFIG})
    for who in [*TENANT_SIDE, INSTALLER]:
        for operation, new, previous in [("CREATE", hostile, None), ("UPDATE", hostile, old), ("DELETE", None, old)]:
            if who == SYNCER and operation != "DELETE":
                continue
            for verb in ("update", "patch") if operation == "UPDATE" else (None,):
                outcome = host.attempt(
                    who,
                    operation,
                    SECRETS,
                    copy.deepcopy(new) if new else None,
                    HARD,
                    old=copy.deepcopy(previous) if previous else None,
                    verb=verb,
                )
                assert refused(outcome, CONTROL_PLANE_POLICY), (who, operation, verb, outcome)
    # The deployer and the installer hold the RBAC verbs: admission is what stops them.
    for who in (DEPLOYER, INSTALLER):
        outcome = host.attempt(who, "UPDATE", SECRETS, copy.deepcopy(hostile), HARD, old=copy.deepcopy(old))
        assert outcome.denied_by(CONTROL_PLANE_POLICY, f"Secret {CERTS_SECRET} holds the virtual cluster's keys"), (
            who,
            outcome,
        )
    assert host.attempt(DEPLOYER, "CREATE", SECRETS, copy.deepcopy(hostile), HARD).denied_by(CONTROL_PLANE_POLICY)
    # Reserved where there is no virtual cluster yet: the release would find it at its first start.
    soft_admins = Subject("Group", "idp:soft-admins")
    assert host.attempt(soft_admins, "CREATE", SECRETS, hostile, SOFT).denied_by(CONTROL_PLANE_POLICY)


def test_the_syncer_writes_its_certificates_and_the_collectors_remove_them(host: Cluster) -> None:
    """pkg/certs/ensure.go: created at the first start, the API server's certificate and the
    kubeconfigs' servers rewritten on a later one; the garbage collector and the namespace
    controller delete it with its owner or its namespace; the platform may do anything."""
    assert admitted(host.attempt(SYNCER, "CREATE", SECRETS, certs(), HARD))
    rewritten = certs(**{"apiserver.crt": "bmV3", "apiserver.key": "bmV3"})
    assert admitted(host.attempt(SYNCER, "UPDATE", SECRETS, rewritten, HARD, old=certs()))
    for collector in (GARBAGE_COLLECTOR, NAMESPACE_CONTROLLER, platform_identity(host.stack)):
        assert admitted(host.attempt(collector, "DELETE", SECRETS, None, HARD, old=certs())), collector


def test_reading_the_certificates_gives_no_one_more_than_they_hold(host: Cluster) -> None:
    """Admission cannot guard reads; RBAC does. The tenant's groups (viewers of the host plus the
    access role, which names the kubeconfig Secret only) and a workload pod's account cannot read it.
    Whoever can (the deployer, the syncer, the installer, by their Secret rights) can read the
    kubeconfig Secret too, which is the same virtual cluster's admin: the certificates reach nothing
    on the host (the syncer's host identity is its pod's token, not in the Secret)."""
    for who in (ADMINS, WORKLOAD, Subject("Group", "idp:hard-members")):
        assert not host.authz.allowed(who, "get", "secrets", HARD, name=CERTS_SECRET), who
    readers = [
        who
        for who in (DEPLOYER, SYNCER, INSTALLER)
        if host.authz.allowed(who, "get", "secrets", HARD, name=CERTS_SECRET)
    ]
    assert readers, "the model must see the Secret rights of the deployer, the syncer and the installer"
    for who in readers:
        assert host.authz.allowed(who, "get", "secrets", HARD, name=KUBECONFIG_SECRET), who


def claim(host: Cluster, ordinal: int = 0, **spec: Any) -> dict[str, Any]:
    """A claim of the StatefulSet's template `data` (chart 0.20.0 _persistence.tpl), on the platform's class."""
    persistence = release(host)["spec"]["values"]["controlPlane"]["statefulSet"]["persistence"]["volumeClaim"]
    body = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": persistence["storageClass"],
        "resources": {"requests": {"storage": persistence["size"]}},
        **spec,
    }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"data-vcluster-{ordinal}", "labels": dict(CONTROL_PLANE_SELECTOR)},
        "spec": body,
    }


def test_no_tenant_identity_plants_or_swaps_the_control_planes_volume(host: Cluster) -> None:
    """The StatefulSet controller uses an existing claim of that name as it is: a volume of the
    tenant's with its own /data/pki is the control plane's PKI when the Secret is absent."""
    planted = claim(host, volumeName="pv-of-the-tenants")
    for who in [*TENANT_SIDE, INSTALLER]:
        for ordinal in (0, 1):
            outcome = host.attempt(
                who, "CREATE", CLAIMS, copy.deepcopy(planted) | {"metadata": claim(host, ordinal)["metadata"]}, HARD
            )
            assert refused(outcome, CONTROL_PLANE_POLICY), (who, ordinal, outcome)
        assert refused(host.attempt(who, "DELETE", CLAIMS, None, HARD, old=claim(host)), CONTROL_PLANE_POLICY), who
        swapped = host.attempt(
            who, "UPDATE", CLAIMS, claim(host, volumeName="pv-of-the-tenants"), HARD, old=claim(host)
        )
        assert refused(swapped, CONTROL_PLANE_POLICY), (who, swapped)
    # The deployer and the syncer hold claim rights: admission is what stops them.
    for who in (DEPLOYER, SYNCER):
        outcome = host.attempt(who, "CREATE", CLAIMS, copy.deepcopy(planted), HARD)
        assert outcome.denied_by(CONTROL_PLANE_POLICY, "only the StatefulSet controller creates it"), (who, outcome)
    # A dangling owner: the garbage collector would delete the claim.
    owned = claim(host)
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "x"}]
    for verb in ("update", "patch"):
        outcome = host.attempt(DEPLOYER, "UPDATE", CLAIMS, copy.deepcopy(owned), HARD, old=claim(host), verb=verb)
        assert outcome.denied_by(CONTROL_PLANE_POLICY), outcome
    # The status subresource keeps a claim's metadata (only its spec is restored): the same owner there.
    outcome = host.attempt(STRAY, "UPDATE", CLAIMS, copy.deepcopy(owned), HARD, old=claim(host), subresource="status")
    assert outcome.denied_by(CONTROL_PLANE_POLICY), outcome
    assert host.attempt(Subject("Group", "idp:soft-admins"), "CREATE", CLAIMS, claim(host), SOFT).denied_by(
        CONTROL_PLANE_POLICY
    )


def test_the_controllers_make_bind_and_collect_the_control_planes_volume(host: Cluster) -> None:
    assert admitted(host.attempt(STATEFULSET_CONTROLLER, "CREATE", CLAIMS, claim(host), HARD))
    # The retention policy's owner references (stateful_pod_control.go UpdateClaim).
    retained = claim(host)
    retained["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "vcluster", "uid": "u1"}
    ]
    assert admitted(host.attempt(STATEFULSET_CONTROLLER, "UPDATE", CLAIMS, retained, HARD, old=claim(host)))
    # The binder binds it; the binder's, scheduler's and provisioner's annotations come from anyone.
    assert admitted(host.attempt(BINDER, "UPDATE", CLAIMS, claim(host, volumeName="pvc-1234"), HARD, old=claim(host)))
    noted = claim(host)
    noted["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": "node-1"}
    assert admitted(host.attempt(STRAY, "UPDATE", CLAIMS, noted, HARD, old=claim(host)))
    bound = claim(host)
    bound["status"] = {"phase": "Bound"}
    assert admitted(host.attempt(BINDER, "UPDATE", CLAIMS, bound, HARD, old=claim(host), subresource="status"))
    for collector in (GARBAGE_COLLECTOR, NAMESPACE_CONTROLLER, platform_identity(host.stack)):
        assert admitted(host.attempt(collector, "DELETE", CLAIMS, None, HARD, old=claim(host))), collector
    # The tenant's own claims, even of a StatefulSet's template `data`, are not the rule's.
    mine = claim(host)
    mine["metadata"] = {"name": "data-web-0"}
    outcome = host.attempt(STRAY, "CREATE", CLAIMS, mine, HARD)
    assert CONTROL_PLANE_POLICY not in outcome.decision.applied, outcome


@pytest.mark.parametrize("kind", ["release", "source"])
def test_no_dangling_owner_or_lost_finalizer_passes_as_an_unchanged_spec(host: Cluster, kind: str) -> None:
    """The garbage collector deletes an object whose owner is gone (helm-controller then uninstalls);
    without Flux's finalizer the platform's deletion skips the uninstall."""
    resource, read = (HELM_RELEASES, release) if kind == "release" else (HELM_REPOSITORIES, source)
    old = read(host)
    old["metadata"]["finalizers"] = ["finalizers.fluxcd.io"]
    owned = copy.deepcopy(old)
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "x"}]
    unfinalized = copy.deepcopy(old)
    unfinalized["metadata"]["finalizers"] = []
    for changed in (owned, unfinalized):
        for who in TENANT_SIDE:
            for verb in ("update", "patch"):
                outcome = host.attempt(
                    who, "UPDATE", resource, copy.deepcopy(changed), HARD, old=copy.deepcopy(old), verb=verb
                )
                assert refused(outcome, RELEASE_POLICY), (who, verb, outcome)
        denied = host.attempt(DEPLOYER, "UPDATE", resource, copy.deepcopy(changed), HARD, old=copy.deepcopy(old))
        assert denied.denied_by(RELEASE_POLICY), denied
    # The twins: the kind's Flux controller removing its finalizer, the platform, a reconcile request.
    flux = HELM_CONTROLLER if kind == "release" else SOURCE_CONTROLLER
    assert admitted(host.attempt(flux, "UPDATE", resource, copy.deepcopy(unfinalized), HARD, old=copy.deepcopy(old)))
    assert admitted(host.attempt(platform_identity(host.stack), "UPDATE", resource, owned, HARD, old=old))
    asked = copy.deepcopy(old)
    asked["metadata"]["annotations"] = {
        **asked["metadata"].get("annotations", {}),
        "reconcile.fluxcd.io/requestedAt": "1",
    }
    assert admitted(host.attempt(DEPLOYER, "UPDATE", resource, asked, HARD, old=old, verb="patch"))


def _resized(pod: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(pod)
    changed["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1m"}, "limits": {"memory": "8Mi"}}
    return changed


def test_no_one_resizes_the_running_control_plane(host: Cluster) -> None:
    """`pods/resize` keeps the containers' resources (k8s.io/kubernetes v1.36.3 podResizeStrategy):
    a stray grant would starve the control plane."""
    old = control_plane_pod(host)
    for who in [*TENANT_SIDE, STATEFULSET_CONTROLLER]:
        outcome = host.attempt(
            who, "UPDATE", PODS, _resized(old), HARD, old=copy.deepcopy(old), subresource="resize", verb="patch"
        )
        assert refused(outcome, "tenancy-syncer-account"), (who, outcome)
    stray = host.attempt(STRAY, "UPDATE", PODS, _resized(old), HARD, old=old, subresource="resize", verb="patch")
    assert stray.denied_by("tenancy-syncer-account", "through resize"), stray
    # The twin: resizing a pod of the tenant's own is not the rule's.
    mine = copy.deepcopy(control_plane_pod(host))
    mine["metadata"]["name"] = "web-0"
    mine["spec"]["serviceAccountName"] = "default"
    del mine["metadata"]["ownerReferences"]
    outcome = host.attempt(STRAY, "UPDATE", PODS, _resized(mine), HARD, old=mine, subresource="resize", verb="patch")
    assert not outcome.denied_by("tenancy-syncer-account"), outcome


def test_no_other_pod_mounts_the_control_planes_volume(host: Cluster) -> None:
    """A pod of the tenant's mounting `data-vcluster-0` would write the control plane's datastore and
    the /data/pki it reads at each start; the StatefulSet's own pod mounts it."""
    mine = copy.deepcopy(control_plane_pod(host))
    del mine["metadata"]["ownerReferences"]
    mine["metadata"]["name"] = "reader"
    mine["spec"]["serviceAccountName"] = "ci"
    for who in (DEPLOYER, SYNCER, STRAY):
        outcome = host.attempt(who, "CREATE", PODS, copy.deepcopy(mine), HARD)
        assert outcome.denied_by("tenancy-syncer-account", "only its own pods mount them"), (who, outcome)
    assert admitted(host.attempt(STATEFULSET_CONTROLLER, "CREATE", PODS, control_plane_pod(host), HARD))
    # The twin: a pod of the tenant's mounting a claim of its own.
    assert not host.attempt(DEPLOYER, "CREATE", PODS, on_own_claim(mine), HARD).denied_by("tenancy-syncer-account")


# --- Red team round 7: the pod's owner, a second syncer, a claim by another controller ---------


def _released(pod: dict[str, Any], drop: str) -> dict[str, Any]:
    """`pod` without one of the things its StatefulSet owns it by."""
    changed = copy.deepcopy(pod)
    if drop == "owner":
        changed["metadata"]["ownerReferences"] = []
    else:
        del changed["metadata"]["labels"][drop]
    return changed


@pytest.mark.parametrize("drop", ["app", "release", "owner"])
def test_no_tenant_identity_releases_the_control_plane_pod(host: Cluster, drop: str) -> None:
    """Without its selector labels or controller owner, the StatefulSet releases `vcluster-0` and starts
    another: the released pod keeps running as the syncer beside the new one, forever."""
    old = control_plane_pod(host)
    assert {"app", "release"} <= set(old["metadata"]["labels"]) and old["metadata"]["ownerReferences"]
    for who in [*TENANT_SIDE, STATEFULSET_CONTROLLER]:
        for verb in ("update", "patch"):
            outcome = host.attempt(who, "UPDATE", PODS, _released(old, drop), HARD, old=copy.deepcopy(old), verb=verb)
            assert refused(outcome, "tenancy-syncer-account"), (who, verb, outcome)
    outcome = host.attempt(DEPLOYER, "UPDATE", PODS, _released(old, drop), HARD, old=copy.deepcopy(old), verb="patch")
    assert outcome.denied_by("tenancy-syncer-account", "its labels app and release and its controller owner"), outcome


@pytest.mark.parametrize("drop", ["app", "release"])
def test_no_status_write_relabels_the_control_plane_pod(host: Cluster, drop: str) -> None:
    """`pods/status` keeps the request's labels (podStatusStrategy restores the spec and the owners only)."""
    old = control_plane_pod(host) | {"status": {"phase": "Running"}}
    outcome = host.attempt(
        STRAY, "UPDATE", PODS, _released(old, drop), HARD, old=copy.deepcopy(old), subresource="status"
    )
    assert outcome.denied_by("tenancy-syncer-account", "through status"), outcome
    # The twin: the kubelet's status report, labels as they were.
    ready = copy.deepcopy(old)
    ready["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    outcome = host.attempt(STRAY, "UPDATE", PODS, ready, HARD, old=old, subresource="status")
    assert admitted(outcome), outcome.decision.denials


def test_the_platform_and_the_collectors_may_release_the_control_plane_pod(host: Cluster) -> None:
    """The garbage collector orphans the pod when its StatefulSet is deleted with `--cascade=orphan`;
    the platform may do anything; a tenant's own pod is not the rule's."""
    old = control_plane_pod(host)
    for who in (GARBAGE_COLLECTOR, KUBE_CONTROLLER_MANAGER):
        outcome = host.attempt(who, "UPDATE", PODS, _released(old, "owner"), HARD, old=copy.deepcopy(old), verb="patch")
        assert admitted(outcome), (who, outcome.decision.denials)
    platform = platform_identity(host.stack)
    assert admitted(host.attempt(platform, "UPDATE", PODS, _released(old, "app"), HARD, old=copy.deepcopy(old)))
    mine = copy.deepcopy(old)
    mine["metadata"]["name"] = "web-0"
    mine["spec"]["serviceAccountName"] = "default"
    outcome = host.attempt(DEPLOYER, "UPDATE", PODS, _released(mine, "app"), HARD, old=mine, verb="patch")
    assert not outcome.denied_by("tenancy-syncer-account"), outcome


def _debug_container() -> dict[str, Any]:
    """A debug container that passes the workload rule and Pod Security `restricted`."""
    return {
        "name": "debug",
        "image": f"{_MIRROR}/busybox:1.37.0",
        "imagePullPolicy": "Always",
        "targetContainerName": "syncer",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def test_the_platform_debugs_and_resizes_the_control_plane(host: Cluster) -> None:
    """The lock on the running pod's spec is against the tenant's identities, not the platform's."""
    old = control_plane_pod(host)
    debugged = copy.deepcopy(old)
    debugged["spec"]["ephemeralContainers"] = [_debug_container()]
    platform = platform_identity(host.stack)
    outcome = host.attempt(
        platform,
        "UPDATE",
        PODS,
        copy.deepcopy(debugged),
        HARD,
        old=copy.deepcopy(old),
        subresource="ephemeralcontainers",
    )
    assert admitted(outcome), outcome.decision.denials
    outcome = host.attempt(platform, "UPDATE", PODS, _resized(old), HARD, old=copy.deepcopy(old), subresource="resize")
    assert admitted(outcome), outcome.decision.denials
    # The same debug container from a tenant identity, and a platform `kubectl set image`, stay refused.
    stray = host.attempt(
        STRAY, "UPDATE", PODS, debugged, HARD, old=copy.deepcopy(old), subresource="ephemeralcontainers"
    )
    assert stray.denied_by("tenancy-syncer-account"), stray
    assert host.attempt(platform, "UPDATE", PODS, with_image(old, _EVIL), HARD, old=old).denied_by(
        "tenancy-syncer-account"
    )


def ephemeral_pod(host: Cluster, pod_name: str, volume: str) -> dict[str, Any]:
    """A pod of the tenant's with an ephemeral volume: its claim is `<pod>-<volume>`."""
    pod = copy.deepcopy(control_plane_pod(host))
    del pod["metadata"]["ownerReferences"]
    pod["metadata"] = {"name": pod_name, "labels": {"app": "data"}}
    pod["spec"]["serviceAccountName"] = "ci"
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    pod["spec"]["volumes"] = [{"name": volume, "ephemeral": {"volumeClaimTemplate": template}}]
    pod["spec"].pop("initContainers", None)
    for container in pod["spec"]["containers"]:
        container["volumeMounts"] = [{"name": volume, "mountPath": "/data"}]
    return pod


@pytest.mark.parametrize(("pod_name", "volume"), [("data", "vcluster-0"), ("data-vcluster", "1")])
def test_no_ephemeral_volume_becomes_the_control_planes_claim(host: Cluster, pod_name: str, volume: str) -> None:
    """The ephemeral volume controller names the claim `<pod>-<volume>` and creates it from the pod's
    template: `data-vcluster-0` with the tenant's spec, which the StatefulSet controller then uses."""
    for who in (DEPLOYER, SYNCER, STRAY):
        outcome = host.attempt(who, "CREATE", PODS, ephemeral_pod(host, pod_name, volume), HARD)
        assert outcome.denied_by("tenancy-syncer-account", "ephemeral volume"), (who, outcome)
    # The twins: an ephemeral volume whose claim is any other name.
    for name, other in (("data", "scratch"), ("web", "vcluster-0"), ("data-vcluster", "cache")):
        outcome = host.attempt(DEPLOYER, "CREATE", PODS, ephemeral_pod(host, name, other), HARD)
        assert not outcome.denied_by("tenancy-syncer-account"), (name, other, outcome)


def test_no_other_controller_creates_the_control_planes_claim(host: Cluster) -> None:
    """kube-controller-manager without --use-service-account-credentials is one user for every
    controller: the StatefulSet controller's create (no owners) passes, the ephemeral volume
    controller's (owned by the tenant's pod) does not."""
    owned = claim(host)
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "data", "uid": "p1", "controller": True, "blockOwnerDeletion": True}
    ]
    for who in (KUBE_CONTROLLER_MANAGER, EPHEMERAL_VOLUME_CONTROLLER, STATEFULSET_CONTROLLER):
        outcome = host.attempt(who, "CREATE", CLAIMS, copy.deepcopy(owned), HARD)
        assert outcome.denied_by(CONTROL_PLANE_POLICY, "with no owner references"), (who, outcome)
    assert admitted(host.attempt(KUBE_CONTROLLER_MANAGER, "CREATE", CLAIMS, claim(host), HARD))
    # kube-controller-manager's garbage collector still orphans and deletes it.
    orphaned = claim(host)
    assert admitted(host.attempt(KUBE_CONTROLLER_MANAGER, "UPDATE", CLAIMS, orphaned, HARD, old=copy.deepcopy(owned)))
    assert admitted(host.attempt(KUBE_CONTROLLER_MANAGER, "DELETE", CLAIMS, None, HARD, old=owned))


def test_the_platform_grows_the_control_planes_claim(host: Cluster) -> None:
    """The runbook way to a bigger volume (docs/virtual-clusters.md): the claim template cannot change."""
    old = claim(host, volumeName="pvc-1234")
    grown = copy.deepcopy(old)
    grown["spec"]["resources"]["requests"]["storage"] = "20Gi"
    platform = platform_identity(host.stack)
    assert admitted(host.attempt(platform, "UPDATE", CLAIMS, copy.deepcopy(grown), HARD, old=copy.deepcopy(old)))
    assert host.attempt(DEPLOYER, "UPDATE", CLAIMS, grown, HARD, old=old).denied_by(CONTROL_PLANE_POLICY)


@pytest.mark.parametrize("change", ["owner", "finalizer"])
def test_the_syncers_bookkeeping_keeps_the_config_secrets_owners_and_finalizers(host: Cluster, change: str) -> None:
    old = secret(CONFIG_SECRET, annotations={"meta.helm.sh/release-name": "vcluster"})
    noted = copy.deepcopy(old)
    noted["metadata"]["annotations"].update({"vcluster.loft.sh/distro": "k8s", "vcluster.loft.sh/store": "embedded"})
    hostile = copy.deepcopy(noted)
    if change == "owner":
        hostile["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "x"}]
    else:
        hostile["metadata"]["finalizers"] = ["example.com/hold"]
    outcome = host.attempt(SYNCER, "UPDATE", SECRETS, hostile, HARD, old=copy.deepcopy(old))
    assert outcome.denied_by(CONTROL_PLANE_POLICY), outcome
    assert admitted(host.attempt(SYNCER, "UPDATE", SECRETS, noted, HARD, old=old))


SERVICES = "/v1/services"


def control_plane_service(**spec: Any) -> dict[str, Any]:
    """The Service `vcluster` as chart 0.20.0 renders it (`service.yaml`)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "vcluster", "labels": {"app": "vcluster"}},
        "spec": {
            "type": "ClusterIP",
            "selector": dict(CONTROL_PLANE_SELECTOR),
            "ports": [{"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}],
            **spec,
        },
    }


def test_no_tenant_identity_creates_deletes_or_redirects_the_control_planes_service(host: Cluster) -> None:
    """Deleting it has the garbage collector delete the certificate Secret it owns (vCluster then makes a
    new CA at its next start); another selector sends the virtual cluster's clients to another pod."""
    old = control_plane_service()
    redirected = control_plane_service(selector={"app": "mine"})
    owned = control_plane_service()
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "x"}]
    for who in TENANT_SIDE:
        assert refused(host.attempt(who, "DELETE", SERVICES, None, HARD, old=copy.deepcopy(old)), CONTROL_PLANE_POLICY)
        assert refused(host.attempt(who, "CREATE", SERVICES, copy.deepcopy(redirected), HARD), CONTROL_PLANE_POLICY)
        for changed in (redirected, owned):
            outcome = host.attempt(
                who, "UPDATE", SERVICES, copy.deepcopy(changed), HARD, old=copy.deepcopy(old), verb="patch"
            )
            assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    for who in (DEPLOYER, STRAY):
        outcome = host.attempt(who, "DELETE", SERVICES, None, HARD, old=copy.deepcopy(old))
        assert outcome.denied_by(CONTROL_PLANE_POLICY, "Service vcluster is the address"), (who, outcome)
    # The status subresource keeps the metadata: the same owner there.
    outcome = host.attempt(
        STRAY, "UPDATE", SERVICES, copy.deepcopy(owned), HARD, old=copy.deepcopy(old), subresource="status"
    )
    assert outcome.denied_by(CONTROL_PLANE_POLICY), outcome
    assert host.attempt(
        Subject("Group", "idp:soft-admins"), "CREATE", SERVICES, control_plane_service(), SOFT
    ).denied_by(CONTROL_PLANE_POLICY)


def test_the_release_and_the_collectors_keep_the_control_planes_service(host: Cluster) -> None:
    old = control_plane_service()
    assert admitted(host.attempt(INSTALLER, "CREATE", SERVICES, control_plane_service(), HARD))
    moved = control_plane_service(ports=[{"name": "https", "port": 443, "targetPort": 9443, "protocol": "TCP"}])
    assert admitted(host.attempt(INSTALLER, "UPDATE", SERVICES, moved, HARD, old=copy.deepcopy(old), verb="patch"))
    for who in (INSTALLER, GARBAGE_COLLECTOR, NAMESPACE_CONTROLLER, platform_identity(host.stack)):
        assert admitted(host.attempt(who, "DELETE", SERVICES, None, HARD, old=copy.deepcopy(old))), who
    # A tenant's label or annotation; the tenant's own Services.
    noted = control_plane_service()
    noted["metadata"]["annotations"] = {"example.com/team": "research"}
    assert admitted(host.attempt(DEPLOYER, "UPDATE", SERVICES, noted, HARD, old=copy.deepcopy(old), verb="patch"))
    mine = control_plane_service(selector={"app": "web"})
    mine["metadata"]["name"] = "web"
    outcome = host.attempt(DEPLOYER, "CREATE", SERVICES, mine, HARD)
    assert admitted(outcome) and CONTROL_PLANE_POLICY not in outcome.decision.applied, outcome


@pytest.mark.parametrize("account", [SYNCER_ACCOUNT, INSTALLER_ACCOUNT, WORKLOAD_ACCOUNT])
def test_the_virtual_clusters_accounts_are_reserved_where_there_is_none(host: Cluster, account: str) -> None:
    """Planted before the namespace becomes a virtual cluster's host, an account of that name (with an
    annotation of the tenant's: a cloud identity) would be the one the platform's bindings name."""
    body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}}
    for who in (Subject("ServiceAccount", "deployer", SOFT), Subject("Group", "idp:soft-admins")):
        outcome = host.attempt(who, "CREATE", "/v1/serviceaccounts", copy.deepcopy(body), SOFT)
        assert refused(outcome, CONTROL_PLANE_POLICY), (who, outcome)
    outcome = host.attempt(Subject("ServiceAccount", "deployer", SOFT), "CREATE", "/v1/serviceaccounts", body, SOFT)
    assert outcome.denied_by(CONTROL_PLANE_POLICY, "is a virtual cluster's host account"), outcome
    # The twins: the platform's own account; the tenant's accounts of other names.
    assert admitted(
        host.attempt(platform_identity(host.stack), "CREATE", "/v1/serviceaccounts", copy.deepcopy(body), SOFT)
    )
    assert admitted(
        host.attempt(GARBAGE_COLLECTOR, "DELETE", "/v1/serviceaccounts", None, SOFT, old=copy.deepcopy(body))
    )
    mine = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "ci"}}
    outcome = host.attempt(Subject("ServiceAccount", "deployer", SOFT), "CREATE", "/v1/serviceaccounts", mine, SOFT)
    assert admitted(outcome) and CONTROL_PLANE_POLICY not in outcome.decision.applied, outcome


def test_the_release_name_is_reserved_where_there_is_no_virtual_cluster(host: Cluster) -> None:
    """A HelmRelease `vcluster` of the tenant's in a namespace that later becomes a virtual cluster's host
    would be the one the platform's release takes over."""
    planted = release(host)
    planted["metadata"] = {"name": "vcluster"}
    planted["spec"]["serviceAccountName"] = "deployer"
    planted["spec"]["postRenderers"] = [
        {"kustomize": {"patches": [{"target": {"kind": "StatefulSet"}, "patch": "[]"}]}}
    ]
    for who in (Subject("ServiceAccount", "deployer", SOFT), Subject("Group", "idp:soft-admins")):
        outcome = host.attempt(who, "CREATE", HELM_RELEASES, copy.deepcopy(planted), SOFT)
        assert refused(outcome, RELEASE_POLICY), (who, outcome)
    outcome = host.attempt(
        Subject("ServiceAccount", "deployer", SOFT), "CREATE", HELM_RELEASES, copy.deepcopy(planted), SOFT
    )
    assert outcome.denied_by(RELEASE_POLICY, "reserved name"), outcome
    # The twins: one of the tenant's own from before the reservation may go; other names are the tenant's.
    gone = host.attempt(
        Subject("ServiceAccount", "deployer", SOFT), "DELETE", HELM_RELEASES, None, SOFT, old=copy.deepcopy(planted)
    )
    assert admitted(gone), gone.decision.denials
    mine = copy.deepcopy(planted)
    mine["metadata"]["name"] = "web"
    outcome = host.attempt(Subject("ServiceAccount", "deployer", SOFT), "CREATE", HELM_RELEASES, mine, SOFT)
    assert RELEASE_POLICY not in outcome.decision.applied, outcome


# --- Red team round 8: a copy of the datastore, the deployer's token, an impostor behind the Service ----


def clone_of(source: str, field: str, name: str = "copy", **metadata: Any) -> dict[str, Any]:
    """A claim `name` made from the claim `source` through `dataSource` or `dataSourceRef`, on the
    platform's class."""
    ref: dict[str, Any] = {"kind": "PersistentVolumeClaim", "name": source}
    if field == "dataSourceRef":
        ref["apiGroup"] = ""
    spec = {
        "storageClassName": "tenancy-standard",
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "5Gi"}},
        field: ref,
    }
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, **metadata}, "spec": spec}


# vCluster v0.20.0 keeps a virtual claim's dataSource(Ref) untranslated on the host when it carries this.
_SKIP_TRANSLATE = {"annotations": {"vcluster.loft.sh/skip-translate": "true"}}


@pytest.mark.parametrize("field", ["dataSource", "dataSourceRef"])
def test_no_claim_is_made_from_the_control_planes_volume(host: Cluster, field: str) -> None:
    """A clone of `data-vcluster-<n>` is the datastore (every virtual Secret) and /data/pki (the CA and
    its keys): through the syncer (a virtual claim with skip-translate), the deployer, a stray grant, or
    the StatefulSet controller following a template of the tenant's that names the source."""
    for ordinal in (0, 1):
        source = f"data-vcluster-{ordinal}"
        synced = clone_of(source, field, "stolen-x-team-x-vcluster", **_SKIP_TRANSLATE)
        attempts: list[tuple[Subject | UserInfo, dict[str, Any]]] = [
            (SYNCER, synced),
            (DEPLOYER, clone_of(source, field)),
            (STRAY, clone_of(source, field)),
            (STATEFULSET_CONTROLLER, clone_of(source, field, "data-web-0")),
        ]
        for who, body in attempts:
            outcome = host.attempt(who, "CREATE", CLAIMS, copy.deepcopy(body), HARD)
            assert outcome.denied_by(CONTROL_PLANE_POLICY, "would be made from the virtual cluster's control plane"), (
                who,
                source,
                outcome,
            )
    # Reserved where there is no virtual cluster yet, as the name is.
    soft = host.attempt(
        Subject("ServiceAccount", "deployer", SOFT), "CREATE", CLAIMS, clone_of("data-vcluster-0", field), SOFT
    )
    assert soft.denied_by(CONTROL_PLANE_POLICY, "would be made from"), soft


@pytest.mark.parametrize("group", [None, "", "snapshot.storage.k8s.io"])
def test_a_clone_is_refused_as_the_api_server_serves_it(host: Cluster, group: str | None) -> None:
    """The real run (2026-11-29) admitted the deployer's clone that this suite refused: the API server
    copies `dataSource` into `dataSourceRef` (k8s.io/kubernetes v1.36.3 pkg/api/persistentvolumeclaim
    NormalizeDataSources) and serves an unset group as `apiGroup: null` (TypedLocalObjectReference's
    APIGroup has no omitempty), which the rule read as a group other than the core one. A source named
    like the control plane's claim is refused whatever its group says."""
    body = clone_of("data-vcluster-0", "dataSource")
    ref = {"apiGroup": group, "kind": "PersistentVolumeClaim", "name": "data-vcluster-0"}
    body["spec"]["dataSource"], body["spec"]["dataSourceRef"] = dict(ref), dict(ref)
    outcome = host.attempt(DEPLOYER, "CREATE", CLAIMS, body, HARD)
    assert outcome.denied_by(CONTROL_PLANE_POLICY, "would be made from the virtual cluster's control plane"), outcome


@pytest.mark.parametrize("field", ["dataSource", "dataSourceRef"])
def test_claims_are_still_cloned_from_any_other_claim(host: Cluster, field: str) -> None:
    """The twins: the syncer cloning a synced claim (the virtual cluster's own clone, translated), the
    deployer cloning its StatefulSet's claim, the platform cloning the control plane's (a backup)."""
    synced = clone_of("db-x-team-x-vcluster", field, "copy-x-team-x-vcluster")
    for who, body in ((SYNCER, synced), (DEPLOYER, clone_of("data-web-0", field))):
        outcome = host.attempt(who, "CREATE", CLAIMS, body, HARD)
        assert admitted(outcome) and CONTROL_PLANE_POLICY not in outcome.decision.applied, (who, outcome)
    platform = platform_identity(host.stack)
    assert admitted(host.attempt(platform, "CREATE", CLAIMS, clone_of("data-vcluster-0", field), HARD))


def test_the_data_claims_reach_no_tenant_group_or_workload(host: Cluster) -> None:
    """What is left to read the datastore: RBAC keeps the tenant's groups and the workload accounts from
    every claim write, so only the deployer (the virtual cluster's admin already) could ask, and is refused."""
    for who in (ADMINS, WORKLOAD, Subject("Group", "idp:hard-members")):
        assert not host.authz.allowed(who, "create", "persistentvolumeclaims", HARD), who
    assert host.authz.allowed(DEPLOYER, "create", "persistentvolumeclaims", HARD)


def as_deployer(pod: dict[str, Any], field: str = "serviceAccountName") -> dict[str, Any]:
    """A pod of the tenant's (on its own claim, without the control plane's labels) running as `deployer`."""
    changed = on_own_claim(pod)
    changed["metadata"] = {"name": "ci", "labels": {"app": "ci"}}
    changed["spec"].pop("serviceAccountName", None)
    changed["spec"][field] = DEPLOYER_ACCOUNT
    changed["spec"]["automountServiceAccountToken"] = True
    return changed


@pytest.mark.parametrize("field", ["serviceAccountName", "serviceAccount"])
def test_no_pod_runs_as_the_deployer(host: Cluster, field: str) -> None:
    """The syncer may update, debug and exec into every pod of the namespace (the chart's Role, which the
    platform's follows): a pod running as `deployer` with its token is the deployer's role in its hands.
    The account of a pod cannot change, so its creation is refused, whoever asks."""
    pod = as_deployer(control_plane_pod(host), field)
    for who in (DEPLOYER, SYNCER, STRAY, STATEFULSET_CONTROLLER):
        outcome = host.attempt(who, "CREATE", PODS, copy.deepcopy(pod), HARD)
        assert outcome.denied_by("tenancy-syncer-account", f"no pod runs as the ServiceAccount {DEPLOYER_ACCOUNT}"), (
            who,
            outcome,
        )
    soft = host.attempt(Subject("ServiceAccount", "deployer", SOFT), "CREATE", PODS, copy.deepcopy(pod), SOFT)
    assert soft.denied_by("tenancy-syncer-account", f"no pod runs as the ServiceAccount {DEPLOYER_ACCOUNT}"), soft


def test_pods_run_under_the_tenants_other_accounts(host: Cluster) -> None:
    """The twins: the tenant's pods under its other accounts, the syncer's pods under the workload
    account; and nothing the platform renders runs a pod as the deployer (Flux impersonates the name)."""
    for account in ("default", "ci", "workload"):
        pod = as_deployer(control_plane_pod(host))
        pod["spec"]["serviceAccountName"] = account
        outcome = host.attempt(DEPLOYER, "CREATE", PODS, pod, HARD)
        assert admitted(outcome), (account, outcome.decision.denials)
    synced = as_deployer(control_plane_pod(host))
    synced["metadata"]["name"] = "web-x-team-x-vcluster"
    synced["spec"]["serviceAccountName"] = WORKLOAD_ACCOUNT
    outcome = host.attempt(SYNCER, "CREATE", PODS, synced, HARD)
    assert admitted(outcome), outcome.decision.denials
    workloads = {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}
    rendered = [o for o in kubernetes_objects(host.run) if o["kind"] in workloads]
    for obj in rendered:
        spec = obj["spec"]
        spec = spec.get("jobTemplate", {}).get("spec", spec) if obj["kind"] == "CronJob" else spec
        pod_spec = spec if obj["kind"] == "Pod" else spec["template"]["spec"]
        assert DEPLOYER_ACCOUNT not in (pod_spec.get("serviceAccountName"), pod_spec.get("serviceAccount")), obj
    assert control_plane_pod(host)["spec"]["serviceAccountName"] == SYNCER_ACCOUNT


def impostor(host: Cluster, labels: dict[str, str]) -> dict[str, Any]:
    """A pod of the tenant's (its own account and claim) with `labels`."""
    pod = on_own_claim(control_plane_pod(host))
    pod["metadata"] = {"name": "impostor", "labels": labels}
    pod["spec"]["serviceAccountName"] = "default"
    return pod


def templated(kind: str, pod: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A workload of `kind` whose pod template is `pod`, with the resource it is written to."""
    template = {"metadata": {"labels": dict(pod["metadata"]["labels"])}, "spec": pod["spec"]}
    selector = {"matchLabels": dict(pod["metadata"]["labels"])}
    bodies = {
        "Deployment": ("apps/v1/deployments", {"selector": selector, "template": template}),
        "StatefulSet": ("apps/v1/statefulsets", {"selector": selector, "serviceName": "web", "template": template}),
        "CronJob": ("batch/v1/cronjobs", {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": template}}}),
    }
    resource, spec = bodies[kind]
    api = resource.rsplit("/", 1)[0].lstrip("/")
    return resource, {"apiVersion": api, "kind": kind, "metadata": {"name": "web"}, "spec": spec}


# The Service `vcluster` selects both (chart/templates/service.yaml); the NetworkPolicy the key alone.
_SELECTED = dict(CONTROL_PLANE_SELECTOR)
_POLICED = {CONTROL_PLANE_KEY: "true"}


@pytest.mark.parametrize("labels", [_SELECTED, _POLICED, _SELECTED | _POLICED], ids=["service", "policy", "both"])
def test_no_other_pod_carries_the_control_planes_labels(host: Cluster, labels: dict[str, str]) -> None:
    """An impostor the Service `vcluster` selects gets a share of its clients (the platform's GitOps,
    every virtual workload with its token; the deployer reads the serving key), one with the control
    plane key gets its NetworkPolicy's holes: by a create, a pod template, a relabelling, `pods/status`."""
    pod = impostor(host, labels)
    for who in (DEPLOYER, SYNCER, STRAY):
        outcome = host.attempt(who, "CREATE", PODS, copy.deepcopy(pod), HARD)
        assert outcome.denied_by(SELECTOR_POLICY, "carries the labels of the virtual cluster's control plane"), (
            who,
            outcome,
        )
    for kind in ("Deployment", "StatefulSet", "CronJob"):
        resource, body = templated(kind, pod)
        outcome = host.attempt(DEPLOYER, "CREATE", resource, body, HARD)
        assert outcome.denied_by(SELECTOR_POLICY), (kind, outcome)
    plain = impostor(host, {"app": "web"})
    relabelled = host.attempt(
        DEPLOYER, "UPDATE", PODS, copy.deepcopy(pod), HARD, old=copy.deepcopy(plain), verb="patch"
    )
    assert relabelled.denied_by(SELECTOR_POLICY), relabelled
    running = {"status": {"phase": "Running"}}
    status = host.attempt(STRAY, "UPDATE", PODS, pod | running, HARD, old=plain | running, subresource="status")
    assert status.denied_by(SELECTOR_POLICY) and len(status.decision.denials) == 1, status
    # The StatefulSet controller following a template of the tenant's: the pod is not the release's.
    owned = copy.deepcopy(pod)
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u2", "controller": True}
    ]
    assert host.attempt(STATEFULSET_CONTROLLER, "CREATE", PODS, owned, HARD).denied_by(SELECTOR_POLICY)
    # Reserved where there is no virtual cluster yet.
    soft = host.attempt(Subject("ServiceAccount", "deployer", SOFT), "CREATE", PODS, copy.deepcopy(pod), SOFT)
    assert soft.denied_by(SELECTOR_POLICY), soft


def test_the_control_plane_and_other_pods_keep_their_labels(host: Cluster) -> None:
    """The twins: `vcluster-0` made by the StatefulSet controller, the installer's StatefulSet, the
    controllers' and the kubelet's updates of the running pod; the tenant's pods with other labels,
    `app: vcluster` alone included (the Service selects both labels)."""
    outcome = host.attempt(STATEFULSET_CONTROLLER, "CREATE", PODS, control_plane_pod(host), HARD)
    assert admitted(outcome) and SELECTOR_POLICY in outcome.decision.applied, outcome.decision.denials
    for verb in ("update", "patch"):
        assert admitted(
            host.attempt(INSTALLER, "UPDATE", STATEFULSETS, statefulset(host), HARD, old=statefulset(host), verb=verb)
        )
    assert admitted(host.attempt(INSTALLER, "CREATE", STATEFULSETS, statefulset(host), HARD))
    old = control_plane_pod(host) | {"status": {"phase": "Pending"}}
    hashed = copy.deepcopy(old)
    hashed["metadata"]["labels"]["controller-revision-hash"] = "vcluster-6b7c"
    assert admitted(host.attempt(STATEFULSET_CONTROLLER, "UPDATE", PODS, hashed, HARD, old=copy.deepcopy(old)))
    ready = old | {"status": {"phase": "Running"}}
    assert admitted(host.attempt(STRAY, "UPDATE", PODS, ready, HARD, old=copy.deepcopy(old), subresource="status"))
    for labels in ({"app": "vcluster"}, {"app": "web", "release": "vcluster"}, {"app": "web"}):
        outcome = host.attempt(DEPLOYER, "CREATE", PODS, impostor(host, labels), HARD)
        assert admitted(outcome), (labels, outcome.decision.denials)
        resource, body = templated("Deployment", impostor(host, labels))
        assert admitted(host.attempt(DEPLOYER, "CREATE", resource, body, HARD)), labels


def _marks_a_default_class(host: Cluster) -> bool:
    classes = objects_of_kind(host.run, "StorageClass")
    default = "storageclass.kubernetes.io/is-default-class"
    return any((c["metadata"].get("annotations") or {}).get(default) == "true" for c in classes)


def test_a_synced_claim_names_a_platform_class(host: Cluster) -> None:
    """docs/virtual-clusters.md, Storage classes inside: a virtual claim without a class reaches the host
    without one (or with the cloud's default, not the platform's) and is refused there; with a platform
    class it is admitted. Where the stack marks a platform class default, the DefaultStorageClass
    plugin (mutating, not played offline) fills it in first."""
    synced = clone_of("unused", "dataSource", "data-x-db-x-vcluster")
    del synced["spec"]["dataSource"]
    outcome = host.attempt(SYNCER, "CREATE", CLAIMS, copy.deepcopy(synced), HARD)
    assert admitted(outcome), outcome.decision.denials
    del synced["spec"]["storageClassName"]
    if not _marks_a_default_class(host):
        outcome = host.attempt(SYNCER, "CREATE", CLAIMS, copy.deepcopy(synced), HARD)
        assert outcome.denied_by("tenancy-volume-claims", "it names none"), outcome
    synced["spec"]["storageClassName"] = "standard-rwo"
    outcome = host.attempt(SYNCER, "CREATE", CLAIMS, synced, HARD)
    assert outcome.denied_by("tenancy-volume-claims", "it names standard-rwo"), outcome
