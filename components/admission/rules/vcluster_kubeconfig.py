"""Rule 8 (side doors), the virtual cluster's kubeconfig: written only by the platform or the syncer.

A virtual-cluster environment's GitOps Kustomization runs in the Flux namespace with
`spec.kubeConfig.secretRef` naming the Secret `vcluster-kubeconfig` of the tenant's host namespace
(components/vcluster/environments.py); kustomize-controller connects to whatever server that
kubeconfig names, with whatever credential it holds. The vCluster syncer writes it
(`exportKubeConfig`, components/vcluster/values.py). Tenant roles may write Secrets in their
namespaces (the deployer everywhere), so without this rule a tenant could point the platform's
controller at any address (request forgery from the Flux namespace: the cloud metadata server,
another tenant's virtual API server, the host API server with a token of its choosing).

CREATE and UPDATE of that Secret name are refused except from `platformIdentities` and the
namespace's own syncer account (`system:serviceaccount:<namespace>:vcluster`). Deleting it stays
possible (the syncer writes it again; the Kustomization fails meanwhile, in the tenant's own
environment only).
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, literal, literal_list, resource_rule
from components.vcluster.values import KUBECONFIG_SECRET, SYNCER_ACCOUNT


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    syncer = f"'system:serviceaccount:' + request.namespace + ':' + {literal(SYNCER_ACCOUNT)}"
    platform = (
        f"request.userInfo.username in {literal_list(users)} || (has(request.userInfo.groups)"
        f" && request.userInfo.groups.exists(g, g in {literal_list(groups)}))"
    )
    return [
        PolicyDefinition(
            name="tenancy-vcluster-kubeconfig",
            rule="side_doors",
            resource_rules=[resource_rule("", ["secrets"], ["CREATE", "UPDATE"])],
            match_conditions=[
                {"name": "the-kubeconfig", "expression": f"object.metadata.name == {literal(KUBECONFIG_SECRET)}"},
                {"name": "not-the-platform", "expression": f"!({platform})"},
            ],
            variables=[TENANT_VARIABLE],
            validations=[
                {
                    "expression": f"request.userInfo.username == {syncer}",
                    "message_expression": (
                        f"'Secret {KUBECONFIG_SECRET} of tenant ' + variables.tenant + ' is read by the platform"
                        " to reach the virtual cluster; only the virtual cluster (its syncer) and the platform write"
                        " it (' + request.userInfo.username + ' may not); use another name for a Secret of your own'"
                    ),
                    "reason": "Forbidden",
                }
            ],
        )
    ]
