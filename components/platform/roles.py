"""The shared ClusterRoles every tenant namespace binds: created once per cluster, not per tenant.

A RoleBinding to a ClusterRole grants its rules inside the binding's namespace only, so four
cluster-wide roles serve every tenant while each grant stays namespaced. That keeps the resource
count per tenant low (the biggest lever on how far the platform scales) and gives one place to
review what each role may do.

Roles never grant write access to the objects the platform owns in a tenant namespace
(ResourceQuota, LimitRange, NetworkPolicy, Role, RoleBinding): RBAC is additive, so leaving them out
is the whole mechanism; the admission policy bundle adds a second lock.

Nor do they grant writes to core Endpoints or EndpointSlices: a hand-written endpoint list behind
a selector-less Service points the shared ingress controller (whose namespace every tenant's
NetworkPolicy admits) at any pod IP, another tenant's included (CVE-2021-25740; upstream removed
Endpoints write from the aggregated `edit`/`admin` roles in 1.22 for the same reason). Services with
selectors get their endpoints from the control plane. Nor CertificateRequests: their request is a
PEM CSR that no admission policy can read, so tenants ask for certificates through Certificates,
whose names the hostname rule checks, and cert-manager writes the CertificateRequest.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.model.core.labels import platform_labels

READ = ["get", "list", "watch"]
WRITE = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]

ROLE_NAMES = {
    "admin": "tenancy-tenant-admin",
    "operator": "tenancy-tenant-operator",
    "viewer": "tenancy-tenant-viewer",
    "deployer": "tenancy-tenant-deployer",
}

# What a tenant builds with: readable by everyone with access, writable by admin and deployer.
_WORKLOADS: list[tuple[str, list[str]]] = [
    ("", ["pods", "services", "configmaps", "persistentvolumeclaims", "serviceaccounts"]),
    ("apps", ["deployments", "statefulsets", "replicasets", "deployments/scale", "statefulsets/scale"]),
    ("batch", ["jobs", "cronjobs"]),
    ("autoscaling", ["horizontalpodautoscalers"]),
    ("policy", ["poddisruptionbudgets"]),
    # Tenant policies can only open paths admission allows (components/admission/rules/network_policies.py).
    ("networking.k8s.io", ["ingresses", "networkpolicies"]),
    ("gateway.networking.k8s.io", ["httproutes", "grpcroutes", "tlsroutes", "listenersets"]),
    ("cert-manager.io", ["certificates"]),
    ("external-secrets.io", ["externalsecrets"]),
]
# Flux objects tenants write, only where the cluster's Flux runs in lockdown (`flux_writes`): on a
# default Flux a HelmRelease that names no service account runs as helm-controller, cluster-admin.
_FLUX: list[tuple[str, list[str]]] = [
    ("helm.toolkit.fluxcd.io", ["helmreleases"]),
    ("source.toolkit.fluxcd.io", ["helmrepositories", "ocirepositories"]),
]
# Platform-owned or observational: readable, never writable by a tenant role.
_READ_ONLY: list[tuple[str, list[str]]] = [
    ("", ["resourcequotas", "limitranges", "events", "pods/log", "namespaces", "endpoints"]),
    ("events.k8s.io", ["events"]),
    ("discovery.k8s.io", ["endpointslices"]),
    ("cert-manager.io", ["certificaterequests"]),
    ("rbac.authorization.k8s.io", ["roles", "rolebindings"]),
    ("source.toolkit.fluxcd.io", ["gitrepositories"]),
    ("kustomize.toolkit.fluxcd.io", ["kustomizations"]),
    ("external-secrets.io", ["secretstores"]),
]


def _rules(groups: list[tuple[str, list[str]]], verbs: list[str]) -> list[k8s.rbac.v1.PolicyRuleArgsDict]:
    return [{"api_groups": [group], "resources": resources, "verbs": verbs} for group, resources in groups]


def role_rules(flux_writes: bool = True) -> dict[str, list[k8s.rbac.v1.PolicyRuleArgsDict]]:
    """The rules of each shared role, by role key (admin, operator, viewer, deployer).

    Without `flux_writes` the Flux kinds are read-only for every role.
    """
    writable = _WORKLOADS + _FLUX if flux_writes else _WORKLOADS
    read_only = _READ_ONLY if flux_writes else _READ_ONLY + _FLUX
    read_all = _rules(writable, READ) + _rules(read_only, READ)
    admin = (
        _rules(writable, WRITE)
        + _rules(read_only, READ)
        + [
            {"api_groups": [""], "resources": ["secrets"], "verbs": WRITE},
            {
                "api_groups": [""],
                "resources": ["pods/exec", "pods/portforward", "pods/attach"],
                "verbs": ["get", "create"],
            },
        ]
    )
    operator: list[k8s.rbac.v1.PolicyRuleArgsDict] = [
        *read_all,
        # Day-to-day: restart (delete pods; their controller recreates them), scale, clean up jobs,
        # read logs, port-forward. Nothing that writes a pod spec: creating a Job or Pod, or patching
        # a Deployment's template, would let an operator (who may not read Secrets) mount any
        # Secret or run as the namespace's cloud identity, and so read what its role withholds.
        # The scale subresource carries only a replica count.
        {"api_groups": [""], "resources": ["pods"], "verbs": ["delete"]},
        {"api_groups": [""], "resources": ["pods/portforward"], "verbs": ["get", "create"]},
        {
            "api_groups": ["apps"],
            "resources": ["deployments/scale", "statefulsets/scale"],
            "verbs": ["update", "patch"],
        },
        {"api_groups": ["batch"], "resources": ["jobs"], "verbs": ["delete"]},
    ]
    # The deployer is what GitOps and CI impersonate: everything admin may write, no interactive access.
    deployer = (
        _rules(writable, WRITE)
        + _rules(read_only, READ)
        + [
            {"api_groups": [""], "resources": ["secrets"], "verbs": WRITE},
        ]
    )
    return {"admin": admin, "operator": operator, "viewer": read_all, "deployer": deployer}


@dataclass
class PlatformRolesArgs:
    """What varies per stack: whether tenants may write Flux objects (the cluster's Flux is locked down)."""

    flux_writes: bool = False
    labels: dict[str, str] | None = None


class PlatformRoles(pulumi.ComponentResource):
    """The four ClusterRoles tenant namespaces bind (`tenancy:index:PlatformRoles`)."""

    role_names: dict[str, str]

    def __init__(self, name: str, args: PlatformRolesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:PlatformRoles", name, None, opts)
        labels = {**platform_labels(), **(args.labels or {})}
        self.role_names = dict(ROLE_NAMES)
        for key, rules in role_rules(args.flux_writes).items():
            k8s.rbac.v1.ClusterRole(
                f"{name}-{key}",
                metadata={"name": ROLE_NAMES[key], "labels": labels},
                rules=rules,
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({"roleNames": self.role_names})
