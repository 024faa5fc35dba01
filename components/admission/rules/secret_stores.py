"""Rule 8, secret stores: in tenant namespaces, ExternalSecrets and PushSecrets may use only a
namespaced SecretStore, never a cluster-wide store or generator; only the platform may.

Attack and legitimate use, played through the layers in order:
- RBAC (components/platform/roles.py) lets tenant admins and the deployer write ExternalSecrets in
  their own namespaces (PushSecrets not at all; they are covered here in case a role ever grants
  them). SecretStores are read-only to tenants: the one in each namespace is the platform's and
  authenticates as that tenant's cloud identity.
- The shared platform secrets are read through the ClusterSecretStore `tenancy-shared`, whose cloud
  identity may read every shared secret. ESO lets any namespace its `conditions` admit reference it
  with any remote key, so an ExternalSecret written by a tenant could read every shared secret,
  entitled or not. The platform registers the shared-secret ExternalSecrets itself (labelled
  platform-owned, so the platform-owned rule keeps tenants from changing them) and this rule denies
  any tenant-written reference to a ClusterSecretStore (`spec.secretStoreRef`,
  `spec.data[].sourceRef.storeRef`, `spec.dataFrom[].sourceRef.storeRef`, PushSecret
  `spec.secretStoreRefs[]`) and to a `ClusterGenerator` (`sourceRef.generatorRef`,
  PushSecret `spec.selector.generatorRef`). A missing kind means SecretStore (the CRD's default).
  The store's conditions list only the entitled namespaces as a second lock.
- Allowed: the configured platform identities (the identity `pulumi up` runs as), and an UPDATE
  that leaves `spec` unchanged (controllers touching metadata of an existing object; the spec, the
  only place a store is named, was admitted when it was written).
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, literal_list, resource_rule

_CLUSTER_STORE = "'ClusterSecretStore'"
_CLUSTER_GENERATOR = "'ClusterGenerator'"
# A store reference `r` naming a cluster-wide store; no kind means SecretStore.
_CLUSTER_REF = f"(has(r.kind) && r.kind == {_CLUSTER_STORE})"
# One data / dataFrom entry `d` whose sourceRef names a cluster-wide store or generator.
_CLUSTER_SOURCE = (
    "(has(d.sourceRef) && ((has(d.sourceRef.storeRef) && has(d.sourceRef.storeRef.kind)"
    f" && d.sourceRef.storeRef.kind == {_CLUSTER_STORE}) || (has(d.sourceRef.generatorRef)"
    f" && has(d.sourceRef.generatorRef.kind) && d.sourceRef.generatorRef.kind == {_CLUSTER_GENERATOR})))"
)
_EXTERNAL_SECRET = (
    "(has(object.spec.secretStoreRef) && has(object.spec.secretStoreRef.kind)"
    f" && object.spec.secretStoreRef.kind == {_CLUSTER_STORE})"
    f" || (has(object.spec.data) && object.spec.data.exists(d, {_CLUSTER_SOURCE}))"
    f" || (has(object.spec.dataFrom) && object.spec.dataFrom.exists(d, {_CLUSTER_SOURCE}))"
)

_PUSH_SECRET = (
    f"(has(object.spec.secretStoreRefs) && object.spec.secretStoreRefs.exists(r, {_CLUSTER_REF}))"
    " || (has(object.spec.selector) && has(object.spec.selector.generatorRef)"
    " && has(object.spec.selector.generatorRef.kind)"
    f" && object.spec.selector.generatorRef.kind == {_CLUSTER_GENERATOR})"
)


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    allowed_users = literal_list(users)
    allowed_groups = literal_list(groups)
    return [
        PolicyDefinition(
            name="tenancy-secret-stores",
            rule="secret_stores",
            resource_rules=[
                resource_rule("external-secrets.io", ["externalsecrets", "pushsecrets"], ["CREATE", "UPDATE"])
            ],
            match_conditions=[
                {
                    # Metadata-only updates (finalizers, annotations by controllers) change no store.
                    "name": "spec-written",
                    "expression": "request.operation == 'CREATE' || !has(oldObject.spec) || !has(object.spec)"
                    " || object.spec != oldObject.spec",
                },
                {
                    "name": "not-platform",
                    "expression": f"!(request.userInfo.username in {allowed_users} || (has(request.userInfo.groups)"
                    f" && request.userInfo.groups.exists(g, g in {allowed_groups})))",
                },
            ],
            variables=[
                TENANT_VARIABLE,
                {
                    "name": "clusterWide",
                    "expression": f"!has(object.spec) ? false : request.kind.kind == 'PushSecret' ? ({_PUSH_SECRET})"
                    f" : ({_EXTERNAL_SECRET})",
                },
            ],
            validations=[
                {
                    "expression": "!variables.clusterWide",
                    "message_expression": (
                        "request.kind.kind + ' ' + object.metadata.name + ' of tenant ' + variables.tenant"
                        " + ' may only use a SecretStore of its own namespace: ClusterSecretStores and"
                        " ClusterGenerators serve the platform (shared secrets come from the tenant file"
                        " sharedSecrets)'"
                    ),
                    "reason": "Forbidden",
                }
            ],
        )
    ]
