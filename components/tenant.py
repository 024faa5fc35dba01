"""The Tenant component: everything one tenant gets, composed from the per-environment parts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from components.clouds.base import DataBackend
from components.data.summary import TenantData
from components.data.tenant import build_tenant_data
from components.delivery.apps import DeliveryResources, build_delivery
from components.edge.tenant import build_tenant_edge
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.guardrails.namespace import (
    EnvironmentResources,
    build_environment,
    build_kept_namespace,
)
from components.lifecycle import holds_cluster_data, retained_environments, state_of
from components.model.core.labels import namespace_name
from components.model.settings.network import CloudNetworkFacts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec
from components.vcluster.environments import VirtualClusters, build_virtual_clusters


@dataclass
class TenantArgs:
    """A validated tenant spec (already merged for this stack) and the stack's settings."""

    spec: TenantSpec
    settings: StackSettings
    # The cluster's Flux when this stack installs it: the tenant's Flux objects need its CRDs.
    flux: pulumi.Resource | None = field(default=None)
    # The stack's data backend (the cloud's, components/clouds/); None: the tenant gets no data resources.
    data: DataBackend | None = field(default=None)
    # The cloud's network facts (components/clouds/<cloud>/network.py), for the isolation policy.
    network: CloudNetworkFacts = field(default_factory=CloudNetworkFacts)


class Tenant(pulumi.ComponentResource):
    """One tenant (`tenancy:index:Tenant`): per environment a namespace with quota, limits,
    network isolation, RBAC bindings to the shared roles and a deployer account."""

    environments: dict[str, EnvironmentResources]
    namespaces: dict[str, str]
    deployers: dict[str, str]
    delivery: dict[str, DeliveryResources]
    data: TenantData
    virtual_clusters: VirtualClusters
    spec: TenantSpec
    # Namespaces registered only because they hold released data (decommissioned, local).
    retained_namespaces: list[str]

    def __init__(self, name: str, args: TenantArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tenancy:index:Tenant", name, None, opts)
        spec = args.spec
        # Where the cloud keeps tenant data inside namespaces, a namespace holding data is kept like it.
        in_namespaces = args.data is not None and args.data.data_in_namespaces
        self.environments = {}
        # What exists in each lifecycle state is components/lifecycle.py's decision.
        if state_of(spec.lifecycle).environments:
            for environment in spec.environments:
                holds_data = holds_cluster_data(spec, environment, data_in_namespaces=in_namespaces)
                self.environments[environment] = build_environment(
                    self, name, spec, environment, args.settings, holds_data=holds_data, network=args.network
                )
        self.namespaces = {env: res.namespace_name for env, res in self.environments.items()}
        # Databases, secrets, key, identity (components/data/); decommissioned: released, kept, isolated.
        retained = {
            env: build_kept_namespace(self, name, spec, env, args.settings, network=args.network)
            for env in retained_environments(spec, data_in_namespaces=in_namespaces)
        }
        self.data = (
            build_tenant_data(
                parent=self,
                name=name,
                spec=spec,
                backend=args.data,
                settings=args.settings,
                environments=self.environments,
                retained_namespaces=retained,
            )
            if args.data is not None
            else TenantData()
        )
        # A virtual cluster where `isolation` asks for one (components/vcluster/), before GitOps that may target it.
        self.virtual_clusters = build_virtual_clusters(
            self, name, spec, self.environments, args.settings, depends_on=[args.flux] if args.flux else []
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
                gitops_kubeconfig=self.virtual_clusters.gitops_kubeconfigs.get(env),
                domain_suffix=args.settings.domain_suffix,
            )
            for env, res in self.environments.items()
        }
        build_tenant_edge(self, name, spec, self.environments, args.settings, pulumi.get_stack())  # components/edge/
        self.deployers = {
            env: f"system:serviceaccount:{res.namespace_name}:{DEPLOYER_ACCOUNT}"
            for env, res in self.environments.items()
        }
        self.spec = spec
        self.retained_namespaces = sorted(namespace_name(spec.name, env) for env in retained)
        self.register_outputs({"namespaces": self.namespaces, "deployers": self.deployers, "lifecycle": spec.lifecycle})

    def summary(self) -> dict[str, object]:
        """What the tenant's team needs to know, for the stack outputs (no secrets).

        `lifecycle` and `retained` are the operators': once decommissioned, `retained` lists what
        stays in the cloud and cluster (components/lifecycle.py) with the names the cloud gave it.
        """
        lifecycle: dict[str, object] = {"lifecycle": self.spec.lifecycle}
        if self.spec.decommissioned_on is not None:
            lifecycle["decommissionedOn"] = self.spec.decommissioned_on.isoformat()
        released = state_of(self.spec.lifecycle).releases_data
        lifecycle["retained"] = self.data.retained(self.retained_namespaces) if released else {}
        return {
            **lifecycle,
            "namespaces": self.namespaces,
            "deployers": self.deployers,
            "data": self.data.summary(),
            # Which app runs at which version in each environment, and where GitOps reads from.
            "apps": {env: d.apps for env, d in self.delivery.items() if d.apps},
            "gitops": {env: d.gitops for env, d in self.delivery.items() if d.gitops is not None},
            # Read back by components/vcluster/previous.py: keep the key and its environment keys.
            **({"virtualClusters": self.virtual_clusters.summaries} if self.virtual_clusters.summaries else {}),
        }
