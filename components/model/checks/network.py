"""Tenant network requests checked against the stack: a tenant asks only for egress the stack allows,
and in the ClusterNetworkPolicy mode nothing renders beyond the CRD's item limits."""

from __future__ import annotations

from collections.abc import Collection, Sequence, Sized

from components.model.core.errors import Problem
from components.model.settings.network import CLUSTER_MODE, CloudNetworkFacts
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec

# ClusterNetworkPolicy's limit on rules per direction, peers, networks and protocols per rule.
MAX_ITEMS = 25


def network_problems(spec: TenantSpec, settings: StackSettings) -> list[tuple[str, str]]:
    """(field path, message) for every `egress` name the stack does not define, and (in the
    ClusterNetworkPolicy mode) every list that would exceed the CRD's limits."""
    allowed = settings.network.egress
    known = ", ".join(sorted(allowed)) or "none"
    problems = [
        (f"egress.{index}", f"{name!r} is not an egress entry of this stack (tenancy:network.egress: {known})")
        for index, name in enumerate(spec.egress)
        if name not in allowed
    ]
    if settings.network.mode == CLUSTER_MODE:
        problems += _over_limit("acceptsFrom", spec.accepts_from, MAX_ITEMS - 1)
        problems += _over_limit("connectsTo", spec.connects_to, MAX_ITEMS - 1)
        for index, peer in enumerate(spec.accepts_from):
            problems += _over_limit(f"acceptsFrom.{index}.ports", peer.ports)
    return problems


def _over_limit(where: str, items: Sized, limit: int = MAX_ITEMS) -> list[tuple[str, str]]:
    if len(items) <= limit:
        return []
    return [(where, f"at most {limit} in tenancy:network.mode {CLUSTER_MODE} (ClusterNetworkPolicy limit)")]


def _cluster_limits(settings: StackSettings, facts: CloudNetworkFacts) -> list[tuple[str, str]]:
    """Stack settings that would render a ClusterNetworkPolicy beyond the CRD's item limits."""
    network = settings.network
    operators = {**facts.operators, **network.operators}
    found = _over_limit("tenancy:platformNamespaces", [*settings.platform_namespaces, *operators])
    for index, platform in enumerate(settings.platform_namespaces):
        found += _over_limit(f"tenancy:platformNamespaces.{index}.ports", platform.ports)
    for name, operator in network.operators.items():
        found += _over_limit(f"tenancy:network.operators.{name}.ports", operator.ports)
    for name, entry in network.egress.items():
        found += _over_limit(f"tenancy:network.egress.{name}.cidrs", entry.cidrs)
        found += _over_limit(f"tenancy:network.egress.{name}.ports", entry.ports)
    if network.api_server is not None:
        found += _over_limit("tenancy:network.apiServer.cidrs", network.api_server.cidrs)
        found += _over_limit("tenancy:network.apiServer.ports", network.api_server.ports)
    return found


def network_stack_problems(settings: StackSettings, facts: CloudNetworkFacts) -> list[Problem]:
    """Stack settings that the ClusterNetworkPolicy mode would render beyond the CRD's limits."""
    if settings.network.mode != CLUSTER_MODE:
        return []
    return [Problem(settings.source, where, message) for where, message in _cluster_limits(settings, facts)]


def consent_problems(tenants: Sequence[tuple[TenantSpec, str]], *, unreadable: Collection[str] = ()) -> list[Problem]:
    """Paths between tenants need both files: `acceptsFrom` on the receiving side, `connectsTo` on the
    sending side. A one-sided or unknown name is refused, naming the file that lacks the other half.
    A peer in `unreadable` (its file has problems of its own) is not judged: its file is what to fix."""
    by_name = {spec.name: (spec, label) for spec, label in tenants}
    problems: list[Problem] = []
    for spec, label in tenants:
        for index, peer in enumerate(spec.accepts_from):
            where = f"acceptsFrom.{index}.tenant"
            if peer.tenant in unreadable:
                continue
            other = by_name.get(peer.tenant)
            if other is None or peer.tenant == spec.name:
                problems.append(Problem(label, where, f"{peer.tenant!r} is not another tenant of this stack"))
            elif spec.name not in other[0].connects_to:
                message = f"{peer.tenant!r} does not consent: {other[1]} has no {spec.name!r} in connectsTo"
                problems.append(Problem(label, where, message))
        for index, name in enumerate(spec.connects_to):
            if name in unreadable:
                continue
            target = by_name.get(name)
            if target is None or name == spec.name:
                problems.append(Problem(label, f"connectsTo.{index}", f"{name!r} is not another tenant of this stack"))
            elif spec.name not in [p.tenant for p in target[0].accepts_from]:
                message = f"{name!r} does not consent: {target[1]} has no {spec.name!r} in acceptsFrom"
                problems.append(Problem(label, f"connectsTo.{index}", message))
    return problems
