"""Rule 5 (platform-owned), the virtual cluster's release: the control plane is the platform's.

The control plane pod runs as the syncer's account (rules/syncer_account.py admits it only from the
StatefulSet controller, for the StatefulSet `vcluster`), so whoever writes what that pod is made of
writes as the syncer: the StatefulSet's pod template, the ControllerRevisions the StatefulSet
controller builds pods from during a rollout (it adopts any revision carrying the set's selector,
k8s.io/kubernetes pkg/controller/statefulset stateful_set_control.go getStatefulSetRevisions, and
builds pods below the current count from `status.currentRevision`), the config Secret the syncer
starts with (the whole values of the release, chart 0.20.0 `config-secret.yaml`), CoreDNS's
manifests, and everything Helm applies those from: Helm's release records (a Secret Helm reads by
name for a rollback and by the labels `owner: helm, name: vcluster` for the last release, whose
manifest drift correction applies), the HelmRelease with its values, its HelmRepository, and the
HelmChart helm-controller makes from it (`<namespace>-vcluster`).

helm-controller applies the release as the account the HelmRelease names, impersonated
(helm-controller v1.4.5 internal/kube/impersonate.go: the user `system:serviceaccount:<namespace>:
<name>`), and writes Helm's records through the same client (internal/action/config.go
WithStorage). Until issue 43 that account was the tenant's `deployer`, so the tenant could rewrite
the release and every object of it. Now the platform's HelmRelease names the installer
(components/vcluster/values.py INSTALLER_ACCOUNT), an account no pod may run as and no token Secret
may name (rules/syncer_account.py, rules/side_doors.py), and two policies keep the release to it:

- `tenancy-vcluster-control-plane`: creating, changing or deleting the StatefulSet `vcluster` (and
  its status), its ControllerRevisions, the Secret `vc-config-vcluster`, the ConfigMap
  `vc-coredns-vcluster`, and Helm's records of the release `vcluster` (by name or by label), by
  anyone but the namespace's installer, the platform identities and the controllers that must: the
  StatefulSet controller (status, revisions), the garbage collector and the namespace controller.
  The syncer may set its two bookkeeping annotations on the config Secret and change nothing else
  (vCluster v0.20.0 pkg/setup/config.go updateSecretAnnotations: the control plane does not start
  without it). The `scale` subresource is not matched: it carries a replica count only (its registry
  keeps nothing else), and every replica runs the platform's template.
  Two objects the release does not render are the control plane's too (the outside review of issue
  43): the Secret `vcluster-certs`, every key of which the control plane writes into /data/pki at
  each start (an `exec` user in one of its kubeconfigs would run there with the syncer's token), is
  written only by the namespace's syncer (created at the first start, rewritten when a certificate
  or a server is stale: v0.20.0 pkg/certs/ensure.go EnsureCerts), the collectors and the platform;
  the claims `data-vcluster-<n>` of the StatefulSet's volume claim template, which the StatefulSet
  controller uses as they are when they exist (a volume with its own /data/pki is the PKI when the
  Secret is absent), are created only by the StatefulSet controller, deleted only by the collectors
  and the platform, and keep their spec and owner references but for the StatefulSet controller's
  retention owners and the volume binder's `volumeName`.
- `tenancy-vcluster-release`: creating, changing the spec of or deleting a HelmRelease that names
  the installer, the HelmRepository `vcluster-charts` or the HelmChart `<namespace>-vcluster`, by
  anyone but the platform identities (and for the HelmChart, helm-controller, which writes it from
  the HelmRelease). An UPDATE that leaves the spec, the owner references and the finalizers as they
  were passes, so tenants may still ask for a reconcile (an annotation); a dangling owner would have
  the garbage collector delete the object (and helm-controller uninstall the release), and the
  finalizers are the kind's Flux controller's to add and remove (without them the platform's
  deletion skips the uninstall). Their status
  is their controller's alone (the Flux namespace's helm-controller for the HelmRelease,
  source-controller for the sources): helm-controller fetches the chart from the artifact URL and
  digest in the HelmChart's status (v1.4.5 internal/controller/helmrelease_controller.go, through
  `getSource`), and reads where the release is stored from the HelmRelease's.

The names are reserved in every tenant namespace, as the kubeconfig Secret's is
(rules/vcluster_kubeconfig.py): a namespace that is not a virtual cluster's host yet could
otherwise be given objects under them that the release would adopt when it arrives (Helm adopts an
existing object carrying its release annotations and merges into it).
"""

from __future__ import annotations

