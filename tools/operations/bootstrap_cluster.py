"""Bootstrap step: the preview identity's Kubernetes access, on the stack's own cluster only.

Two things the first version got wrong, each a failure on a real run:

- Which cluster. `kubectl` without flags acts on the admin's current context, whatever cluster
  that is. Here every call names its kubeconfig and context: the stack's `tenancy:cluster.context`
  when it sets one, otherwise a kubeconfig written for this run from the stack's own cluster
  (`gcloud container clusters get-credentials`, whose context is `gke_<project>_<location>_<name>`;
  `aws eks update-kubeconfig --alias`), in a directory of its own.
- When. The Roles that let previews read Helm release state live in the release namespaces, which
  the stack's first `up` creates. Applying them before makes `kubectl apply` fail on the missing
  namespace. So the cluster-wide objects are applied now, each namespaced object only where its
  namespace exists; the rest are reported, and the same step run after the first `up` applies them
  (it is idempotent: `kubectl apply`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import yaml

from components.model.settings.stack import StackSettings
from tools.ci.preview_identity import OUT_DIR

PREVIEW_RBAC = OUT_DIR / "kubernetes-preview-clusterrole.yaml"


class _Runner(Protocol):
    def run(
        self, *argv: str, stdin: str | None = None, placeholder: str = "", env: dict[str, str] | None = None
    ) -> str: ...

    def probe(self, *argv: str) -> bool: ...


def gcp_location_flag(location: str) -> str:
    """gcloud takes zonal and regional clusters apart; a zone ends in `-<letter>` (europe-west1-b)."""
    return f"--zone={location}" if location[-2:-1] == "-" else f"--region={location}"


def kubectl(runner: _Runner, stack: str, settings: StackSettings, directory: Path) -> list[str]:
    """The `kubectl` command line that reaches this stack's cluster and no other."""
    if settings.cluster.context:
        return ["kubectl", "--context", settings.cluster.context]
    kubeconfig = directory / f"kubeconfig-{stack}"
    cluster = settings.cluster.name
    if settings.cloud == "gcp" and settings.gcp is not None:
        location = settings.gcp.cluster_location or settings.gcp.region
        runner.run(
            "gcloud", "container", "clusters", "get-credentials", cluster, gcp_location_flag(location),
            f"--project={settings.gcp.project}", env={"KUBECONFIG": str(kubeconfig)},
        )  # fmt: skip
        context = f"gke_{settings.gcp.project}_{location}_{cluster}"
    elif settings.cloud == "aws" and settings.aws is not None:
        context = f"tenancy-{stack}"
        runner.run(
            "aws", "eks", "update-kubeconfig", "--name", cluster, "--region", settings.aws.region,
            "--kubeconfig", str(kubeconfig), "--alias", context,
        )  # fmt: skip
    else:
        raise ValueError(f"stack {stack}: tenancy:cluster.context is required to reach a {settings.cloud} cluster")
    return ["kubectl", "--kubeconfig", str(kubeconfig), "--context", context]


# libyaml when the wheel has it: the pure-Python parser takes most of a bootstrap run's CPU time.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def documents(path: Path = PREVIEW_RBAC) -> list[dict[str, Any]]:
    return [doc for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_LOADER) if doc]


def _dump(docs: list[dict[str, Any]]) -> str:
    return yaml.dump_all(docs, Dumper=_DUMPER, sort_keys=False)


def apply_preview_access(runner: _Runner, command: list[str], extra: list[dict[str, Any]]) -> list[str]:
    """Apply the preview ClusterRole, its bindings and every namespaced Role whose namespace exists.

    Returns the namespaces still missing (created by the first `up`): run the step again after it.
    """
    everything = [*documents(), *extra]
    cluster_wide = [doc for doc in everything if not doc["metadata"].get("namespace")]
    runner.run(*command, "apply", "-f", "-", stdin=_dump(cluster_wide))
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for doc in everything:
        if doc["metadata"].get("namespace"):
            by_namespace.setdefault(doc["metadata"]["namespace"], []).append(doc)
    missing = []
    for namespace, docs in sorted(by_namespace.items()):
        if not runner.probe(*command, "get", "namespace", namespace):
            missing.append(namespace)
            continue
        runner.run(*command, "apply", "-f", "-", stdin=_dump(docs))
    return missing
