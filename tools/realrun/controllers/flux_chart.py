"""What the pinned flux2 chart grants source- and kustomize-controller, built from Flux's own manifests.

The stack installs fluxcd-community's flux2 chart 2.17.2 (Flux 2.7.5, components/delivery/flux.py)
with the multi-tenancy lockdown. That chart is no Go module, so the run cannot render its templates
as it renders cert-manager's; it builds the same identity from what the Go module proxy serves:

- the ServiceAccounts and the `crd-controller` ClusterRole and binding: Flux's own install manifests
  (`github.com/fluxcd/flux2/v2`, realrun/flux/manifests/go.mod: v2.9.5, whose manifests/rbac and
  manifests/bases/*/account.yaml are byte-identical to Flux v2.7.5's, the version the chart ships),
  which the chart's templates/crd-controller-clusterrole.yaml mirrors, less the two rules that
  template does not carry at 2.17.2 (CHART_LACKS: a real difference, named in docs/real-run.md);
- what the chart's `multitenancy` values change, applied as its templates apply them at 2.17.2:
  `enabled` adds `--no-cross-namespace-refs=true` and `--default-service-account=<account>` to
  kustomize-controller (templates/kustomize-controller.yaml; source-controller gets neither), and with
  `privileged: false` kustomize-controller is bound to `cluster-reconciler-impersonator` (impersonate
  serviceaccounts, templates/cluster-reconciler-impersonator-clusterrole.yaml) instead of to
  `cluster-admin` (templates/cluster-reconciler-clusterrolebinding.yaml, manifests/rbac/reconciler.yaml);
  `<controller>.container.additionalArgs` are appended to its arguments;
- the arguments: the controller module's own Deployment (config/manager/deployment.yaml at the version
  built), which carries the arguments the chart's template sets but for the lockdown flags above.

A value of the stack the run does not know how to apply fails the run (ChartError) rather than be
left out. What a host process must have instead of a pod's (paths, loopback addresses) is `host_args`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tools.realrun.controllers.chart import ChartError

CHART_VERSION = "2.17.2"
FLUX_VERSION = "2.7.5"
# The image tags of the chart's values.yaml at 2.17.2, and the versions the run builds (binaries.py):
# source-controller v1.7.4 is not served by the Go module proxy, v1.8.5 is the nearest that is.
CHART_TAGS = {"source-controller": "v1.7.4", "kustomize-controller": "v1.7.3"}
# The chart's values keys of each controller (values.yaml).
VALUES_KEYS = {"source-controller": "sourceController", "kustomize-controller": "kustomizeController"}
# Controllers the chart gives the lockdown flags when `multitenancy.enabled` (of the two run here).
LOCKED_DOWN = frozenset({"kustomize-controller"})
# Controllers the chart binds to the reconciler's role (cluster-admin, or the impersonator's).
RECONCILERS = ("kustomize-controller", "helm-controller")
IMPERSONATOR = "cluster-reconciler-impersonator"
# The values the run applies; any other the stack sets fails the run (`check_values`).
APPLIED_VALUES = {
    "multitenancy": {"enabled", "defaultServiceAccount", "privileged"},
    "sourceController": {"container"},
    "kustomizeController": {"container"},
}
# Rules of Flux's manifests/rbac/controller.yaml (since Flux v2.3, commits 539dfa09 and 941af6a6 of
# fluxcd/flux2) that the chart's crd-controller ClusterRole does not have at 2.17.2: the run grants
# what the chart grants.
CHART_LACKS: tuple[dict[str, Any], ...] = (
    {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    {"nonResourceURLs": ["/livez/ping"], "verbs": ["head"]},
)


@dataclass(frozen=True)
class HostAddresses:
    """Where a controller process listens and keeps its files on the host (loopback only)."""

    metrics: str
    health: str
    storage: str = ""  # source-controller's artifact server
    storage_path: str = ""


def check_values(values: Mapping[str, Any]) -> None:
    """Refuse chart values the run does not apply (the run would otherwise differ silently)."""
    for key, value in values.items():
        if key not in APPLIED_VALUES:
            raise ChartError(f"flux2 chart value {key!r}: the real run does not apply it (flux_chart.py)")
        unknown = set(value) - APPLIED_VALUES[key]
        if unknown:
            raise ChartError(f"flux2 chart values {key}.{sorted(unknown)}: the real run does not apply them")
        container = value.get("container") or {}
        if set(container) - {"additionalArgs"}:
            raise ChartError(f"flux2 chart values {key}.container: only additionalArgs is applied by the run")


def _rule_matches(rule: Mapping[str, Any], lacked: Mapping[str, Any]) -> bool:
    return all(sorted(rule.get(k) or []) == sorted(v) for k, v in lacked.items()) and set(rule) <= {
        *lacked,
        "apiGroups",
    }


def crd_controller(documents: Iterable[Mapping[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The `crd-controller` ClusterRole (without CHART_LACKS) and its binding, subjects in `namespace`."""
    docs = [dict(d) for d in documents if d]
    roles = [d for d in docs if d.get("kind") == "ClusterRole" and d["metadata"]["name"] == "crd-controller"]
    bindings = [d for d in docs if d.get("kind") == "ClusterRoleBinding" and d["metadata"]["name"] == "crd-controller"]
    if not roles or not bindings:
        raise ChartError("Flux's manifests/rbac/controller.yaml has no crd-controller ClusterRole and binding")
    rules = list(roles[0]["rules"])
    for lacked in CHART_LACKS:
        found = [r for r in rules if _rule_matches(r, lacked)]
        if not found:
            raise ChartError(f"Flux's crd-controller has no rule {lacked}: re-read the chart against this version")
        rules = [r for r in rules if r is not found[0]]
    role = {**roles[0], "rules": rules}
    binding = {**bindings[0], "subjects": [{**s, "namespace": namespace} for s in bindings[0]["subjects"]]}
    return [role, binding]


