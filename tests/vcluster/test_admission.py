"""Pods and services a virtual cluster syncs into its host namespace obey the host's rules.

The syncer creates them as its own ServiceAccount, so each request is played through the layers a
real API server applies (tests/admission/layers.py): RBAC over the rendered bindings, then the
rendered admission bundle (mutating, then validating) with the syncer's identity. Pod Security
Admission is not evaluated offline (layers.py says why); the workload rule holds the same line for
privilege here. Each attack has its legitimate twin, admitted.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.core.labels import NODE_POOL_KEY
from components.vcluster.values import WORKLOAD_ACCOUNT
from tests.admission.layers import Cluster, cluster, stack_policy
from tests.cel_admission import Request
from tests.rbac import Subject, UserInfo
from tests.support import objects_of_kind
from tests.vcluster import chart_pods
from tests.vcluster.helpers import HARD, hard_tenant, run_tenants, stack_virtual_clusters

SYNCER = Subject("ServiceAccount", "vcluster", HARD)
PODS, SERVICES = "/v1/pods", "/v1/services"
_POOL_TOLERATION = {"key": NODE_POOL_KEY, "operator": "Equal", "value": "research", "effect": "NoSchedule"}
_MIRROR = "ghcr.io/example/mirror"
_REGISTRIES = ["ghcr.io/example"]
# kube-controller-manager's StatefulSet controller creates the control plane pod; it holds pod
# creation cluster-wide through the system roles, modelled here as the masters group.
STATEFULSET_CONTROLLER_USER = UserInfo("system:serviceaccount:kube-system:statefulset-controller", ("system:masters",))


@pytest.fixture(scope="module", params=["dev", "prod", "prod-aws"])
def host(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    stack = str(request.param)
    policy = stack_policy(stack, allowedRegistries=_REGISTRIES)
    mirror = stack_virtual_clusters(stack, imageRegistry=_MIRROR)
    run = run_tenants(tmp_path_factory.mktemp(stack), hard_tenant(), stack=stack, policy=policy, virtualClusters=mirror)
    return cluster(run)


def synced_pod(**spec: Any) -> dict[str, Any]:
    """A pod as the syncer writes it to the host: the chart's node selector and toleration applied."""
    container = {
        "name": "app",
        "image": "ghcr.io/example/app:1.0.0",
        # The host requires Always of every pod (tenancy-workloads); the syncer copies the field.
        "imagePullPolicy": "Always",
        "resources": {"limits": {"memory": "128Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    body = {
        "containers": [container],
        "nodeSelector": {NODE_POOL_KEY: "research"},
        "tolerations": [_POOL_TOLERATION],
        # The syncer sets its workload account on every pod, and no token (translator.go).
        "serviceAccountName": WORKLOAD_ACCOUNT,
        "automountServiceAccountToken": False,
    }
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app-x-default-x-vcluster"}, "spec": body}


def test_a_synced_pod_on_the_tenants_pool_is_admitted(host: Cluster) -> None:
    outcome = host.attempt(SYNCER, "CREATE", PODS, synced_pod(), HARD)
    assert outcome.stopped_by is None, outcome.decision.denials


def test_a_synced_pod_without_the_pool_never_lands_off_it(host: Cluster) -> None:
    """1.34 (prod, prod-aws): refused. 1.36 (dev): the host's mutating policy pins it first."""
    pod = synced_pod()
    del pod["spec"]["nodeSelector"]
    outcome = host.attempt(SYNCER, "CREATE", PODS, pod, HARD)
    if outcome.stopped_by is None:
        assert outcome.decision.object is not None
        assert outcome.decision.object["spec"]["nodeSelector"] == {NODE_POOL_KEY: "research"}
    else:
        assert outcome.denied_by("tenancy-node-pool")


def test_a_synced_pod_tolerating_another_pool_is_refused(host: Cluster) -> None:
    other = {**_POOL_TOLERATION, "value": "customers"}
    outcome = host.attempt(SYNCER, "CREATE", PODS, synced_pod(tolerations=[_POOL_TOLERATION, other]), HARD)
    assert outcome.denied_by("tenancy-node-pool")


@pytest.mark.parametrize(
    "change",
    [
        {"hostNetwork": True},
        {"hostPID": True},
        {"volumes": [{"name": "root", "hostPath": {"path": "/"}}]},
    ],
)
def test_a_synced_pod_asking_for_the_node_is_refused(host: Cluster, change: dict[str, Any]) -> None:
    """Inside the virtual cluster the tenant is cluster-admin; its pods still land under the host's rules."""
    outcome = host.attempt(SYNCER, "CREATE", PODS, synced_pod(**change), HARD)
    assert outcome.denied_by("tenancy-workloads")


def test_a_privileged_synced_container_is_refused(host: Cluster) -> None:
    pod = synced_pod()
    container = copy.deepcopy(pod["spec"]["containers"][0])
    container["securityContext"]["privileged"] = True
    pod["spec"]["containers"] = [container]
    assert host.attempt(SYNCER, "CREATE", PODS, pod, HARD).denied_by("tenancy-workloads")


def test_a_synced_pod_from_an_unlisted_registry_is_refused(host: Cluster) -> None:
    pod = synced_pod()
    pod["spec"]["containers"][0]["image"] = "docker.io/attacker/miner:1"
    assert host.attempt(SYNCER, "CREATE", PODS, pod, HARD).denied_by(
        "tenancy-workloads", "not from an allowed registry"
    )


def test_a_synced_node_port_service_is_refused(host: Cluster) -> None:
    service: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web-x-default-x-vcluster"},
        "spec": {"type": "NodePort", "ports": [{"port": 80}], "selector": {"app": "web"}},
    }
    assert host.attempt(SYNCER, "CREATE", SERVICES, service, HARD).denied_by("tenancy-services")
    service["spec"]["type"] = "ClusterIP"
    assert host.attempt(SYNCER, "CREATE", SERVICES, service, HARD).stopped_by is None


def test_the_syncer_cannot_touch_the_platforms_objects(host: Cluster) -> None:
    """The isolation policy is platform-owned; the syncer holds no verb on NetworkPolicies at all."""
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "tenancy-isolation"}}
    outcome = host.attempt(SYNCER, "DELETE", "networking.k8s.io/v1/networkpolicies", None, HARD, old=policy)
    assert outcome.stopped_by == "rbac"


