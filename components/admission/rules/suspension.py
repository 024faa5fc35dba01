"""Rule 9, suspension: a suspended tenant's namespaces take nothing new that serves or reconciles.

A suspended tenant's hostnames stop being served in two ways (components/lifecycle.py): its
isolation policy no longer admits traffic from the platform namespaces, where the ingress
controllers and gateways run, and `tenancy-suspension` keeps anyone from publishing a hostname
there again while the tenant is suspended. The Namespace label `tenancy.io/suspended` is the
platform's (the platform-owned rule locks tenant Namespaces), so a tenant cannot lift the mark itself.

The deployer keeps its rights while suspended (GitOps and CI identities stay), so the other ways
it could serve or reconcile are closed too:
- `tenancy-suspension-load-balancers`: no Service becomes `type: LoadBalancer` (created, or
  changed from another type) and no tenant NetworkPolicy admitting ingress from an ipBlock is
  written, so a tenant with `allowLoadBalancer` cannot open a new path from outside. Load
  balancers and policies that existed before the suspension are left as they are: they serve the
  pods that still run (docs/operations.md says so).
- `tenancy-suspension-flux`: every HelmRelease, Kustomization or source written must carry
  `spec.suspend: true`, so nobody unsuspends what the platform suspended or starts a new one. The
  platform identities are not matched: they render the tenant file, which suspends its objects
  (the platform's own NetworkPolicies carry the platform-owned label, guarded by that rule).

Writes that take an object away stay possible: DELETE is not matched, and an UPDATE of an object
already being deleted passes so controllers can remove their finalizers; an UPDATE of a Flux
object that leaves its spec as it was passes too (the controllers' finalizers). Status updates go
to the `status` subresource, which no rule here matches. Resuming drops the label and the rules
let every write through again.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Validation,
    Variable,
    literal,
    namespace_label,
    resource_rule,
)
from components.admission.rules.flux import flux_resource_rules, platform_requester
from components.model.core.labels import PLATFORM_OWNED_KEY, SUSPENDED_KEY

_WRITE = ["CREATE", "UPDATE"]
# Every kind that attaches a hostname or a listener port of a shared controller to a tenant Service.
_GATEWAY_ROUTES = ["httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "listenersets"]


_VARIABLES: list[Variable] = [
    TENANT_VARIABLE,
    {"name": "suspended", "expression": f"({namespace_label(SUSPENDED_KEY)}) == 'true'"},
]
_SUSPENDED = "'tenant ' + variables.tenant + ' is suspended: '"
_RESUME = "' (set lifecycle: active in the tenant file to resume)'"
_LEAVING = "!variables.suspended || has(object.metadata.deletionTimestamp)"
_OWNED = literal(PLATFORM_OWNED_KEY)


def _load_balancer_validations() -> list[Validation]:
    service = "request.resource.resource == 'services'"
    new_lb = (
        "(has(object.spec.type) && object.spec.type == 'LoadBalancer') && (request.operation == 'CREATE'"
        " || !has(oldObject.spec.type) || oldObject.spec.type != 'LoadBalancer')"
    )
    opens = "has(object.spec.ingress) && object.spec.ingress.exists(r, has(r.from) && r.from.exists(p, has(p.ipBlock)))"
    owned = f"has(object.metadata.labels) && {_OWNED} in object.metadata.labels"
    return [
        {
            "expression": f"{_LEAVING} || !({service}) || !({new_lb})",
            "message_expression": f"{_SUSPENDED} + 'no Service may become type LoadBalancer' + {_RESUME}",
            "reason": "Forbidden",
        },
        {
            "expression": f"{_LEAVING} || {service} || ({owned}) || !({opens})",
            "message_expression": (
                f"{_SUSPENDED} + 'no NetworkPolicy admitting ingress from addresses may be written' + {_RESUME}"
            ),
            "reason": "Forbidden",
        },
    ]


FLUX_POLICY = "tenancy-suspension-flux"


def _flux(users: list[str], groups: list[str]) -> PolicyDefinition:
    return PolicyDefinition(
        name=FLUX_POLICY,
        rule="suspension",
        resource_rules=flux_resource_rules(),
        match_conditions=[
            {"name": "tenant-authored", "expression": f"!({platform_requester(users, groups)})"},
            {
                "name": "spec-changed",
                "expression": "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec)"
                " || object.spec != oldObject.spec",
            },
        ],
        variables=_VARIABLES,
        validations=[
            {
                "expression": f"{_LEAVING} || (has(object.spec.suspend) && object.spec.suspend == true)",
                "message_expression": (
                    f"{_SUSPENDED} + request.kind.kind + ' ' + object.metadata.name + ' must keep spec.suspend: true'"
                    f" + {_RESUME}"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    """Hostnames, new load balancers and Flux objects; the first two read only the Namespace and object."""
    load_balancers = PolicyDefinition(
        name="tenancy-suspension-load-balancers",
        rule="suspension",
        resource_rules=[
            resource_rule("", ["services"], _WRITE),
            resource_rule("networking.k8s.io", ["networkpolicies"], _WRITE),
        ],
        variables=_VARIABLES,
        validations=_load_balancer_validations(),
    )
    return [
        _hostnames(),
        load_balancers,
        _flux(users, groups),
    ]


def _hostnames() -> PolicyDefinition:
    return PolicyDefinition(
        name="tenancy-suspension",
        rule="suspension",
        resource_rules=[
            resource_rule("networking.k8s.io", ["ingresses"], _WRITE),
            resource_rule("gateway.networking.k8s.io", _GATEWAY_ROUTES, _WRITE),
        ],
        variables=_VARIABLES,
        validations=[
            {
                "expression": "!variables.suspended || has(object.metadata.deletionTimestamp)",
                "message_expression": (
                    "'tenant ' + variables.tenant + ' is suspended: its hostnames are not served, so no '"
                    " + request.kind.kind + ' may be created or changed (set lifecycle: active in the "
                    "tenant file to resume)'"
                ),
                "reason": "Forbidden",
            }
        ],
    )