def reconciler(
    values: Mapping[str, Any], reconciler_documents: Iterable[Mapping[str, Any]], namespace: str
) -> list[dict[str, Any]]:
    """The reconcilers' cluster rights as the chart's `multitenancy` values choose them."""
    tenancy = values.get("multitenancy") or {}
    subjects = [{"kind": "ServiceAccount", "name": name, "namespace": namespace} for name in RECONCILERS]
    if not tenancy.get("enabled", False) or tenancy.get("privileged", True):
        # The chart's cluster-reconciler binding: cluster-admin (rbac.roleRef.name's default).
        found = [dict(d) for d in reconciler_documents if d and d.get("kind") == "ClusterRoleBinding"]
        if not found:
            raise ChartError("Flux's manifests/rbac/reconciler.yaml has no ClusterRoleBinding")
        return [{**found[0], "subjects": subjects}]
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": IMPERSONATOR}
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": IMPERSONATOR},
            "rules": [{"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": IMPERSONATOR},
            "roleRef": role_ref,
            "subjects": subjects,
        },
    ]


def names_account(binding: Mapping[str, Any], account: str, namespace: str) -> bool:
    return any(
        s.get("kind") == "ServiceAccount" and s.get("name") == account and s.get("namespace") == namespace
        for s in binding.get("subjects") or []
    )


def granted(rbac: Sequence[Mapping[str, Any]], account: str, namespace: str) -> list[dict[str, Any]]:
    """The bindings naming the account and the ClusterRoles they refer to (all of them cluster-wide)."""
    bindings = [d for d in rbac if d.get("kind") == "ClusterRoleBinding" and names_account(d, account, namespace)]
    names = {b["roleRef"]["name"] for b in bindings}
    roles = [d for d in rbac if d.get("kind") == "ClusterRole" and d["metadata"]["name"] in names]
    return [dict(d) for d in roles + bindings]


def deployment_args(document: Mapping[str, Any], container: str = "manager") -> list[str]:
    """The arguments of the named container of the module's own Deployment."""
    containers = document["spec"]["template"]["spec"]["containers"]
    found = [c for c in containers if c.get("name") == container]
    if not found:
        raise ChartError(f"Deployment {document['metadata'].get('name')} has no container {container}")
    return [str(arg) for arg in found[0].get("args") or []]


def chart_args(controller: str, base: Sequence[str], values: Mapping[str, Any]) -> list[str]:
    """The container's arguments with the chart's values applied as its template applies them."""
    check_values(values)
    tenancy = values.get("multitenancy") or {}
    args: list[str] = []
    if controller in LOCKED_DOWN and tenancy.get("enabled", False):
        account = tenancy.get("defaultServiceAccount") or "default"
        args += ["--no-cross-namespace-refs=true", f"--default-service-account={account}"]
    args += base
    extra = ((values.get(VALUES_KEYS[controller]) or {}).get("container") or {}).get("additionalArgs") or []
    return args + [str(arg) for arg in extra]


# Arguments that only mean something inside the pod, and why each is replaced or left out on the host.
POD_ONLY = {
    "--enable-leader-election": "left out: the chart runs one replica, and outside a pod controller-runtime "
    "finds no namespace for the lease",
    "--storage-path": "the run's folder instead of the pod's /data volume",
    "--storage-adv-addr": "the artifact server's loopback address instead of the Service's cluster DNS name",
}


def host_args(args: Sequence[str], addresses: HostAddresses) -> list[str]:
    """The arguments a host process runs with: POD_ONLY ones replaced, every listener on loopback."""
    out = []
    for arg in args:
        flag = arg.split("=", 1)[0]
        if flag == "--enable-leader-election":
            continue
        if flag == "--storage-path":
            out.append(f"--storage-path={addresses.storage_path}")
        elif flag == "--storage-adv-addr":
            out.append(f"--storage-adv-addr={addresses.storage}")
        else:
            out.append(arg)
    # The chart leaves these at their defaults (:8080, :9440, :9090): every interface.
    out += [f"--metrics-addr={addresses.metrics}", f"--health-addr={addresses.health}"]
    if addresses.storage:
        out.append(f"--storage-addr={addresses.storage}")
    return out