from components.admission.base import PolicyDefinition, literal, literal_list, resource_rule
from components.admission.rules.platform_owned import KUBERNETES_CONTROLLERS
from components.admission.rules.syncer_account import STATEFULSET_CONTROLLER
from components.vcluster.objects import CHART_SOURCE
from components.vcluster.values import (
    CERTS_SECRET,
    CONFIG_SECRET,
    CONTROL_PLANE_SELECTOR,
    CONTROL_PLANE_STATEFULSET,
    COREDNS_CONFIG_MAP,
    DATA_CLAIM_PREFIX,
    INSTALLER_ACCOUNT,
    RELEASE_NAME,
    RELEASE_RECORD_LABELS,
    RELEASE_SECRET_PREFIX,
    SYNCER_ACCOUNT,
)

CONTROL_PLANE_POLICY = "tenancy-vcluster-control-plane"
RELEASE_POLICY = "tenancy-vcluster-release"
_ALL = ["CREATE", "UPDATE", "DELETE"]
# The annotations the syncer writes on its config Secret at every start (pkg/setup/config.go).
SYNCER_CONFIG_ANNOTATIONS = ["vcluster.loft.sh/distro", "vcluster.loft.sh/store"]
# kube-controller-manager's volume binder, with --use-service-account-credentials: it sets a claim's
# spec.volumeName when it binds it (without the flag it is system:kube-controller-manager).
VOLUME_BINDER = "system:serviceaccount:kube-system:persistent-volume-binder"
# The control plane's claims: `data-vcluster-<ordinal>` (the prefix holds letters and `-` only, no
# regular-expression syntax).
_DATA_CLAIM = f"^{DATA_CLAIM_PREFIX}[0-9]+$"


def _account(name: str) -> str:
    """CEL: the user name of the namespace's ServiceAccount `name`."""
    return f"'system:serviceaccount:' + request.namespace + ':' + {literal(name)}"


def _platform(users: list[str], groups: list[str]) -> str:
    return (
        f"request.userInfo.username in {literal_list(users)} || (has(request.userInfo.groups)"
        f" && request.userInfo.groups.exists(g, g in {literal_list(groups)}))"
    )


def _labels_match(var: str, labels: dict[str, str]) -> str:
    """CEL: `var` carries every one of `labels`."""
    path = f"{var}.metadata.labels"
    return " && ".join(
        [
            f"has({path})",
            *(f"{literal(k)} in {path} && {path}[{literal(k)}] == {literal(v)}" for k, v in labels.items()),
        ]
    )


def _name(var: str) -> str:
    return f"(has({var}.metadata.name) ? {var}.metadata.name : '')"


def _control_plane_object(var: str) -> str:
    """CEL: `var` (object or oldObject) is one of the objects the control plane is made of."""
    resource = "request.resource.resource"
    name = _name(var)
    revision_owner = (
        f"(has({var}.metadata.ownerReferences) && {var}.metadata.ownerReferences.exists(o, o.kind == 'StatefulSet'"
        f" && o.name == {literal(CONTROL_PLANE_STATEFULSET)}))"
    )
    record = f"({_labels_match(var, RELEASE_RECORD_LABELS)})"
    selector = f"({_labels_match(var, CONTROL_PLANE_SELECTOR)})"
    return (
        f"{var} != null && ("
        f"({resource} == 'statefulsets' && {name} == {literal(CONTROL_PLANE_STATEFULSET)})"
        f" || ({resource} == 'controllerrevisions' && ({selector} || {revision_owner}))"
        f" || ({resource} == 'secrets' && ({name} == {literal(CONFIG_SECRET)} || {name} == {literal(CERTS_SECRET)}"
        f" || {name}.startsWith({literal(RELEASE_SECRET_PREFIX)}) || {record}))"
        f" || ({resource} == 'configmaps' && ({name} == {literal(COREDNS_CONFIG_MAP)} || {record}))"
        f" || ({resource} == 'persistentvolumeclaims' && {name}.matches({literal(_DATA_CLAIM)})))"
    )


def _named(resource: str, name: str) -> str:
    """CEL: the request is about the object `name` of `resource` (by its new or its old self)."""
    return (
        f"request.resource.resource == {literal(resource)} && ((object != null && {_name('object')} == {literal(name)})"
        f" || (oldObject != null && {_name('oldObject')} == {literal(name)}))"
    )


def _certs_writers() -> str:
    """CEL: who writes the certificate Secret: the namespace's syncer creates it at its first start and
    rewrites it (the API server's certificate, the kubeconfigs' servers) on later ones, vCluster v0.20.0
    pkg/certs/ensure.go EnsureCerts; it deletes it never. The release does not render it, so the
    installer has no part in it."""
    return (
        f"request.userInfo.username == {_account(SYNCER_ACCOUNT)} && request.operation in ['CREATE', 'UPDATE']"
        " && (!has(request.subResource) || request.subResource == '')"
    )


