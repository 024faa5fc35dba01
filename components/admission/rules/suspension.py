"""Rule 9, suspension: a suspended tenant's namespaces take no new or changed Ingress or route.

A suspended tenant's hostnames stop being served in two ways (components/lifecycle.py): its
isolation policy no longer admits traffic from the platform namespaces, where the ingress
controllers and gateways run, and this rule keeps anyone from publishing a hostname there again
while the tenant is suspended. The Namespace label `tenancy.io/suspended` is the platform's (the
platform-owned rule locks tenant Namespaces), so a tenant cannot lift the mark itself.

Writes that take an object away stay possible: DELETE is not matched, and an UPDATE of an object
already being deleted passes so controllers can remove their finalizers. Status updates go to the
`status` subresource, which this rule does not match. Resuming drops the label and the rule lets
every write through again.
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, namespace_label, resource_rule
from components.model.labels import SUSPENDED_KEY

_WRITE = ["CREATE", "UPDATE"]
# Every kind that attaches a hostname or a listener port of a shared controller to a tenant Service.
_GATEWAY_ROUTES = ["httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "listenersets"]


def policies() -> list[PolicyDefinition]:
    """One policy over Ingresses and Gateway API routes: it reads only the Namespace and metadata."""
    return [
        PolicyDefinition(
            name="tenancy-suspension",
            rule="suspension",
            resource_rules=[
                resource_rule("networking.k8s.io", ["ingresses"], _WRITE),
                resource_rule("gateway.networking.k8s.io", _GATEWAY_ROUTES, _WRITE),
            ],
            variables=[
                TENANT_VARIABLE,
                {"name": "suspended", "expression": f"({namespace_label(SUSPENDED_KEY)}) == 'true'"},
            ],
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
    ]
