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
  The syncer may set its two bookkeeping annotations on the config Secret (vCluster v0.20.0
  pkg/setup/config.go updateSecretAnnotations: the control plane does not start without it) and
  change nothing else, its owner references and finalizers included.
  Scaling (red team round 7): every replica runs the platform's template, but vCluster elects a
  leader only when the release asks for more than one replica, so a second replica of this one is a
  second syncer deleting what the first writes. `statefulsets/scale` (and `spec.replicas` of the
  StatefulSet) takes 0 or the release's count (values.py CONTROL_PLANE_REPLICAS) from anyone but the
  platform and the installer, the HorizontalPodAutoscaler controller included (which writes as
  `horizontal-pod-autoscaler` or as kube-controller-manager); a HorizontalPodAutoscaler, a KEDA
  ScaledObject or a VerticalPodAutoscaler targeting the StatefulSet `vcluster` is the platform's
  alone. The Service `vcluster` (the kubeconfig's address, and the owner of the certificate Secret
  and of everything the syncer writes on the host, v0.20.0 `FindOwner` with `SetOwner`, all of
  which the garbage collector deletes with it; the syncer only reads it, `SyncKubernetesService`)
  is created, deleted and changed only by the installer,
  the platform and the collectors; others may change its labels and annotations. The host accounts
  `vcluster`, `vcluster-installer` and `vc-workload-vcluster` are the platform's to write.
  Two objects the release does not render are the control plane's too (the outside review of issue
  43): the Secret `vcluster-certs`, every key of which the control plane writes into /data/pki at
  each start (an `exec` user in one of its kubeconfigs would run there with the syncer's token), is
  written only by the namespace's syncer (created at the first start, rewritten when a certificate
  or a server is stale: v0.20.0 pkg/certs/ensure.go EnsureCerts), the collectors and the platform;
  the claims `data-vcluster-<n>` of the StatefulSet's volume claim template, which the StatefulSet
  controller uses as they are when they exist (a volume with its own /data/pki is the PKI when the
  Secret is absent), are created only by the StatefulSet controller (with no owner references: the
  same user without --use-service-account-credentials is the ephemeral volume controller, which
  would make one owned by a tenant's pod), deleted only by the collectors and the platform, and keep
  their spec and owner references but for the StatefulSet controller's retention owners and the
  volume binder's `volumeName`; the platform may grow it (docs/virtual-clusters.md).
- `tenancy-vcluster-release`: creating, changing the spec of or deleting a HelmRelease that names
  the installer or is named `vcluster` (reserved everywhere; one of the tenant's own from before may
  still be deleted), the HelmRepository `vcluster-charts` or the HelmChart `<namespace>-vcluster`, by
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
from components.admission.rules.vcluster_cel import ALL_WRITES, list_kept, object_name, platform_identity
from components.admission.rules.vcluster_control_plane import control_plane_policy
from components.vcluster.objects import CHART_SOURCE
from components.vcluster.values import INSTALLER_ACCOUNT, RELEASE_NAME

RELEASE_POLICY = "tenancy-vcluster-release"


def _names_installer(var: str) -> str:
    """CEL: the HelmRelease `var` is applied as the installer."""
    return (
        f"(has({var}.spec) && has({var}.spec.serviceAccountName)"
        f" && {var}.spec.serviceAccountName == {literal(INSTALLER_ACCOUNT)})"
    )


def _spec_unchanged(helm_controller: str, source_controller: str) -> str:
    """CEL: an update that leaves the spec as it was (a tenant's reconcile request is an annotation),
    the owner references (a dangling owner: the garbage collector deletes the object, and
    helm-controller uninstalls the release) and the finalizers (without Flux's, a deletion skips the
    uninstall and leaves the control plane running with no release). The finalizer is the kind's own
    Flux controller's to add and remove: helm-controller's on the HelmRelease, source-controller's on
    the sources."""
    resource = "request.resource.resource"
    main = "(!has(request.subResource) || request.subResource == '')"
    finalizer_owner = (
        f"({resource} == 'helmreleases' && request.userInfo.username == {helm_controller})"
        f" || ({resource} != 'helmreleases' && request.userInfo.username == {source_controller})"
    )
    return (
        f"request.operation == 'UPDATE' && {main} && (has(object.spec) ? object.spec : {{}}) == (has(oldObject.spec)"
        f" ? oldObject.spec : {{}}) && {list_kept('ownerReferences')}"
        f" && ({list_kept('finalizers')} || {finalizer_owner})"
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
        name = object_name(var)
        return (
            f"{var} != null && ("
            f"({resource} == 'helmreleases' && ({name} == {literal(RELEASE_NAME)} || {_names_installer(var)}))"
            f" || ({resource} == 'helmrepositories' && {name} == {literal(CHART_SOURCE)})"
            f" || ({resource} == 'helmcharts' && {name} == request.namespace + '-' + {literal(RELEASE_NAME)}))"
        )

    spec_unchanged = _spec_unchanged(helm_controller, source_controller)
    # A HelmRelease `vcluster` of the tenant's own made before the name was reserved (it names another
    # account) may still be deleted.
    leftover = f"request.operation == 'DELETE' && {resource} == 'helmreleases' && !({_names_installer('oldObject')})"
    return PolicyDefinition(
        name=RELEASE_POLICY,
        rule="platform_owned",
        resource_rules=[
            resource_rule("helm.toolkit.fluxcd.io", ["helmreleases"], ALL_WRITES),
            resource_rule("helm.toolkit.fluxcd.io", ["helmreleases/status"], ["UPDATE"]),
            resource_rule("source.toolkit.fluxcd.io", ["helmrepositories", "helmcharts"], ALL_WRITES),
            resource_rule("source.toolkit.fluxcd.io", ["helmrepositories/status", "helmcharts/status"], ["UPDATE"]),
        ],
        match_conditions=[{"name": "the-release", "expression": f"{ours('object')} || {ours('oldObject')}"}],
        variables=[
            {"name": "platform", "expression": platform_identity(users, groups)},
            {
                "name": "controllers",
                "expression": f"request.userInfo.username in {literal_list(KUBERNETES_CONTROLLERS)}"
                f" || ({resource} == 'helmcharts' && {main} && request.userInfo.username == {helm_controller})"
                f" || ({status_writer})",
            },
        ],
        validations=[
            {
                "expression": f"variables.platform || variables.controllers || ({spec_unchanged}) || ({leftover})",
                "message_expression": (
                    "request.kind.kind + ' ' + request.name + ' installs the virtual cluster\\'s control plane as"
                    f" {INSTALLER_ACCOUNT} (or bears its reserved name): only the platform writes it (' +"
                    " request.userInfo.username + ' may not ' + request.operation.lowerAscii() + ' it; an update that"
                    " leaves spec, owner references and finalizers as they are passes)'"
                ),
                "reason": "Forbidden",
            }
        ],
    )


def policies(users: list[str], groups: list[str], flux_namespace: str) -> list[PolicyDefinition]:
    return [control_plane_policy(users, groups), release_policy(users, groups, flux_namespace)]