def _claim_writers() -> str:
    """CEL: who writes the control plane's claims beyond the platform and the collectors.

    The StatefulSet controller creates them from the template and sets their owner references for
    the retention policy (k8s.io/kubernetes v1.36.3 pkg/controller/statefulset stateful_pod_control.go:
    CreateClaim, UpdateClaim; it deletes none, the garbage collector does); the volume binder sets
    `spec.volumeName` when it binds. Any other update must leave the spec and the owner references
    as they were: the binder's, the scheduler's and the provisioner's bookkeeping annotations (whose
    identities vary per cloud) pass, a dangling owner (the garbage collector would delete the claim)
    or another volume does not.
    """
    spec_new = "(has(object.spec) ? object.spec : {})"
    spec_old = "(has(oldObject.spec) ? oldObject.spec : {})"
    owners_new = "(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : [])"
    owners_old = "(has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : [])"
    statefulset_controller = (
        f"request.userInfo.username in {literal_list(STATEFULSET_CONTROLLER)}"
        " && request.operation in ['CREATE', 'UPDATE']"
    )
    binder = f"request.userInfo.username == {literal(VOLUME_BINDER)} && request.operation == 'UPDATE'"
    bookkeeping = f"request.operation == 'UPDATE' && {spec_new} == {spec_old} && {owners_new} == {owners_old}"
    return f"({statefulset_controller}) || ({binder}) || ({bookkeeping})"


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
        f" && request.userInfo.username == {_account(SYNCER_ACCOUNT)}"
        f" && object.metadata.name == {literal(CONFIG_SECRET)}"
        f" && {data_new} == {data_old} && {labels_new} == {labels_old}"
        f" && (has(object.type) ? object.type : '') == (has(oldObject.type) ? oldObject.type : '')"
        " && (has(object.immutable) && object.immutable) == (has(oldObject.immutable) && oldObject.immutable)"
        f" && {new}.all(k, k in {own} || (k in {old} && {old}[k] == {new}[k]))"
        f" && {old}.all(k, k in {own} || k in {new})"
    )


def control_plane_policy(users: list[str], groups: list[str]) -> PolicyDefinition:
    main = "!has(request.subResource) || request.subResource == ''"
    statefulset_controller = (
        f"request.userInfo.username in {literal_list(STATEFULSET_CONTROLLER)}"
        " && (request.resource.resource == 'controllerrevisions' || !(" + main + "))"
    )
    # The installer applies what the chart renders: not the revisions, the certificates or the claims.
    installer = (
        f"request.userInfo.username == {_account(INSTALLER_ACCOUNT)}"
        f" && request.resource.resource in ['statefulsets', 'secrets', 'configmaps'] && ({main})"
        " && !variables.certs"
    )
    return PolicyDefinition(
        name=CONTROL_PLANE_POLICY,
        rule="platform_owned",
        resource_rules=[
            resource_rule("apps", ["statefulsets", "controllerrevisions"], _ALL),
            resource_rule("apps", ["statefulsets/status"], ["UPDATE"]),
            resource_rule("", ["secrets", "configmaps", "persistentvolumeclaims"], _ALL),
            # The claim's status subresource restores its spec but keeps its metadata, owner references
            # included (k8s.io/kubernetes v1.36.3 pkg/registry/core/persistentvolumeclaim/strategy.go).
            resource_rule("", ["persistentvolumeclaims/status"], ["UPDATE"]),
        ],
        match_conditions=[
            {
                "name": "the-control-plane",
                "expression": f"{_control_plane_object('object')} || {_control_plane_object('oldObject')}",
            },
        ],
        variables=[
            {"name": "certs", "expression": _named("secrets", CERTS_SECRET)},
            {"name": "claim", "expression": "request.resource.resource == 'persistentvolumeclaims'"},
            {"name": "platform", "expression": _platform(users, groups)},
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
        ],
        validations=[
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
            {
                "expression": f"!variables.claim || variables.platform || variables.collectors || ({_claim_writers()})",
                "message_expression": (
                    "'PersistentVolumeClaim ' + request.name + ' is the virtual cluster\\'s control plane"
                    f" volume (release {RELEASE_NAME}): only the StatefulSet controller creates it, and only the"
                    " platform and the collectors delete it or change its spec or owners (' + request.userInfo.username"
                    " + ' may not ' + request.operation.lowerAscii() + ' it); the name is reserved in tenant"
                    " namespaces'"
                ),
                "reason": "Forbidden",
            },
            {
                "expression": "variables.certs || variables.claim || variables.platform || variables.installer"
                " || variables.controllers || variables.syncerBookkeeping",
                "message_expression": (
                    "request.kind.kind + ' ' + request.name + ' is part of the virtual cluster\\'s control plane"
                    f" (release {RELEASE_NAME}): only the platform writes it, through its release applied as"
                    f" {INSTALLER_ACCOUNT} (' + request.userInfo.username + ' may not '"
                    " + request.operation.lowerAscii() + ' it); the name is reserved in tenant namespaces'"
                ),
                "reason": "Forbidden",
            },
        ],
    )