def control_plane_pod(host: Cluster) -> dict[str, Any]:
    """The control plane pod as chart 0.20.0's StatefulSet template builds it from the rendered
    values (tests/vcluster/chart_pods.py): images under `defaultImageRegistry`, hardening, placement."""
    [release] = [r for r in objects_of_kind(host.run, "HelmRelease", HARD) if r["metadata"]["name"] == "vcluster"]
    pod = chart_pods.control_plane_pod(release["spec"]["values"], HARD, "vcluster")
    del pod["metadata"]["namespace"]
    return pod


def coredns_pod(host: Cluster) -> dict[str, Any]:
    """CoreDNS as the syncer copies it to the host (tests/vcluster/chart_pods.py)."""
    [release] = [r for r in objects_of_kind(host.run, "HelmRelease", HARD) if r["metadata"]["name"] == "vcluster"]
    values = release["spec"]["values"]
    pod = chart_pods.synced_to_host(chart_pods.coredns_virtual_pod(values), values, HARD, "vcluster")
    del pod["metadata"]["namespace"]
    return pod


def test_the_control_plane_itself_is_admitted_under_the_host_rules(host: Cluster) -> None:
    """Created by the StatefulSet controller: pool, hardening, memory limit and registry all hold."""
    outcome = host.attempt(STATEFULSET_CONTROLLER_USER, "CREATE", PODS, control_plane_pod(host), HARD)
    assert outcome.stopped_by is None, outcome.decision.denials
    pod = control_plane_pod(host)
    pod["spec"]["containers"][0]["image"] = "ghcr.io/loft-sh/vcluster-pro:0.20.0"
    assert host.attempt(STATEFULSET_CONTROLLER_USER, "CREATE", PODS, pod, HARD).denied_by("tenancy-workloads")


def test_coredns_comes_from_the_mirror_and_is_admitted(host: Cluster) -> None:
    """The syncer fills CoreDNS's image in under `defaultImageRegistry`; the host admits the copy."""
    pod = coredns_pod(host)
    assert pod["spec"]["containers"][0]["image"] == f"{_MIRROR}/coredns/coredns:1.11.3"
    outcome = host.attempt(SYNCER, "CREATE", PODS, pod, HARD)
    assert outcome.stopped_by is None, outcome.decision.denials


def test_an_init_container_left_unhardened_would_be_refused(host: Cluster) -> None:
    """Guards the test above: the workload rule does read init containers."""
    pod = control_plane_pod(host)
    pod["spec"]["initContainers"][0]["securityContext"] = {}
    assert host.attempt(STATEFULSET_CONTROLLER_USER, "CREATE", PODS, pod, HARD).denied_by("tenancy-workloads")


