"""The Tenant component: everything one tenant gets, composed from the per-environment parts."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.namespace import DEPLOYER_ACCOUNT, EnvironmentResources, build_environment
from components.settings import StackSettings
from components.spec import TenantSpec


@dataclass
class TenantArgs:
    """A validated tenant spec (already merged for this stack) and the stack's settings."""

    spec: TenantSpec
    settings: StackSettings


class Tenant(pulumi.ComponentResource):
    """One tenant (`tenancy:index:Tenant`): per environment a namespace with quota, limits,
    network isolation, RBAC bindings to the shared roles and a deployer account."""

    environments: dict[str, EnvironmentResources]
    namespaces: dict[str, str]
    deployers: dict[str, str]

    def __init__(self, name: str, args: TenantArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:Tenant", name, None, opts)
        spec = args.spec
        self.environments = {}
        # A decommissioned tenant keeps nothing in the cluster; its data is released elsewhere.
        if spec.lifecycle != "decommissioned":
            for environment in spec.environments:
                self.environments[environment] = build_environment(self, name, spec, environment, args.settings)
        self.namespaces = {env: res.namespace_name for env, res in self.environments.items()}
        self.deployers = {
            env: f"system:serviceaccount:{res.namespace_name}:{DEPLOYER_ACCOUNT}"
            for env, res in self.environments.items()
        }
        self.register_outputs({"namespaces": self.namespaces, "deployers": self.deployers, "lifecycle": spec.lifecycle})

    def summary(self) -> dict[str, object]:
        """What the tenant's team needs to know, for the stack outputs (no secrets)."""
        return {"namespaces": self.namespaces, "deployers": self.deployers}
