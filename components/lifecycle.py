"""What each lifecycle state of a tenant (`lifecycle:` in its file) keeps, releases or removes.

Offboarding is deliberate and takes two steps, never the side effect of deleting a file:
- active: everything exists; data is protected (Pulumi refuses to delete it).
- suspended: everything stays, nothing new starts, reconciles or is published: the quota admits no
  pod, the Flux objects the platform renders are suspended, platform-managed app workloads (image
  apps) scale to zero, people keep read access only, and the namespace is marked suspended
  (`tenancy.io/suspended`) so its isolation policy admits no traffic from platform namespaces
  (ingress controllers, gateways) and admission refuses new or changed Ingresses and routes, new
  load balancers, policies admitting addresses and unsuspended Flux objects there. Pods already
  running keep running, and a load balancer from before the suspension keeps serving them
  (docs/operations.md#suspend-a-tenant). Data and identities stay. Every
  suspension switch is an addition to the active render, so resuming renders it exactly again.
- decommissioned: the namespaces, their guard rails and deliveries are removed; the data (databases,
  keys, secrets, identity) is *released*: registered unprotected and retained on delete, so removing
  the tenant file afterwards takes it out of Pulumi's state and leaves it in the cloud. Where data
  lives inside a namespace (a local cluster), that namespace is kept and released with it, and keeps
  its isolation for as long as it holds the data: the quota (admitting no new pod),
  the limits and a default-deny NetworkPolicy that only the platform's operators pass; nobody but
  the platform has access (no people's or deployer's bindings), and nothing is served
  (components/guardrails/namespace.py `build_kept_namespace`, tests/engine/test_kept_namespaces.py).

`Guard` (components/clouds/base.py) is the one object that turns these decisions into protect and
retain options; this module says which guard each state gets.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.clouds.base import Guard
from components.model.core.labels import SUSPENDED_KEY
from components.model.tenant_file.spec import Lifecycle, TenantSpec


@dataclass(frozen=True)
class LifecycleState:
    """What exists for a tenant in one lifecycle state."""

    # The tenant's namespaces with quota, limits, isolation, bindings, apps and secret delivery.
    environments: bool
    # Whether the quota lets pods be admitted.
    admits_pods: bool
    # Data-bearing resources are released: unprotected and retained when they leave the state.
    releases_data: bool
    # Flux reconciles the tenant's sources, releases and kustomizations (else `spec.suspend: true`).
    reconciles: bool = True
    # Platform namespaces (ingress controllers, gateways) reach the tenant's pods: hostnames are served.
    serves_traffic: bool = True
    # People get the roles of their groups (else viewer only, as in read-only environments).
    people_write: bool = True


STATES: dict[Lifecycle, LifecycleState] = {
    "active": LifecycleState(environments=True, admits_pods=True, releases_data=False),
    "suspended": LifecycleState(
        environments=True,
        admits_pods=False,
        releases_data=False,
        reconciles=False,
        serves_traffic=False,
        people_write=False,
    ),
    # Nothing serves, reconciles or is written by people: what stays (kept namespaces) only holds data.
    "decommissioned": LifecycleState(
        environments=False,
        admits_pods=False,
        releases_data=True,
        reconciles=False,
        serves_traffic=False,
        people_write=False,
    ),
}


def state_of(lifecycle: Lifecycle) -> LifecycleState:
    """The decisions for one state."""
    return STATES[lifecycle]


def suspension_labels(lifecycle: Lifecycle) -> dict[str, str]:
    """Namespace labels that mark a suspended tenant (or a decommissioned one's kept namespaces), for
    admission rules and people to read.

    Empty while the tenant serves, so an active namespace renders exactly as before suspension.
    """
    return {} if state_of(lifecycle).serves_traffic else {SUSPENDED_KEY: "true"}


def people_read_only(lifecycle: Lifecycle, *, environment_read_only: bool) -> bool:
    """Whether people get viewer only: in read-only environments, and in every environment of a
    tenant whose state takes their write access away (suspended)."""
    return environment_read_only or not state_of(lifecycle).people_write


def data_guard(*, parent: pulumi.Resource, lifecycle: Lifecycle, protect: bool) -> Guard:
    """How a tenant's data-bearing resources are registered in this state."""
    return Guard(
        base=pulumi.ResourceOptions(parent=parent),
        protect=protect,
        release=state_of(lifecycle).releases_data,
    )


def holds_cluster_data(spec: TenantSpec, environment: str, *, data_in_namespaces: bool) -> bool:
    """Whether the environment's namespace itself holds data: where the cloud keeps databases and
    secrets in tenant namespaces, deleting the namespace would delete them (CloudNativePG volumes
    go with their Cluster)."""
    return data_in_namespaces and bool(
        spec.in_environment(spec.databases, environment) or spec.in_environment(spec.secrets, environment)
    )


def namespace_options(
    *, parent: pulumi.Resource, lifecycle: Lifecycle, protect: bool, holds_data: bool
) -> pulumi.ResourceOptions:
    """A namespace holding data is protected like the data (removing the tenant file then fails
    the preview) and released with it: kept in the cluster when it leaves Pulumi's state."""
    released = holds_data and state_of(lifecycle).releases_data
    return pulumi.ResourceOptions(
        parent=parent,
        protect=holds_data and protect and not released,
        retain_on_delete=released,
    )


def retained_environments(spec: TenantSpec, *, data_in_namespaces: bool) -> list[str]:
    """Environments whose namespace is registered although the state keeps no environment: they
    hold data that is being released."""
    if state_of(spec.lifecycle).environments:
        return []
    return [
        environment
        for environment in spec.environments
        if holds_cluster_data(spec, environment, data_in_namespaces=data_in_namespaces)
    ]
