"""Rule 2, services: no NodePort, no ExternalName, no externalIPs, LoadBalancer only where allowed.

A NodePort opens a port on every node (other tenants' nodes included); externalIPs let a Service
capture traffic to any address (CVE-2020-8554). The ResourceQuota already caps NodePorts and load
balancers at zero; this rule states the reason at admission and also covers externalIPs, which no
quota can. An ExternalName Service is a DNS alias the shared ingress controller follows: behind a
tenant's Ingress it proxies to any name, another tenant's Service (`web.tenant-b-prod.svc`) or an
internal platform endpoint, from the controller's namespace that every NetworkPolicy admits (the
CVE-2021-25740 pattern without Endpoints). The LoadBalancer switch is the tenant file's
`allowLoadBalancer`, read from the Namespace annotation `tenancy.io/allow-load-balancer`.
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, literal, resource_rule
from components.model.core.labels import ALLOW_LOAD_BALANCER_KEY


def policies() -> list[PolicyDefinition]:
    annotations = "namespaceObject.metadata.annotations"
    key = literal(ALLOW_LOAD_BALANCER_KEY)
    return [
        PolicyDefinition(
            name="tenancy-services",
            rule="services",
            resource_rules=[resource_rule("", ["services"], ["CREATE", "UPDATE"])],
            variables=[
                TENANT_VARIABLE,
                {"name": "type", "expression": "has(object.spec.type) ? object.spec.type : 'ClusterIP'"},
                {
                    "name": "allowLoadBalancer",
                    "expression": f"has({annotations}) && {key} in {annotations} && {annotations}[{key}] == 'true'",
                },
            ],
            validations=[
                {
                    "expression": "variables.type != 'NodePort'",
                    "message": "Services of type NodePort are not allowed in tenant namespaces (they open a port "
                    "on every node); use ClusterIP behind the platform's ingress",
                    "reason": "Forbidden",
                },
                {
                    "expression": "variables.type != 'ExternalName'",
                    "message": "Services of type ExternalName are not allowed in tenant namespaces (the shared "
                    "ingress controller would proxy to whatever name it points at); use a Service with a selector",
                    "reason": "Forbidden",
                },
                {
                    "expression": "variables.type != 'LoadBalancer' || variables.allowLoadBalancer",
                    "message_expression": (
                        "'Services of type LoadBalancer are not allowed for tenant ' + variables.tenant"
                        " + ' (set allowLoadBalancer: true in the tenant file)'"
                    ),
                    "reason": "Forbidden",
                },
                {
                    "expression": "!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0",
                    "message": "Services may not set externalIPs in tenant namespaces",
                    "reason": "Forbidden",
                },
            ],
        )
    ]
