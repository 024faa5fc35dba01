"""A controller's identity picked from its chart's rendered templates (tools/realrun/controllers/chart.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tools.realrun.controllers.chart import ChartError, aggregated_roles, identity


def _binding(kind: str, name: str, role_kind: str, role: str, account: str, namespace: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace and kind == "RoleBinding" else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "cm"}],
    }


def _rendered(args: list[str], env: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "controller", "namespace": "cm"},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": "controller",
                    "containers": [
                        {"name": "main", "args": args, "env": env or []},
                        {"name": "sidecar", "args": ["--other"]},
                    ],
                }
            }
        },
    }
    return [
        deployment,
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "controller", "namespace": "cm"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "webhook", "namespace": "cm"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "issuers"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "webhook"}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "election", "namespace": "kube-system"},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "election", "namespace": "cm"},
        },
        _binding("ClusterRoleBinding", "issuers", "ClusterRole", "issuers", "controller", None),
        _binding("ClusterRoleBinding", "webhook", "ClusterRole", "webhook", "webhook", None),
        _binding("RoleBinding", "election", "Role", "election", "controller", "kube-system"),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated", "namespace": "cm"}},
    ]


def _names(objects: tuple[dict[str, Any], ...]) -> set[tuple[str, str, str]]:
    return {(o["kind"], o["metadata"]["name"], o["metadata"].get("namespace", "")) for o in objects}


def test_the_identity_is_the_account_and_exactly_the_rbac_that_names_it() -> None:
    found = identity(_rendered(["--v=2"]), "controller", "main")
    assert found.username == "system:serviceaccount:cm:controller"
    assert _names(found.objects) == {
        ("ServiceAccount", "controller", "cm"),
        ("ClusterRole", "issuers", ""),
        ("ClusterRoleBinding", "issuers", ""),
        # The Role in the binding's namespace, not its namesake elsewhere.
        ("Role", "election", "kube-system"),
        ("RoleBinding", "election", "kube-system"),
    }


def test_arguments_are_the_containers_with_the_pods_namespace_expanded() -> None:
    env = [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    found = identity(_rendered(["--v=2", "--cluster-resource-namespace=$(POD_NAMESPACE)"], env), "controller", "main")
    assert found.args == ("--v=2", "--cluster-resource-namespace=cm")


def test_an_argument_the_run_cannot_expand_is_refused() -> None:
    with pytest.raises(ChartError, match=r"\$\(NODE_NAME\)"):
        identity(_rendered(["--node=$(NODE_NAME)"]), "controller", "main")


def test_a_missing_deployment_container_or_account_is_named() -> None:
    with pytest.raises(ChartError, match="no Deployment other"):
        identity(_rendered([]), "other", "main")
    with pytest.raises(ChartError, match="no container absent"):
        identity(_rendered([]), "controller", "absent")
    without_account = [d for d in _rendered([]) if d["kind"] != "ServiceAccount"]
    with pytest.raises(ChartError, match="no ServiceAccount cm/controller"):
        identity(without_account, "controller", "main")


def test_the_charts_aggregated_roles_are_installed_with_it() -> None:
    aggregated = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "edit-certs", "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
    }
    assert [r["metadata"]["name"] for r in aggregated_roles([*_rendered([]), aggregated])] == ["edit-certs"]
