"""Rule 1 (hostnames), gateway parents: tenant routes and ListenerSets attach to the platform Gateway only.

The hostname policies keep what a tenant claims to its own names; this keeps *where* it claims them.
Gateway API lets a route name any parent (`parentRefs`): another Gateway of the cluster (a platform-
internal one whose listeners admit routes from all namespaces), a Service (mesh attachment), or
another namespace's ListenerSet. A tenant route may name only:
- the platform Gateway (`tenancy:edge.gateway`, group gateway.networking.k8s.io, kind Gateway), or
- a ListenerSet in its own namespace (the tenant's own domains; `namespace` omitted or its own).
A tenant ListenerSet's `parentRef` must be the platform Gateway. A namespace omitted from a
Gateway parentRef means the route's own namespace (Gateway API ParentReference.namespace), so
it never names the platform Gateway and is denied.

The Gateway's own `allowedRoutes`/`allowedListeners` (tenant label selector) are the other half:
a route in a non-tenant namespace is never attached (components/edge/platform.py).
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, literal, resource_rule

_WRITE = ["CREATE", "UPDATE"]
_GROUP = "gateway.networking.k8s.io"


def _is_gateway(ref: str, namespace: str, name: str) -> str:
    """CEL: `ref` names the platform Gateway (group and kind default to Gateway API's Gateway)."""
    return (
        f"(!has({ref}.group) || {ref}.group == '{_GROUP}') && (!has({ref}.kind) || {ref}.kind == 'Gateway')"
        f" && has({ref}.namespace) && {ref}.namespace == {literal(namespace)} && {ref}.name == {literal(name)}"
    )


def _is_own_listener_set(ref: str) -> str:
    """CEL: `ref` names a ListenerSet in the request's own namespace."""
    return (
        f"has({ref}.kind) && {ref}.kind == 'ListenerSet' && has({ref}.group) && {ref}.group == '{_GROUP}'"
        f" && (!has({ref}.namespace) || {ref}.namespace == request.namespace)"
    )


def routes_policy(namespace: str, name: str) -> PolicyDefinition:
    """HTTPRoute, GRPCRoute and TLSRoute `spec.parentRefs`."""
    allowed = f"({_is_gateway('p', namespace, name)}) || ({_is_own_listener_set('p')})"
    return PolicyDefinition(
        name="tenancy-gateway-parents-routes",
        rule="hostnames",
        resource_rules=[resource_rule(_GROUP, ["httproutes", "grpcroutes", "tlsroutes"], _WRITE)],
        variables=[
            TENANT_VARIABLE,
            {"name": "parents", "expression": "has(object.spec.parentRefs) ? object.spec.parentRefs : []"},
            {"name": "denied", "expression": f"variables.parents.filter(p, !({allowed})).map(p, p.name)"},
        ],
        validations=[
            {
                "expression": "size(variables.denied) == 0",
                "message_expression": (
                    "object.kind + ' parent ' + variables.denied[0] + ' is not the platform Gateway "
                    f"{namespace}/{name} or a ListenerSet of tenant ' + variables.tenant + ' in this namespace'"
                ),
                "reason": "Forbidden",
            },
        ],
    )


def listenersets_policy(namespace: str, name: str) -> PolicyDefinition:
    """ListenerSet `spec.parentRef`."""
    return PolicyDefinition(
        name="tenancy-gateway-parents-listenersets",
        rule="hostnames",
        resource_rules=[resource_rule(_GROUP, ["listenersets"], _WRITE)],
        variables=[TENANT_VARIABLE],
        validations=[
            {
                "expression": f"has(object.spec.parentRef) && {_is_gateway('object.spec.parentRef', namespace, name)}",
                "message": "a ListenerSet in a tenant namespace attaches to the platform Gateway "
                f"{namespace}/{name} only",
                "reason": "Forbidden",
            },
        ],
    )


def policies(gateway: tuple[str, str] | None) -> list[PolicyDefinition]:
    """Both policies for the platform Gateway (namespace, name); none where the stack has no Gateway."""
    if gateway is None:
        return []
    return [routes_policy(*gateway), listenersets_policy(*gateway)]
