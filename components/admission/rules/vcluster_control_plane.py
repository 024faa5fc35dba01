"""Rule 5 (platform-owned), the virtual cluster's control plane: `tenancy-vcluster-control-plane`.

The objects the control plane is made of (its StatefulSet and revisions, Service, host accounts,
config and certificate Secrets, Helm's records, the data claims, autoscalers aimed at it) are the
platform's; rules/vcluster_release.py says why, and which upstream writers each exception admits.
"""

from __future__ import annotations

from components.admission.base import PolicyDefinition, Validation, Variable, literal, literal_list, resource_rule
from components.admission.rules.platform_owned import KUBERNETES_CONTROLLERS
from components.admission.rules.syncer_account import STATEFULSET_CONTROLLER
from components.admission.rules.vcluster_cel import (
    ALL_WRITES,
    labels_match,
    list_kept,
    object_name,
    platform_identity,
    service_account,
)
from components.admission.rules.vcluster_claims import DATA_CLAIM, claim_validations, clones_data_claim
from components.vcluster.values import (
    CERTS_SECRET,
    CONFIG_SECRET,
    CONTROL_PLANE_REPLICAS,
    CONTROL_PLANE_SELECTOR,
    CONTROL_PLANE_SERVICE,
    CONTROL_PLANE_STATEFULSET,
    COREDNS_CONFIG_MAP,
    INSTALLER_ACCOUNT,
    PLATFORM_ACCOUNTS,
    RELEASE_NAME,
    RELEASE_RECORD_LABELS,
    RELEASE_SECRET_PREFIX,
    SYNCER_ACCOUNT,
)

CONTROL_PLANE_POLICY = "tenancy-vcluster-control-plane"
# The annotations the syncer writes on its config Secret at every start (pkg/setup/config.go).
SYNCER_CONFIG_ANNOTATIONS = ["vcluster.loft.sh/distro", "vcluster.loft.sh/store"]
# What a tenant identity may scale the control plane to: stopped, or the release's own count.
TENANT_REPLICAS = sorted({0, CONTROL_PLANE_REPLICAS})
# The autoscalers that write a target's `scale` (the HorizontalPodAutoscaler, and KEDA's ScaledObject,
# which makes one), by resource, and the field naming their target; the VerticalPodAutoscaler's
# updater evicts and its admission hook rewrites the resources of the pods it targets.
_AUTOSCALER_TARGETS = {
    "horizontalpodautoscalers": "scaleTargetRef",
    "scaledobjects": "scaleTargetRef",
    "verticalpodautoscalers": "targetRef",
}


def _control_plane_object(var: str) -> str:
    """CEL: `var` (object or oldObject) is one of the objects the control plane is made of."""
    resource = "request.resource.resource"
    name = object_name(var)
    revision_owner = (
        f"(has({var}.metadata.ownerReferences) && {var}.metadata.ownerReferences.exists(o, o.kind == 'StatefulSet'"
        f" && o.name == {literal(CONTROL_PLANE_STATEFULSET)}))"
    )
    record = f"({labels_match(var, RELEASE_RECORD_LABELS)})"
    selector = f"({labels_match(var, CONTROL_PLANE_SELECTOR)})"
    return (
        f"{var} != null && ("
        f"({resource} == 'statefulsets' && {name} == {literal(CONTROL_PLANE_STATEFULSET)})"
        f" || ({resource} == 'services' && {name} == {literal(CONTROL_PLANE_SERVICE)})"
        f" || ({resource} == 'serviceaccounts' && {name} in {literal_list(list(PLATFORM_ACCOUNTS))})"
        f" || {_targets_control_plane(var)}"
        f" || ({resource} == 'controllerrevisions' && ({selector} || {revision_owner}))"
        f" || ({resource} == 'secrets' && ({name} == {literal(CONFIG_SECRET)} || {name} == {literal(CERTS_SECRET)}"
        f" || {name}.startsWith({literal(RELEASE_SECRET_PREFIX)}) || {record}))"
        f" || ({resource} == 'configmaps' && ({name} == {literal(COREDNS_CONFIG_MAP)} || {record}))"
        f" || ({resource} == 'persistentvolumeclaims' && {name}.matches({literal(DATA_CLAIM)}))"
        f" || (request.operation == 'CREATE' && {clones_data_claim(var)}))"
    )


