"""Tenant repositories that try to reach past the tenant's namespace, for the real kustomize-controller.

Each attack is a repository on the run's Git server and a GitRepository and Kustomization in a
tenant environment's namespace whose specs are the program's own (`tenant-gitops`, copied from the
live objects: the deployer, the target namespace, the pool patches) with only the URL changed. Every
attack repository also holds a harmless ConfigMap (`MARKER`): kustomize-controller dry-runs every
object before it applies any (fluxcd/pkg ssa ResourceManager.ApplyAll), so a refused repository
must leave nothing behind, the marker included.

- `cluster-scoped`: a ClusterRoleBinding of cluster-admin to the tenant's deployer. The deployer may
  write nothing cluster-scoped: refused by RBAC, as the impersonated deployer.
- `other-namespace`: a ConfigMap moved into another tenant's namespace by a kustomize `replacements`
  entry, which runs after the namespace transformer that `spec.targetNamespace` sets (kustomize's
  built-in order), so the target namespace alone does not contain a repository: refused by RBAC in
  the other namespace, as the impersonated deployer.
- `other-service-account`: a HelmRelease that runs as the namespace's `default` account instead of
  the deployer. The deployer may write HelmReleases (the lockdown is on): refused by admission
  (tenancy-flux, components/admission/rules/flux.py), since the deployer is a tenant identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

MARKER = "realrun-attack-marker"
ATTACK_LABEL = {"app.kubernetes.io/part-of": "realrun-flux-attacks"}


@dataclass(frozen=True)
class Attack:
    """One repository, what its Kustomization's Ready message must say, and what must not land."""

    name: str
    files: dict[str, str]
    # Every fragment must appear in the Kustomization's Ready=False message.
    refusal: tuple[str, ...]
    # (apiVersion, kind, namespace or "", name) of each object the repository asks for.
    must_not_land: tuple[tuple[str, str, str, str], ...]

    @property
    def path(self) -> str:
        return f"/realrun-attacks/{self.name}.git"


def _kustomization(resources: list[str], **extra: Any) -> str:
    return yaml.safe_dump(
        {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources, **extra}
    )


def _marker() -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": MARKER}, "data": {"k": "v"}})


def attacks(namespace: str, other_namespace: str, deployer: str) -> list[Attack]:
    """The attacks on the tenant environment `namespace`; `other_namespace` is another tenant's."""
    user = f"system:serviceaccount:{namespace}:{deployer}"
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "realrun-attack-cluster-admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": deployer, "namespace": namespace}],
    }
    escape = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "realrun-attack-escape"},
        "data": {"target": other_namespace},
    }
    replacement = {
        "source": {"kind": "ConfigMap", "name": "realrun-attack-escape", "fieldPath": "data.target"},
        "targets": [
            {"select": {"kind": "ConfigMap", "name": "realrun-attack-escape"}, "fieldPaths": ["metadata.namespace"]}
        ],
    }
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "realrun-attack-release"},
        "spec": {
            "interval": "10m",
            "serviceAccountName": "default",
            "chart": {"spec": {"chart": "app", "sourceRef": {"kind": "HelmRepository", "name": "charts"}}},
        },
    }
    cm = ("v1", "ConfigMap")
    return [
        Attack(
            "cluster-scoped",
            {
                "binding.yaml": yaml.safe_dump(binding),
                "marker.yaml": _marker(),
                "kustomization.yaml": _kustomization(["binding.yaml", "marker.yaml"]),
            },
            (user, "clusterrolebindings", "forbidden"),
            (
                ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "realrun-attack-cluster-admin"),
                (*cm, namespace, MARKER),
            ),
        ),
        Attack(
            "other-namespace",
            {
                "escape.yaml": yaml.safe_dump(escape),
                "marker.yaml": _marker(),
                "kustomization.yaml": _kustomization(["escape.yaml", "marker.yaml"], replacements=[replacement]),
            },
            (user, other_namespace, "forbidden"),
            (
                (*cm, other_namespace, "realrun-attack-escape"),
                (*cm, namespace, "realrun-attack-escape"),
                (*cm, namespace, MARKER),
            ),
        ),
        Attack(
            "other-service-account",
            {
                "release.yaml": yaml.safe_dump(release),
                "marker.yaml": _marker(),
                "kustomization.yaml": _kustomization(["release.yaml", "marker.yaml"]),
            },
            (f"must set spec.serviceAccountName: {deployer}",),
            (
                ("helm.toolkit.fluxcd.io/v2", "HelmRelease", namespace, "realrun-attack-release"),
                (*cm, namespace, MARKER),
            ),
        ),
    ]


def attack_objects(
    attack: Attack, live_source: dict[str, Any], live_kustomization: dict[str, Any], url: str
) -> list[dict[str, Any]]:
    """The attack's GitRepository and Kustomization: the live program-rendered specs, another URL."""
    name = f"realrun-attack-{attack.name}"
    namespace = live_source["metadata"]["namespace"]
    source_spec = {k: v for k, v in live_source["spec"].items() if k not in ("secretRef", "ref")}
    kustomization_spec = {
        **live_kustomization["spec"],
        "sourceRef": {"kind": "GitRepository", "name": name},
        "path": "./",
    }
    meta = {"name": name, "namespace": namespace, "labels": dict(ATTACK_LABEL)}
    return [
        {
            "apiVersion": live_source["apiVersion"],
            "kind": "GitRepository",
            "metadata": meta,
            "spec": {**source_spec, "url": url, "ref": {"branch": "main"}},
        },
        {
            "apiVersion": live_kustomization["apiVersion"],
            "kind": "Kustomization",
            "metadata": meta,
            "spec": kustomization_spec,
        },
    ]
