"""Checks of `isolation` and `virtualCluster` in a tenant file, each naming the file's field.

`switch_back_problems` is the guard the issue asks for: an environment that had a virtual cluster
in the stack's last deployment and now says `namespace` would lose the virtual cluster's state
store, so the switch is refused unless `virtualCluster.discardState` names that environment.
What the stack deployed last is read by components/vcluster/previous.py and passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from components.model.core.errors import Problem
from components.model.settings.stack import StackSettings
from components.model.tenant_file.isolation import VIRTUAL_CLUSTER, virtual_environments
from components.model.tenant_file.spec import TenantSpec

# A HelmRelease of this name is the virtual cluster's own (components/vcluster/values.py).
_RESERVED_APP = "vcluster"


def uses_virtual_clusters(spec: TenantSpec) -> bool:
    """Whether any environment of the tenant has a virtual cluster."""
    return bool(virtual_environments(spec.isolation, spec.environments))


def isolation_problems(spec: TenantSpec) -> list[tuple[str, str]]:
    """Rules within one file: environments named under `isolation` exist. (`discardState` may name an
    environment being removed from the file; stack_isolation_problems checks it against the stack.)"""
    problems: list[tuple[str, str]] = []
    if isinstance(spec.isolation, dict):
        for environment in sorted(set(spec.isolation) - set(spec.environments)):
            problems.append((f"isolation.{environment}", f"{environment!r} is not one of the tenant's environments"))
    virtual = virtual_environments(spec.isolation, spec.environments)
    for index, app in enumerate(spec.apps):
        in_virtual = set(app.environments or spec.environments) & set(virtual)
        if app.name == _RESERVED_APP and in_virtual:
            problems.append(
                (
                    f"apps.{index}.name",
                    f"{_RESERVED_APP!r} is the virtual cluster's own release in {', '.join(sorted(in_virtual))}",
                )
            )
    return problems


def stack_isolation_problems(spec: TenantSpec, label: str, settings: StackSettings) -> list[Problem]:
    """What a stack must offer before a tenant may have a virtual cluster in it."""
    problems = [
        Problem(label, f"virtualCluster.discardState.{index}", f"{environment!r} is not an environment of this stack")
        for index, environment in enumerate(spec.virtual_cluster.discard_state)
        if environment not in settings.environments
    ]
    if not virtual_environments(spec.isolation, spec.environments):
        return problems
    problems += _registry_problems(settings, label)
    if settings.virtual_clusters.api_server is None and settings.network.api_server is None:
        return [
            *problems,
            Problem(
                label,
                "isolation",
                f"{VIRTUAL_CLUSTER!r} needs the host API server's address for the control plane's syncer: set "
                "tenancy:virtualClusters.apiServer (or tenancy:network.apiServer) in this stack",
            ),
        ]
    return problems


def _registry_problems(settings: StackSettings, label: str) -> list[Problem]:
    """With an image allow-list, the control plane's images must come from an allowed registry,
    or the host's workload rule refuses the control plane itself."""
    allowed = settings.policy.allowed_registries
    registry = settings.virtual_clusters.image_registry
    if not allowed or (registry is not None and any(registry == r or registry.startswith(r + "/") for r in allowed)):
        return []
    where = f"{registry!r} is not" if registry is not None else "no imageRegistry is"
    return [
        Problem(
            label,
            "isolation",
            f"this stack allows images only from {', '.join(allowed)} and {where} among them: set "
            "tenancy:virtualClusters.imageRegistry to a mirror of the vCluster images on that list",
        )
    ]


def switch_back_problems(
    entries: Sequence[tuple[TenantSpec, str]], previous: Mapping[str, Sequence[str]]
) -> list[Problem]:
    """Environments that had a virtual cluster last time and would now lose it unacknowledged.

    `previous` maps tenant names to the environments that had a virtual cluster in the stack's last
    deployment. Dropping such an environment from `environments`, or decommissioning the tenant,
    deletes the virtual cluster with its namespace, so both need the same acknowledgement.
    """
    problems: list[Problem] = []
    for spec, label in entries:
        unacknowledged = set(previous.get(spec.name, ())) - set(spec.virtual_cluster.discard_state)
        for environment in sorted(unacknowledged):
            field, action = _losing_change(spec, environment)
            if field is None:
                continue
            problems.append(
                Problem(
                    label,
                    field,
                    f"{action} deletes the virtual cluster of {environment} and everything stored in it; "
                    f"to accept that, add {environment} to virtualCluster.discardState "
                    "(docs/virtual-clusters.md, Switching back)",
                )
            )
    return problems


def _losing_change(spec: TenantSpec, environment: str) -> tuple[str | None, str]:
    """The field whose change would delete an environment's virtual cluster, and what the change is."""
    if environment not in spec.environments:
        return "environments", f"removing {environment}"
    if spec.lifecycle == "decommissioned":
        return "lifecycle", "decommissioning the tenant"
    if spec.isolation_in(environment) != VIRTUAL_CLUSTER:
        field = f"isolation.{environment}" if isinstance(spec.isolation, dict) else "isolation"
        return field, f"switching {environment} back to 'namespace'"
    return None, ""