def _targets_control_plane(var: str) -> str:
    """CEL: `var` is an autoscaler whose target is the StatefulSet `vcluster` (kind compared without
    case, the API version not at all: any reference to that name is refused)."""
    resource = "request.resource.resource"
    clauses = []
    for kind, field in sorted(_AUTOSCALER_TARGETS.items()):
        ref = f"{var}.spec.{field}"
        clauses.append(
            f"({resource} == {literal(kind)} && has({var}.spec) && has({ref}) && has({ref}.name)"
            f" && {ref}.name == {literal(CONTROL_PLANE_STATEFULSET)} && has({ref}.kind)"
            f" && {ref}.kind.lowerAscii() == 'statefulset')"
        )
    return "(" + " || ".join(clauses) + ")"


def _named(resource: str, name: str) -> str:
    """CEL: the request is about the object `name` of `resource` (by its new or its old self)."""
    return (
        f"request.resource.resource == {literal(resource)}"
        f" && ((object != null && {object_name('object')} == {literal(name)})"
        f" || (oldObject != null && {object_name('oldObject')} == {literal(name)}))"
    )


def _certs_writers() -> str:
    """CEL: who writes the certificate Secret: the namespace's syncer creates it at its first start and
    rewrites it (the API server's certificate, the kubeconfigs' servers) on later ones, vCluster v0.20.0
    pkg/certs/ensure.go EnsureCerts; it deletes it never. The release does not render it, so the
    installer has no part in it."""
    return (
        f"request.userInfo.username == {service_account(SYNCER_ACCOUNT)} && request.operation in ['CREATE', 'UPDATE']"
        " && (!has(request.subResource) || request.subResource == '')"
    )


def _service_kept() -> str:
    """CEL: an update of the Service `vcluster` that changes neither where it sends the virtual
    cluster's clients (its spec) nor its owners and finalizers: labels and annotations pass."""
    return (
        "request.operation == 'UPDATE' && (has(object.spec) ? object.spec : {}) =="
        " (has(oldObject.spec) ? oldObject.spec : {})"
        f" && {list_kept('ownerReferences')} && {list_kept('finalizers')}"
    )


def _replicas(var: str) -> str:
    return f"(has({var}.spec) && has({var}.spec.replicas) ? {var}.spec.replicas : 0)"


def _annotations(var: str) -> str:
    return f"(has({var}.metadata.annotations) ? {var}.metadata.annotations : {{}})"


def _syncer_bookkeeping() -> str:
    """CEL: the namespace's syncer setting its two annotations on the config Secret, nothing else."""
    new, old = _annotations("object"), _annotations("oldObject")
    own = literal_list(SYNCER_CONFIG_ANNOTATIONS)
    labels_new = "(has(object.metadata.labels) ? object.metadata.labels : {})"
    labels_old = "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})"
    data_new = "(has(object.data) ? object.data : {})"
    data_old = "(has(oldObject.data) ? oldObject.data : {})"
    return (
        f"request.operation == 'UPDATE' && request.resource.resource == 'secrets'"
        f" && request.userInfo.username == {service_account(SYNCER_ACCOUNT)}"
        f" && object.metadata.name == {literal(CONFIG_SECRET)}"
        f" && {data_new} == {data_old} && {labels_new} == {labels_old}"
        f" && {list_kept('ownerReferences')} && {list_kept('finalizers')}"
        f" && (has(object.type) ? object.type : '') == (has(oldObject.type) ? oldObject.type : '')"
        " && (has(object.immutable) && object.immutable) == (has(oldObject.immutable) && oldObject.immutable)"
        f" && {new}.all(k, k in {own} || (k in {old} && {old}[k] == {new}[k]))"
        f" && {old}.all(k, k in {own} || k in {new})"
    )


