"""The cluster's admission policy bundle: tenant isolation enforced by the API server itself.

Native ValidatingAdmissionPolicy (CEL) rather than a webhook: nothing to install, upgrade or time
out, and a policy failure can fail closed without an outage of a webhook service. Created once
per cluster; every policy selects tenant namespaces by the `tenancy.io/tenant` label and reads
per-tenant data (authorized domains, node pool, groups, load balancer switch) from the tenant
Namespace, so adding a tenant changes data and never a policy.

Each rule (components/admission/rules/) becomes a ValidatingAdmissionPolicy plus a binding whose
validationActions come from the stack's rollout switch (`tenancy:policy.actions`). On clusters
with MutatingAdmissionPolicy v1 (Kubernetes 1.36+) the bundle also injects each pod's node pool.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.admission.rules import PolicyDefinition, node_pool, validating_policies
from components.model.core.labels import TENANT_KEY, platform_labels
from components.model.settings.admission import PolicySettings, RuleAction
from components.platform.roles import ROLE_NAMES
from components.vcluster.rbac import ROLE_RULES as VIRTUAL_CLUSTER_ROLES

# Deny and Warn may not be combined in one binding; Warn also records the violation in the audit log.
VALIDATION_ACTIONS: dict[RuleAction, list[str]] = {"Deny": ["Deny"], "Warn": ["Warn", "Audit"], "Audit": ["Audit"]}
# MutatingAdmissionPolicy is admissionregistration.k8s.io/v1 (GA) from this minor version on.
MUTATING_POLICY_MINOR = 36
NODE_POOL_MUTATION = "tenancy-node-pool-injection"


def minor_version(kubernetes_version: str) -> int:
    """`1.36` -> 36 (the settings model only admits 1.x versions)."""
    return int(kubernetes_version.split(".")[1])


def has_mutating_policies(kubernetes_version: str) -> bool:
    return minor_version(kubernetes_version) >= MUTATING_POLICY_MINOR


def tenant_namespace_selector() -> k8s.meta.v1.LabelSelectorArgsDict:
    """Tenant namespaces only: platform and system namespaces are never matched."""
    return {"match_expressions": [{"key": TENANT_KEY, "operator": "Exists"}]}


def _match_constraints(
    definition: PolicyDefinition,
) -> k8s.admissionregistration.v1.MatchResourcesArgsDict:
    """Tenant namespaces by their label, or (for the Namespace lock) the object's own labels, or everything."""
    if definition.cluster_wide:
        return {"resource_rules": definition.resource_rules}
    if definition.object_selector is not None:
        return {"resource_rules": definition.resource_rules, "object_selector": definition.object_selector}
    return {"resource_rules": definition.resource_rules, "namespace_selector": tenant_namespace_selector()}


def bindable_roles() -> list[str]:
    """The ClusterRoles RoleBindings in tenant namespaces may reference: the tenant roles, and the
    virtual cluster's syncer and access roles (components/vcluster/rbac.py), which are namespace-scoped
    once bound and which Kubernetes' escalation check keeps a tenant from granting beyond its own rights."""
    return sorted([*ROLE_NAMES.values(), *VIRTUAL_CLUSTER_ROLES])


@dataclass
class PolicyBundleArgs:
    """The stack's policy settings and the cluster's Kubernetes minor version (`1.36`)."""

    settings: PolicySettings
    kubernetes_version: str
    # The StorageClasses tenant claims may name (components/platform/storage.py renders them).
    storage_classes: list[str]
    # The platform Gateway (namespace, name) tenant routes and ListenerSets may attach to; None: no rule.
    gateway: tuple[str, str] | None = None
    # The cluster Flux's namespace (`delivery.fluxNamespace`): its helm-controller writes the HelmChart
    # of each virtual cluster's release (rules/vcluster_release.py).
    flux_namespace: str = "flux-system"


class PolicyBundle(pulumi.ComponentResource):
    """Admission policies and bindings for every tenant namespace (`tenancy:index:PolicyBundle`)."""

    policy_names: list[str]

    def __init__(self, name: str, args: PolicyBundleArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:PolicyBundle", name, None, opts)
        labels = platform_labels()
        child = pulumi.ResourceOptions(parent=self)
        self.policy_names = []
        if args.settings.enabled:
            for definition in validating_policies(
                args.settings, bindable_roles(), args.storage_classes, args.gateway, args.flux_namespace
            ):
                action = getattr(args.settings.actions, definition.rule)
                self._validating(name, definition, VALIDATION_ACTIONS[action], labels, child)
            if args.settings.inject_node_pool and has_mutating_policies(args.kubernetes_version):
                self._node_pool_mutation(name, labels, child)
        self.register_outputs({"policyNames": self.policy_names})

    def _validating(
        self,
        name: str,
        definition: PolicyDefinition,
        actions: list[str],
        labels: dict[str, str],
        opts: pulumi.ResourceOptions,
    ) -> None:
        short = definition.name.removeprefix("tenancy-")
        policy = k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
            f"{name}-{short}",
            metadata={"name": definition.name, "labels": labels},
            spec={
                # Fail closed: an expression error denies rather than silently admitting.
                "failure_policy": "Fail",
                "match_constraints": _match_constraints(definition),
                **({"match_conditions": definition.match_conditions} if definition.match_conditions else {}),
                "variables": definition.variables,
                "validations": definition.validations,
            },
            opts=opts,
        )
        k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
            f"{name}-{short}-binding",
            metadata={"name": definition.name, "labels": labels},
            spec={"policy_name": definition.name, "validation_actions": actions},
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[policy])),
        )
        self.policy_names.append(definition.name)

    def _node_pool_mutation(self, name: str, labels: dict[str, str], opts: pulumi.ResourceOptions) -> None:
        policy = k8s.admissionregistration.v1.MutatingAdmissionPolicy(
            f"{name}-node-pool-injection",
            metadata={"name": NODE_POOL_MUTATION, "labels": labels},
            spec=node_pool.mutation(),
            opts=opts,
        )
        k8s.admissionregistration.v1.MutatingAdmissionPolicyBinding(
            f"{name}-node-pool-injection-binding",
            metadata={"name": NODE_POOL_MUTATION, "labels": labels},
            spec={"policy_name": NODE_POOL_MUTATION},
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[policy])),
        )
        self.policy_names.append(NODE_POOL_MUTATION)
