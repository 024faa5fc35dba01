"""Flux's identity as the flux2 chart 2.17.2 grants it, from Flux's manifests and the stack's values
(tools/realrun/controllers/flux_chart.py)."""

from __future__ import annotations

from typing import Any

import pytest

from components.delivery.flux import flux_values
from components.model.settings.delivery import DeliverySettings
from tools.realrun.controllers import flux_chart
from tools.realrun.controllers.chart import ChartError

# The shape of Flux's manifests/rbac/controller.yaml (github.com/fluxcd/flux2/v2): the group rules,
# leader election, and the two rules the chart lacks.
UPSTREAM_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["source.toolkit.fluxcd.io"], "resources": ["*"], "verbs": ["*"]},
    {"apiGroups": ["kustomize.toolkit.fluxcd.io"], "resources": ["*"], "verbs": ["*"]},
    {"apiGroups": [""], "resources": ["namespaces", "secrets", "configmaps", "serviceaccounts"], "verbs": ["get"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create"]},
    {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    {"nonResourceURLs": ["/livez/ping"], "verbs": ["head"]},
]


def _controller_yaml(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    subjects = [
        {"kind": "ServiceAccount", "name": name, "namespace": "flux-system"}
        for name in ("kustomize-controller", "helm-controller", "source-controller")
    ]
    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "crd-controller"},
         "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "crd-controller"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "crd-controller"},
         "subjects": subjects},
    ]  # fmt: skip


RECONCILER_YAML = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "cluster-reconciler"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "kustomize-controller", "namespace": "flux-system"}],
    }
]


def _deployment(args: list[str]) -> dict[str, Any]:
    return {
        "metadata": {"name": "controller"},
        "spec": {"template": {"spec": {"containers": [{"name": "manager", "args": args}]}}},
    }


def test_crd_controller_grants_what_the_chart_grants() -> None:
    role, binding = flux_chart.crd_controller(_controller_yaml(UPSTREAM_RULES), "gitops")
    assert role["rules"] == UPSTREAM_RULES[:4]
    assert {s["namespace"] for s in binding["subjects"]} == {"gitops"}


def test_crd_controller_refuses_manifests_without_a_rule_the_chart_lacks() -> None:
    # Upstream dropped or changed a rule: the chart must be read again before the run trusts the difference.
    with pytest.raises(ChartError, match="livez"):
        flux_chart.crd_controller(_controller_yaml(UPSTREAM_RULES[:5]), "flux-system")


def test_the_stacks_values_bind_the_reconcilers_to_impersonation_only() -> None:
    values = flux_values(DeliverySettings(install_flux=True))
    role, binding = flux_chart.reconciler(values, RECONCILER_YAML, "flux-system")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}]
    assert binding["roleRef"]["name"] == flux_chart.IMPERSONATOR
    assert {s["name"] for s in binding["subjects"]} == {"kustomize-controller", "helm-controller"}


def test_privileged_values_bind_the_reconcilers_to_cluster_admin() -> None:
    (binding,) = flux_chart.reconciler({"multitenancy": {"enabled": True}}, RECONCILER_YAML, "flux-system")
    assert binding["roleRef"]["name"] == "cluster-admin"
    assert {s["name"] for s in binding["subjects"]} == {"kustomize-controller", "helm-controller"}


def test_granted_picks_the_bindings_naming_the_account_and_their_roles() -> None:
    values = flux_values(DeliverySettings(install_flux=True))
    rbac = [
        *flux_chart.crd_controller(_controller_yaml(UPSTREAM_RULES), "flux-system"),
        *flux_chart.reconciler(values, RECONCILER_YAML, "flux-system"),
    ]
    source = {(d["kind"], d["metadata"]["name"]) for d in flux_chart.granted(rbac, "source-controller", "flux-system")}
    assert source == {("ClusterRole", "crd-controller"), ("ClusterRoleBinding", "crd-controller")}
    kustomize = {d["metadata"]["name"] for d in flux_chart.granted(rbac, "kustomize-controller", "flux-system")}
    assert kustomize == {"crd-controller", flux_chart.IMPERSONATOR}


def test_the_lockdown_flags_reach_kustomize_controller_only() -> None:
    values = flux_values(DeliverySettings(install_flux=True))
    base = ["--watch-all-namespaces", "--log-level=info"]
    kustomize = flux_chart.chart_args("kustomize-controller", base, values)
    assert kustomize == [
        "--no-cross-namespace-refs=true",
        "--default-service-account=default",
        *base,
        "--no-remote-bases=true",
    ]
    assert flux_chart.chart_args("source-controller", base, values) == base


@pytest.mark.parametrize(
    "values",
    [
        {"watchAllNamespaces": False},
        {"multitenancy": {"enabled": True, "extra": 1}},
        {"kustomizeController": {"container": {"additionalArgs": [], "image": "x"}}},
    ],
)
def test_values_the_run_does_not_apply_fail_the_run(values: dict[str, Any]) -> None:
    with pytest.raises(ChartError):
        flux_chart.chart_args("kustomize-controller", [], values)


def test_host_args_keep_every_listener_on_loopback() -> None:
    args = ["--watch-all-namespaces", "--enable-leader-election", "--storage-path=/data",
            "--storage-adv-addr=source-controller.$(RUNTIME_NAMESPACE).svc.cluster.local."]  # fmt: skip
    addresses = flux_chart.HostAddresses("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "/run/storage")
    assert flux_chart.host_args(args, addresses) == [
        "--watch-all-namespaces",
        "--storage-path=/run/storage",
        "--storage-adv-addr=127.0.0.1:3",
        "--metrics-addr=127.0.0.1:1",
        "--health-addr=127.0.0.1:2",
        "--storage-addr=127.0.0.1:3",
    ]


def test_deployment_args_come_from_the_manager_container() -> None:
    assert flux_chart.deployment_args(_deployment(["--a"])) == ["--a"]
    with pytest.raises(ChartError):
        flux_chart.deployment_args(_deployment(["--a"]), container="other")