def _variables(users: list[str], groups: list[str]) -> list[Variable]:
    """The policy's variables: what the request is about, and who asks."""
    main = "!has(request.subResource) || request.subResource == ''"
    resource = "request.resource.resource"
    statefulset_controller = (
        f"request.userInfo.username in {literal_list(STATEFULSET_CONTROLLER)}"
        f" && ({resource} == 'controllerrevisions' || !({main}))"
    )
    # The installer applies what the chart renders: not the revisions, the certificates or the claims.
    installer = (
        f"request.userInfo.username == {service_account(INSTALLER_ACCOUNT)}"
        f" && {resource} in ['statefulsets', 'services', 'secrets', 'configmaps'] && ({main})"
        " && !variables.certs"
    )
    # A change of the replica count: through `scale` (kubectl scale, an autoscaler) or the StatefulSet's
    # own `spec.replicas`.
    replica_write = (
        f"{resource} == 'statefulsets' && request.operation == 'UPDATE' && (variables.scale"
        f" || (({main}) && {_replicas('object')} != {_replicas('oldObject')}))"
    )
    return [
        {"name": "certs", "expression": _named("secrets", CERTS_SECRET)},
        {
            "name": "claim",
            "expression": f"{resource} == 'persistentvolumeclaims' && ((object != null"
            f" && {object_name('object')}.matches({literal(DATA_CLAIM)})) || (oldObject != null"
            f" && {object_name('oldObject')}.matches({literal(DATA_CLAIM)})))",
        },
        {"name": "clone", "expression": f"request.operation == 'CREATE' && {clones_data_claim('object')}"},
        {"name": "service", "expression": f"{resource} == 'services'"},
        {"name": "account", "expression": f"{resource} == 'serviceaccounts'"},
        {
            "name": "autoscaler",
            "expression": f"{resource} in {literal_list(sorted(_AUTOSCALER_TARGETS))}",
        },
        {
            "name": "scale",
            "expression": f"{resource} == 'statefulsets' && has(request.subResource) && request.subResource == 'scale'",
        },
        {"name": "platform", "expression": platform_identity(users, groups)},
        {
            "name": "collectors",
            "expression": f"request.userInfo.username in {literal_list(KUBERNETES_CONTROLLERS)}",
        },
        {"name": "installer", "expression": installer},
        {
            "name": "controllers",
            "expression": f"variables.collectors || (!variables.claim && {statefulset_controller})",
        },
        {"name": "syncerBookkeeping", "expression": _syncer_bookkeeping()},
        {"name": "replicaWrite", "expression": replica_write},
    ]


def _reserved_validations() -> list[Validation]:
    """The certificate Secret, the data claims and the replica count: their own writers."""
    tenant_replicas = "[" + ", ".join(map(str, TENANT_REPLICAS)) + "]"
    return [
        {
            "expression": f"!variables.certs || variables.platform || variables.collectors || ({_certs_writers()})",
            "message_expression": (
                f"'Secret {CERTS_SECRET} holds the virtual cluster\\'s keys and the kubeconfigs its control plane"
                f" runs with (release {RELEASE_NAME}): only its syncer writes it (' + request.userInfo.username"
                " + ' may not ' + request.operation.lowerAscii() + ' it); the name is reserved in tenant"
                " namespaces'"
            ),
            "reason": "Forbidden",
        },
        *claim_validations(),
        {
            "expression": "!variables.replicaWrite || variables.platform"
            f" || (variables.installer && !variables.scale) || {_replicas('object')} in {tenant_replicas}",
            "message_expression": (
                f"'StatefulSet {CONTROL_PLANE_STATEFULSET} runs the virtual cluster\\'s control plane, one syncer"
                f" with no leader election: it scales to {' or '.join(str(n) for n in TENANT_REPLICAS)} only"
                " (' + request.userInfo.username + ' asked for ' + string("
                f"{_replicas('object')}) + ' replicas)'"
            ),
            "reason": "Forbidden",
        },
    ]


