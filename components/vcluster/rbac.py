"""What the virtual cluster's syncer may do on the host, and what the tenant's groups may do there.

The syncer's rules follow the chart's own namespaced Role for the kinds this platform syncs
(chart/templates/role.yaml of loft-sh/vcluster, without private nodes): pods and their subresources,
services, config maps, secrets and claims in the tenant's namespace, read access to the namespace's
workloads, endpoints, events and logs; not the chart's endpoint writes (see syncer_rules). It is
a Role, never a ClusterRole: nothing it grants reaches another namespace, a node, or a
cluster-scoped object, and it holds no RBAC verb at all, so it cannot grant itself more
(tests/vcluster/test_rbac.py proves both with tests/rbac.py).

In a virtual-cluster environment the tenant's groups are viewers of the host namespace (their
workloads live in the virtual cluster) plus the access Role here: read the kubeconfig Secret and
port-forward to the control plane. Inside the virtual cluster the kubeconfig is cluster-admin.

The installer (issue 43) is what helm-controller applies the vCluster release as: exactly the kinds
the chart renders with the platform's values (a StatefulSet, Services, the config Secret and
CoreDNS's ConfigMap) and the Secrets Helm keeps its release records in, in the host namespace only.
No pods, no RBAC verb: the StatefulSet controller makes the control plane pod, and the installer
grants nothing. Its rights are no more than the deployer's; what sets it apart is its name, which
admission keeps the release's objects to (components/admission/rules/vcluster_release.py).
"""

from __future__ import annotations

import pulumi_kubernetes as k8s

from components.vcluster.values import KUBECONFIG_SECRET, RELEASE_NAME

SYNCER_ROLE = "tenancy-vcluster-syncer"
ACCESS_ROLE = "tenancy-vcluster-access"
INSTALLER_ROLE = "tenancy-vcluster-installer"
_CRUD = ["create", "delete", "patch", "update", "get", "list", "watch"]
_READ = ["get", "list", "watch"]

Rules = list[k8s.rbac.v1.PolicyRuleArgsDict]


def syncer_rules() -> Rules:
    """The syncer's Role in the tenant's host namespace."""
    return [
        {
            "api_groups": [""],
            "resources": [
                "configmaps",
                "secrets",
                "services",
                "pods",
                "pods/attach",
                "pods/portforward",
                "pods/exec",
                "persistentvolumeclaims",
            ],
            "verbs": _CRUD,
        },
        {"api_groups": [""], "resources": ["pods/status", "pods/ephemeralcontainers"], "verbs": ["patch", "update"]},
        {"api_groups": ["apps"], "resources": ["statefulsets", "replicasets", "deployments"], "verbs": _READ},
        # Endpoints are read only: whoever writes them picks the addresses a Service (and the shared
        # ingress controller behind an Ingress) sends traffic to, any pod of any tenant included
        # (CVE-2021-25740). The deployer can run a pod as this account, so it must not hold that
        # right; the values turn the syncer's endpoint sync off (values.py).
        {"api_groups": [""], "resources": ["endpoints", "events", "pods/log"], "verbs": _READ},
    ]


def access_rules() -> Rules:
    """What the tenant's admin groups need on the host namespace beyond viewing it: the kubeconfig
    and a tunnel to the control plane, by name only."""
    return [
        {"api_groups": [""], "resources": ["secrets"], "resource_names": [KUBECONFIG_SECRET], "verbs": ["get"]},
        {
            "api_groups": [""],
            "resources": ["pods/portforward"],
            "resource_names": [f"{RELEASE_NAME}-0"],
            "verbs": ["get", "create"],
        },
    ]


def installer_rules() -> Rules:
    """What helm-controller needs to install, upgrade, correct drift of and uninstall the vCluster
    release as the installer: the chart's objects (chart 0.20.0 with values.py's values renders
    these four kinds and no other) and Helm's release records (Secrets, the storage driver
    helm-controller uses). Helm's readiness wait reads the same kinds back."""
    return [
        {"api_groups": [""], "resources": ["secrets", "configmaps", "services"], "verbs": _CRUD},
        {"api_groups": ["apps"], "resources": ["statefulsets"], "verbs": _CRUD},
    ]


# Shared ClusterRoles, created once per cluster and bound per namespace (ADR 0006): a RoleBinding to
# a ClusterRole grants its rules in that one namespace only.
ROLE_RULES = {SYNCER_ROLE: syncer_rules, ACCESS_ROLE: access_rules, INSTALLER_ROLE: installer_rules}
