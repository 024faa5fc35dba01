"""A controller's identity as its own chart grants it: rendered from the pinned module's chart folder.

Each controller of the real run runs as a host process, but with exactly the service account, RBAC and
arguments its chart would give its pod: `helm template` renders the chart's own templates (from the
Go module's source at the pinned version, with the values the stack pins), and this module picks out
the controller's ServiceAccount, every Role, ClusterRole and binding that names it, and its container's
arguments. The run creates those objects, requests a token for the account (TokenRequest, as the
kubelet would mount it) and hands the process a kubeconfig holding only that token: a permission the
chart forgot is refused by the real authorizer, and the controller's log says so.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from tools.realrun.kube import dynamic

RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
# A day is more than any run lasts; the API server issues what is asked (no maximum is set).
TOKEN_SECONDS = 86_400


class ChartError(RuntimeError):
    """A chart that does not render, or renders no identity for the controller asked for."""


@dataclass(frozen=True)
class ChartIdentity:
    """The controller's service account, the RBAC objects naming it, and its container's arguments."""

    namespace: str
    service_account: str
    objects: tuple[dict[str, Any], ...]
    args: tuple[str, ...]

    @property
    def username(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"


def render(
    helm: Path,
    chart: Path,
    release: str,
    namespace: str,
    version: str,
    values: Mapping[str, Any],
    folder: Path,
    kube_version: str,
) -> list[dict[str, Any]]:
    """`helm template` of the chart folder at `chart` (copied: its Chart.yaml gets the release's
    version, as the project's release tooling sets it), with `values`; the rendered documents."""
    copy = folder / chart.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(chart, copy)
    copy.chmod(0o755)
    for path in copy.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    meta = yaml.safe_load((copy / "Chart.yaml").read_text())
    meta["version"] = meta["appVersion"] = version
    (copy / "Chart.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    values_file = folder / f"{release}-values.json"
    values_file.write_text(json.dumps(values))
    command = [str(helm), "template", release, str(copy), "--namespace", namespace, "--values", str(values_file),
               "--kube-version", kube_version, "--include-crds"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False, env={"HOME": str(folder)})
    if result.returncode != 0:
        raise ChartError(f"`helm template {release}` of {chart} failed: {result.stderr.strip()[-2000:]}")
    (folder / f"{release}-rendered.yaml").write_text(result.stdout)
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def identity(
    documents: Iterable[Mapping[str, Any]], deployment: str, container: str, kind: str = "Deployment"
) -> ChartIdentity:
    """What the chart grants the named container of the named Deployment (or other workload `kind`
    with a pod template, e.g. a hook's Job): its ServiceAccount, every binding whose subjects name
    that account, the roles those bindings refer to, and its arguments with the `$(VAR)` references
    Kubernetes would expand from the container's env."""
    docs = list(documents)
    found = [d for d in docs if d.get("kind") == kind and d["metadata"]["name"] == deployment]
    if not found:
        raise ChartError(f"the chart renders no {kind} {deployment}")
    pod = found[0]["spec"]["template"]["spec"]
    namespace = found[0]["metadata"].get("namespace") or ""
    account = pod.get("serviceAccountName") or "default"
    containers = [c for c in pod["containers"] if c["name"] == container]
    if not containers:
        raise ChartError(f"{kind} {deployment} has no container {container}")
    env = _env(containers[0], namespace, account)
    args = tuple(_expand(arg, env, f"{kind} {deployment}") for arg in containers[0].get("args") or [])

    def names_account(binding: Mapping[str, Any]) -> bool:
        return any(
            s.get("kind") == "ServiceAccount"
            and s.get("name") == account
            and s.get("namespace", namespace) == namespace
            for s in binding.get("subjects") or []
        )

    bindings = [d for d in docs if d.get("kind") in ("RoleBinding", "ClusterRoleBinding") and names_account(d)]
    wanted_roles = {(b["roleRef"]["kind"], b["roleRef"]["name"], b["metadata"].get("namespace")) for b in bindings}
    roles = [
        d
        for d in docs
        if d.get("kind") in ("Role", "ClusterRole")
        and (d["kind"], d["metadata"]["name"], d["metadata"].get("namespace") if d["kind"] == "Role" else None)
        in {(kind, name, ns if kind == "Role" else None) for kind, name, ns in wanted_roles}
    ]
    accounts = [
        d
        for d in docs
        if d.get("kind") == "ServiceAccount"
        and d["metadata"]["name"] == account
        and d["metadata"].get("namespace", namespace) == namespace
    ]
    if not accounts:
        raise ChartError(f"the chart renders no ServiceAccount {namespace}/{account} for {kind} {deployment}")
    return ChartIdentity(namespace, account, tuple(dict(d) for d in accounts + roles + bindings), args)


def container_env(
    documents: Iterable[Mapping[str, Any]], workload: str, container: str, kind: str = "Deployment"
) -> dict[str, str]:
    """The env a host process of the named container gets: what `_env` can know (literals, the pod's
    namespace and account); a controller that reads its namespace from env needs it as its pod has it."""
    for document in documents:
        if document.get("kind") == kind and document["metadata"]["name"] == workload:
            pod = document["spec"]["template"]["spec"]
            for item in pod["containers"]:
                if item["name"] == container:
                    namespace = document["metadata"].get("namespace") or ""
                    return _env(item, namespace, pod.get("serviceAccountName") or "default")
    raise ChartError(f"the chart renders no container {container} of {kind} {workload}")


def _env(container: Mapping[str, Any], namespace: str, account: str) -> dict[str, str]:
    """The container's env values a host process can know: literals and the pod's namespace."""
    known = {"metadata.namespace": namespace, "spec.serviceAccountName": account}
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        if "value" in item:
            env[item["name"]] = str(item["value"])
        field = ((item.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if field in known:
            env[item["name"]] = known[field]
    return env


def _expand(arg: str, env: Mapping[str, str], workload: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ChartError(f"{workload}: argument {arg!r} refers to $({name}), which the run cannot know")
        return env[name]

    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", value, arg)


def aggregated_roles(documents: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ClusterRoles the chart adds to Kubernetes' aggregated `view`/`edit`/`admin` roles: installed
    with the chart on a cluster, they widen whoever is bound to those roles, so the run has them too."""
    return [
        dict(d)
        for d in documents
        if d.get("kind") == "ClusterRole"
        and any(key.startswith("rbac.authorization.k8s.io/aggregate-to-") for key in d["metadata"].get("labels") or {})
    ]


def crds(documents: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions the chart renders (its templates or its crds/ folder)."""
    return [dict(d) for d in documents if d.get("kind") == "CustomResourceDefinition"]


def apply(api: client.ApiClient, objects: Iterable[Mapping[str, Any]], manager: str) -> None:
    """Server-side apply, as the chart's installer would create them (field manager `manager`)."""
    dyn = dynamic(api)
    for document in objects:
        resource = dyn.resources.get(api_version=document["apiVersion"], kind=document["kind"])
        meta = document["metadata"]
        resource.server_side_apply(
            body=dict(document), name=meta["name"], namespace=meta.get("namespace"), field_manager=manager
        )


def kubeconfig(api: client.ApiClient, chart_identity: ChartIdentity, server: str, ca: Path, path: Path) -> Path:
    """A kubeconfig for the chart's service account alone: a token requested for it (TokenRequest)."""
    request = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=TOKEN_SECONDS)
    )
    answer = client.CoreV1Api(api).create_namespaced_service_account_token(
        chart_identity.service_account, chart_identity.namespace, request
    )
    if answer.status is None or not answer.status.token:
        raise ChartError(f"the API server issued no token for {chart_identity.username}")
    user = chart_identity.username
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "realrun", "cluster": {"server": server, "certificate-authority": str(ca)}}],
                "users": [{"name": user, "user": {"token": answer.status.token}}],
                "contexts": [{"name": "realrun", "context": {"cluster": "realrun", "user": user}}],
                "current-context": "realrun",
            }
        )
    )
    path.chmod(0o600)
    return path