def _object_validations() -> list[Validation]:
    """The autoscalers, the Service, the host accounts, and every other object of the control plane."""
    return [
        {
            "expression": "!variables.autoscaler || variables.platform",
            "message_expression": (
                "request.kind.kind + ' ' + request.name + ' targets the StatefulSet"
                f" {CONTROL_PLANE_STATEFULSET}, the virtual cluster\\'s control plane: its replica count and"
                " resources are the platform\\'s (one syncer, with no leader election); target your own"
                " workloads'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "!variables.service || variables.platform || variables.collectors"
            f" || variables.installer || ({_service_kept()})",
            "message_expression": (
                f"'Service {CONTROL_PLANE_SERVICE} is the address of the virtual cluster\\'s API server (release"
                f" {RELEASE_NAME}) and owns its certificate Secret: only the platform\\'s release creates,"
                " deletes or changes it (' + request.userInfo.username + ' may not '"
                " + request.operation.lowerAscii() + ' it; labels and annotations pass); the name is reserved"
                " in tenant namespaces'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "!variables.account || variables.platform || variables.collectors",
            "message_expression": (
                "'ServiceAccount ' + request.name + ' is a virtual cluster\\'s host account (the syncer, the"
                " installer helm-controller applies the release as, or the synced pods\\' account): only the"
                " platform writes it (' + request.userInfo.username + ' may not '"
                " + request.operation.lowerAscii() + ' it); the name is reserved in tenant namespaces'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "variables.certs || variables.claim || variables.clone || variables.service"
            " || variables.account || variables.autoscaler || variables.scale || variables.platform"
            " || variables.installer || variables.controllers || variables.syncerBookkeeping",
            "message_expression": (
                "request.kind.kind + ' ' + request.name + ' is part of the virtual cluster\\'s control plane"
                f" (release {RELEASE_NAME}): only the platform writes it, through its release applied as"
                f" {INSTALLER_ACCOUNT} (' + request.userInfo.username + ' may not '"
                " + request.operation.lowerAscii() + ' it); the name is reserved in tenant namespaces'"
            ),
            "reason": "Forbidden",
        },
    ]


def control_plane_policy(users: list[str], groups: list[str]) -> PolicyDefinition:
    """`tenancy-vcluster-control-plane`: the control plane's objects are the platform's."""
    return PolicyDefinition(
        name=CONTROL_PLANE_POLICY,
        rule="platform_owned",
        resource_rules=[
            resource_rule("apps", ["statefulsets", "controllerrevisions"], ALL_WRITES),
            resource_rule("apps", ["statefulsets/status", "statefulsets/scale"], ["UPDATE"]),
            resource_rule(
                "", ["secrets", "configmaps", "persistentvolumeclaims", "services", "serviceaccounts"], ALL_WRITES
            ),
            # The claim's status subresource restores its spec but keeps its metadata, owner references
            # included (k8s.io/kubernetes v1.36.3 pkg/registry/core/persistentvolumeclaim/strategy.go);
            # the Service's likewise (pkg/registry/core/service/strategy.go serviceStatusStrategy).
            resource_rule("", ["persistentvolumeclaims/status", "services/status"], ["UPDATE"]),
            # Autoscalers naming the control plane as their target.
            resource_rule("autoscaling", ["horizontalpodautoscalers"], ["CREATE", "UPDATE"]),
            resource_rule("keda.sh", ["scaledobjects"], ["CREATE", "UPDATE"]),
            resource_rule("autoscaling.k8s.io", ["verticalpodautoscalers"], ["CREATE", "UPDATE"]),
        ],
        match_conditions=[
            {
                "name": "the-control-plane",
                "expression": f"{_control_plane_object('object')} || {_control_plane_object('oldObject')}",
            },
        ],
        variables=_variables(users, groups),
        validations=[*_reserved_validations(), *_object_validations()],
    )