def release_policy(users: list[str], groups: list[str], flux_namespace: str) -> PolicyDefinition:
    resource = "request.resource.resource"
    helm_controller = literal(f"system:serviceaccount:{flux_namespace}:helm-controller")
    source_controller = literal(f"system:serviceaccount:{flux_namespace}:source-controller")
    main = "(!has(request.subResource) || request.subResource == '')"
    # Each status is its controller's: helm-controller reads where the release is stored from the
    # HelmRelease's, and fetches the chart from the artifact URL and digest in the HelmChart's.
    status_writer = (
        "has(request.subResource) && request.subResource == 'status' && ("
        f"({resource} == 'helmreleases' && request.userInfo.username == {helm_controller})"
        f" || ({resource} != 'helmreleases' && request.userInfo.username == {source_controller}))"
    )

    def ours(var: str) -> str:
        name = _name(var)
        return (
            f"{var} != null && ("
            f"({resource} == 'helmreleases' && has({var}.spec) && has({var}.spec.serviceAccountName)"
            f" && {var}.spec.serviceAccountName == {literal(INSTALLER_ACCOUNT)})"
            f" || ({resource} == 'helmrepositories' && {name} == {literal(CHART_SOURCE)})"
            f" || ({resource} == 'helmcharts' && {name} == request.namespace + '-' + {literal(RELEASE_NAME)}))"
        )

    # An update that leaves the spec as it was passes (a tenant's reconcile request is an annotation),
    # if it also leaves the owner references (a dangling owner: the garbage collector deletes the
    # object, and helm-controller uninstalls the release) and the finalizers (without Flux's, a
    # deletion skips the uninstall and leaves the control plane running with no release). The
    # finalizer is the kind's own Flux controller's to add and remove: helm-controller's on the
    # HelmRelease, source-controller's on the sources.
    def kept(field: str) -> str:
        return (
            f"(has(object.metadata.{field}) ? object.metadata.{field} : [])"
            f" == (has(oldObject.metadata.{field}) ? oldObject.metadata.{field} : [])"
        )

    finalizer_owner = (
        f"({resource} == 'helmreleases' && request.userInfo.username == {helm_controller})"
        f" || ({resource} != 'helmreleases' && request.userInfo.username == {source_controller})"
    )
    spec_unchanged = (
        f"request.operation == 'UPDATE' && {main} && (has(object.spec) ? object.spec : {{}}) == (has(oldObject.spec)"
        f" ? oldObject.spec : {{}}) && {kept('ownerReferences')} && ({kept('finalizers')} || {finalizer_owner})"
    )
    return PolicyDefinition(
        name=RELEASE_POLICY,
        rule="platform_owned",
        resource_rules=[
            resource_rule("helm.toolkit.fluxcd.io", ["helmreleases"], _ALL),
            resource_rule("helm.toolkit.fluxcd.io", ["helmreleases/status"], ["UPDATE"]),
            resource_rule("source.toolkit.fluxcd.io", ["helmrepositories", "helmcharts"], _ALL),
            resource_rule("source.toolkit.fluxcd.io", ["helmrepositories/status", "helmcharts/status"], ["UPDATE"]),
        ],
        match_conditions=[{"name": "the-release", "expression": f"{ours('object')} || {ours('oldObject')}"}],
        variables=[
            {"name": "platform", "expression": _platform(users, groups)},
            {
                "name": "controllers",
                "expression": f"request.userInfo.username in {literal_list(KUBERNETES_CONTROLLERS)}"
                f" || ({resource} == 'helmcharts' && {main} && request.userInfo.username == {helm_controller})"
                f" || ({status_writer})",
            },
        ],
        validations=[
            {
                "expression": f"variables.platform || variables.controllers || ({spec_unchanged})",
                "message_expression": (
                    "request.kind.kind + ' ' + request.name + ' installs the virtual cluster\\'s control plane as"
                    f" {INSTALLER_ACCOUNT}: only the platform writes it (' + request.userInfo.username + ' may not '"
                    " + request.operation.lowerAscii() + ' it; an update that leaves spec, owner references and"
                    " finalizers as they are passes)'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def policies(users: list[str], groups: list[str], flux_namespace: str) -> list[PolicyDefinition]:
    return [control_plane_policy(users, groups), release_policy(users, groups, flux_namespace)]
