"""Who may do what inside a virtual cluster: ClusterRoleBindings the chart applies at startup.

Inside the virtual cluster the tenant is the cluster's owner, so its roles are Kubernetes' own
(`cluster-admin`, `view`), bound to the tenant's groups as the host binds its tenant roles: in a
read-only environment (prod) every group views and only GitOps writes. GitOps reaches the virtual
cluster with the exported kubeconfig and, under the cluster Flux's lockdown, impersonates the
deployer's name (`system:serviceaccount:<host namespace>:deployer`, Flux's impersonator for a
remote kubeconfig), so that name is what gets `cluster-admin` here. None of this reaches the host.
"""

from __future__ import annotations

from typing import Any

import yaml

from components.guardrails.access import DEPLOYER_ACCOUNT
from components.model.tenant_file.spec import AccessSpec

_RBAC = "rbac.authorization.k8s.io"


def _binding(name: str, role: str, subjects: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "tenancy"}},
        "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    }


def _groups(groups: list[str]) -> list[dict[str, str]]:
    return [{"kind": "Group", "apiGroup": _RBAC, "name": group} for group in groups]


def inside_bindings(access: AccessSpec, *, namespace: str, read_only: bool) -> list[dict[str, Any]]:
    """The ClusterRoleBindings inside one environment's virtual cluster."""
    deployer = {"kind": "User", "apiGroup": _RBAC, "name": f"system:serviceaccount:{namespace}:{DEPLOYER_ACCOUNT}"}
    bindings = [_binding("tenancy-deployer", "cluster-admin", [deployer])]
    admins = [] if read_only else list(access.admin)
    viewers = list(dict.fromkeys((access.admin if read_only else []) + access.operator + access.viewer))
    if admins:
        bindings.append(_binding("tenancy-admin", "cluster-admin", _groups(admins)))
    if viewers:
        bindings.append(_binding("tenancy-viewer", "view", _groups(viewers)))
    return bindings


def inside_manifests(access: AccessSpec, *, namespace: str, read_only: bool) -> str:
    """The bindings as the multi-document YAML the chart's `experimental.deploy.vcluster.manifests` takes."""
    documents = inside_bindings(access, namespace=namespace, read_only=read_only)
    return yaml.safe_dump_all(documents, sort_keys=False)