def _with_status(pod: dict[str, Any], **status: Any) -> dict[str, Any]:
    updated = copy.deepcopy(pod)
    updated["status"] = {"phase": "Running", "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}], **status}
    return updated


def test_the_syncer_cannot_move_a_pods_address_to_another_tenants_pod(host: Cluster) -> None:
    """The deployer can run a pod as `vcluster`, which may update pods/status: a changed podIP would
    make the tenant's Service, and the shared ingress controller behind its Ingress, send traffic to
    another tenant's pod (tenancy-pod-status, components/admission/rules/side_doors.py)."""
    running = _with_status(synced_pod())
    victim = "10.244.9.9"
    for moved in (
        _with_status(synced_pod(), podIP=victim, podIPs=[{"ip": victim}]),
        _with_status(synced_pod(), podIPs=[{"ip": "10.244.1.7"}, {"ip": victim}]),
        _with_status(synced_pod(), hostIP=victim),
    ):
        outcome = host.attempt(SYNCER, "UPDATE", PODS, moved, HARD, old=copy.deepcopy(running), subresource="status")
        assert outcome.denied_by("tenancy-pod-status", "are set by its kubelet only"), outcome
    # Conditions stay the syncer's to write; the kubelet may change addresses.
    ready = _with_status(synced_pod(), conditions=[{"type": "Ready", "status": "True"}])
    outcome = host.attempt(SYNCER, "UPDATE", PODS, ready, HARD, old=copy.deepcopy(running), subresource="status")
    assert outcome.stopped_by is None, outcome
    kubelet = UserInfo("system:node:worker-1", ("system:nodes",))
    moved = _with_status(synced_pod(), podIP=victim, podIPs=[{"ip": victim}])
    decision = host.chain.admit(
        Request(
            "UPDATE",
            PODS,
            "Pod",
            object={**moved, "metadata": {**moved["metadata"], "namespace": HARD}},
            old_object={**running, "metadata": {**running["metadata"], "namespace": HARD}},
            namespace_object=host.namespace(HARD),
            subresource="status",
            username=kubelet.name,
            groups=list(kubelet.groups),
        )
    )
    assert decision.allowed, decision.denials


# --- Issue 33: the syncer's account is the syncer's -------------------------------------------

DEPLOYER = Subject("ServiceAccount", "deployer", HARD)


def _as_syncer(pod: dict[str, Any], field: str = "serviceAccountName") -> dict[str, Any]:
    changed = copy.deepcopy(pod)
    changed["spec"].pop("serviceAccountName", None)
    changed["spec"][field] = "vcluster"
    return changed


@pytest.mark.parametrize("field", ["serviceAccountName", "serviceAccount"])
def test_the_deployer_cannot_run_a_pod_as_the_syncer(host: Cluster, field: str) -> None:
    outcome = host.attempt(DEPLOYER, "CREATE", PODS, _as_syncer(synced_pod(), field), HARD)
    assert outcome.stopped_by == "admission", outcome
    assert outcome.denied_by("tenancy-syncer-account", "only the virtual cluster's own StatefulSet vcluster")


def test_the_syncer_account_needs_its_own_statefulset_as_controller(host: Cluster) -> None:
    # The StatefulSet controller creating a pod for another set (a tenant's own StatefulSet).
    pod = control_plane_pod(host)
    pod["metadata"]["ownerReferences"][0]["name"] = "my-set"
    outcome = host.attempt(STATEFULSET_CONTROLLER_USER, "CREATE", PODS, pod, HARD)
    assert outcome.denied_by("tenancy-syncer-account"), outcome
    # The right owner named but not as the controller; and a pod claiming the owner, created by someone else.
    pod = control_plane_pod(host)
    pod["metadata"]["ownerReferences"][0]["controller"] = False
    assert host.attempt(STATEFULSET_CONTROLLER_USER, "CREATE", PODS, pod, HARD).denied_by("tenancy-syncer-account")
    forged = control_plane_pod(host)
    assert host.attempt(DEPLOYER, "CREATE", PODS, forged, HARD).denied_by("tenancy-syncer-account")


def test_pods_of_other_accounts_are_not_the_rules_business(host: Cluster) -> None:
    outcome = host.attempt(DEPLOYER, "CREATE", PODS, synced_pod(serviceAccountName="default"), HARD)
    assert "tenancy-syncer-account" not in " ".join(outcome.decision.denials), outcome


# --- Issue 43: the syncer's reach -------------------------------------------------------------


@pytest.mark.parametrize("account", ["deployer", "default", "vcluster"])
def test_the_syncer_runs_no_pod_as_another_account(host: Cluster, account: str) -> None:
    """A pod running as the syncer may create pods; one running as `deployer` (token automounted)
    would hold the deployer's role, one running as `vcluster` the syncer's again."""
    pod = synced_pod(serviceAccountName=account, automountServiceAccountToken=True)
    outcome = host.attempt(SYNCER, "CREATE", PODS, pod, HARD)
    assert outcome.denied_by("tenancy-syncer-account", f"runs pods as the ServiceAccount {WORKLOAD_ACCOUNT} only"), (
        outcome
    )
    # The deprecated field names the same account: both must be the workload account.
    sneaky = synced_pod(serviceAccount="deployer")
    assert host.attempt(SYNCER, "CREATE", PODS, sneaky, HARD).denied_by("tenancy-syncer-account")


def test_the_syncers_own_pods_run_as_the_workload_account(host: Cluster) -> None:
    outcome = host.attempt(SYNCER, "CREATE", PODS, synced_pod(), HARD)
    assert outcome.stopped_by is None, outcome.decision.denials
    assert "tenancy-syncer-account" in outcome.decision.applied


def test_the_chart_names_the_workload_account_the_rule_expects(host: Cluster) -> None:
    [release] = [r for r in objects_of_kind(host.run, "HelmRelease", HARD) if r["metadata"]["name"] == "vcluster"]
    advanced = release["spec"]["values"]["controlPlane"]["advanced"]
    assert advanced["workloadServiceAccount"] == {"enabled": False, "name": WORKLOAD_ACCOUNT}
    accounts = objects_of_kind(host.run, "ServiceAccount", HARD)
    [account] = [a for a in accounts if a["metadata"]["name"] == WORKLOAD_ACCOUNT]
    assert account["automountServiceAccountToken"] is False
