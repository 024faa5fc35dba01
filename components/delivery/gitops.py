"""GitOps for one tenant environment: the tenant's Git repository and a Flux Kustomization of one path.

kustomize-controller applies the path as the tenant's deployer, into the tenant's namespace only,
and prunes what the repository no longer holds: the repository can change no more than the
tenant's own team could with `kubectl`.

Both objects are the platform's (`tenancy.io/platform-owned`, red team round 8): whoever could
repoint the source or delete the Kustomization (Flux then prunes everything it applied) would apply
a tree of their choosing as the deployer, or inside a virtual cluster as its admin. Tenant roles only
read them; the label makes admission refuse a stray grant too, while Flux's controllers keep adding
and removing their finalizer (components/admission/rules/platform_owned.py).
"""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s

from components.delivery.objects import SOURCE_API, DeliveryTarget, flux_object, secret_ref, suspension
from components.delivery.pod_patch import pod_patches
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.model.tenant_file.apps import GitOpsSpec

KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
# Name of the GitRepository and Kustomization in each tenant namespace (one repository per tenant).
GITOPS_NAME = "tenant-gitops"


def gitops_path(gitops: GitOpsSpec, environment: str) -> str:
    return gitops.path.replace("{environment}", environment)


def gitops_revision(gitops: GitOpsSpec, environment: str) -> str:
    """`branch main`, `tag v1.2.0` or `commit <sha>` that `environment` follows, for outputs."""
    ref = gitops.ref_for(environment)
    for kind in ("branch", "tag", "commit"):
        value = getattr(ref, kind)
        if value is not None:
            return f"{kind} {value}"
    raise AssertionError("GitRef validates exactly one of branch, tag or commit")


def _virtual_cluster_target(secret: str, key: str) -> dict[str, Any]:
    """Apply inside the environment's virtual cluster: its kubeconfig instead of impersonation.

    The kubeconfig is the virtual cluster's admin, whose reach ends at the virtual cluster; Flux
    impersonates the deployer's name there, which the virtual cluster binds (components/vcluster/inside.py).
    No target namespace: the repository may create namespaces and CRDs there. No pool patches
    either: the syncer pins every pod it syncs to the host.
    """
    return {"kubeConfig": {"secretRef": {"name": secret, "key": key}}}


def register_gitops(target: DeliveryTarget, *, environment: str, gitops: GitOpsSpec) -> dict[str, str]:
    """The tenant's repository and a Kustomization that applies one path of it as the deployer.

    Returns what the tenant's outputs show: the URL, the revision and the path this environment reads.
    """
    followed = gitops.ref_for(environment)
    ref = {kind: value for kind in ("branch", "tag", "commit") if (value := getattr(followed, kind)) is not None}
    k8s.apiextensions.CustomResource(
        f"{target.prefix}-gitops-source",
        **flux_object(SOURCE_API, "GitRepository", GITOPS_NAME, target=target, owned=True),
        spec={
            "interval": gitops.interval,
            "url": gitops.url,
            "ref": ref,
            **secret_ref(gitops.secret),
            **suspension(target),
        },
        opts=target.opts,
    )
    path = gitops_path(gitops, environment)
    spec: dict[str, Any] = {
        "interval": gitops.interval,
        "sourceRef": {"kind": "GitRepository", "name": GITOPS_NAME},
        "path": path,
        # Objects removed from the repository are removed from the namespace.
        "prune": True,
        # Impersonation: the repository can only change what the tenant's deployer may change.
        "serviceAccountName": DEPLOYER_ACCOUNT,
        # The namespace of every namespaced object that names none or another: kustomize's namespace
        # transformer. Not a boundary: a repository's own `replacements` run after it and can name
        # another namespace; the deployer's RBAC refuses that write (the real run's Flux attacks).
        "targetNamespace": target.namespace,
        "timeout": "5m",
    }
    if target.gitops_kubeconfig is not None:
        del spec["targetNamespace"]
        spec.update(_virtual_cluster_target(*target.gitops_kubeconfig))
    # Placement only: the repository's own manifests choose their service account (`workload`).
    patches = pod_patches(target.pool)
    if patches and target.gitops_kubeconfig is None:
        spec["patches"] = patches
    spec.update(suspension(target))
    k8s.apiextensions.CustomResource(
        f"{target.prefix}-gitops",
        **flux_object(KUSTOMIZE_API, "Kustomization", GITOPS_NAME, target=target, owned=True),
        spec=spec,
        opts=target.opts,
    )
    return {"url": gitops.url, "revision": gitops_revision(gitops, environment), "path": path}
