"""The Tenant component: everything one tenant gets, composed from the per-environment parts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from components.data.tenant import PlatformData, TenantData, build_tenant_data
from components.delivery.apps import DeliveryResources, build_delivery
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.guardrails.namespace import (
    EnvironmentResources,
    build_environment,
    holds_cluster_data,
    register_namespace,
)
from components.model.stack import StackSettings
from components.model.tenant_file import TenantSpec


@dataclass
class TenantArgs:
    """A validated tenant spec (already merged for this stack) and the stack's settings."""

    spec: TenantSpec
    settings: StackSettings
    # The cluster's Flux when this stack installs it: the tenant's Flux objects need its CRDs.
    flux: pulumi.Resource | None = field(default=None)
    # The stack's data backend (components/data/tenant.py); None: the tenant gets no data resources.
    data: PlatformData | None = field(default=None)


class Tenant(pulumi.ComponentResource):
    """One tenant (`tenancy:index:Tenant`): per environment a namespace with quota, limits,
    network isolation, RBAC bindings to the shared roles and a deployer account."""

    environments: dict[str, EnvironmentResources]
    namespaces: dict[str, str]
    deployers: dict[str, str]
    delivery: dict[str, DeliveryResources]
    data: TenantData

    def __init__(self, name: str, args: TenantArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:Tenant", name, None, opts)
        spec = args.spec
        self.environments = {}
        # A decommissioned tenant keeps nothing in the cluster; its data is released elsewhere.
        if spec.lifecycle != "decommissioned":
            for environment in spec.environments:
                self.environments[environment] = build_environment(self, name, spec, environment, args.settings)
        self.namespaces = {env: res.namespace_name for env, res in self.environments.items()}
        # Databases, secrets, key and identity (components/data/tenant.py). Once decommissioned they are
        # registered released; on a local cluster the namespaces holding them are kept with them.
        retained = {
            env: register_namespace(self, name, spec, env, args.settings)
            for env in spec.environments
            if spec.lifecycle == "decommissioned" and holds_cluster_data(spec, env, args.settings)
        }
        self.data = (
            build_tenant_data(self, name, spec, args.settings, args.data, self.environments, retained)
            if args.data is not None
            else TenantData()
        )
        # Apps and GitOps per environment (components/delivery/apps.py); app pods run as the tenant's
        # workload identity where data.py gave the namespace one.
        self.delivery = {
            env: build_delivery(
                self,
                name,
                spec,
                res,
                args.settings.delivery,
                workload_account=self.data.workload_accounts.get(env),
                depends_on=[args.flux] if args.flux else None,
            )
            for env, res in self.environments.items()
        }
        self.deployers = {
            env: f"system:serviceaccount:{res.namespace_name}:{DEPLOYER_ACCOUNT}"
            for env, res in self.environments.items()
        }
        self.register_outputs({"namespaces": self.namespaces, "deployers": self.deployers, "lifecycle": spec.lifecycle})

    def summary(self) -> dict[str, object]:
        """What the tenant's team needs to know, for the stack outputs (no secrets)."""
        return {
            "namespaces": self.namespaces,
            "deployers": self.deployers,
            "data": self.data.summary(),
            # Which app runs at which version in each environment, and where GitOps reads from.
            "apps": {env: d.apps for env, d in self.delivery.items() if d.apps},
            "gitops": {env: d.gitops for env, d in self.delivery.items() if d.gitops is not None},
        }
