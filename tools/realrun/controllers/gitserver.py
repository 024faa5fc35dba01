"""The tenants' Git repositories on loopback: made and filled by the run, served by flux-gitserver.

Each tenant file with `gitops` gets its repository at the URL's path on a server of the run's own
(realrun/flux/gitserver: git's git-http-backend over HTTPS on 127.0.0.1), holding, for every
environment that reads it, the environment's path (`gitops.path`) with a small app, at the ref the
environment follows (`gitops.ref` or `gitops.refs`: a branch or a tag; a pinned commit cannot be
made and is named as not served). The run's copy of the tenant file then names the local server:
only the URL's scheme and host change (`https://127.0.0.1:<port>`), its path stays; that is the only
override. A tenant whose gitops names a `secret` gets a repository that answers only to a user and
password, which the tenant's team puts into that Secret after `up` (`fill_secret`), as its
annotation tells the team to.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from components.delivery.gitops import gitops_path
from components.model.tenant_file.apps import GitOpsSpec
from tools.realrun.cluster import ControlPlane

BRANCH_FOR_TAGS = "realrun-tags"


class GitServerError(RuntimeError):
    """The server did not come up, or a repository could not be made."""


@dataclass(frozen=True)
class TenantRepository:
    """One tenant's repository: where the tenant file names it, what each environment reads."""

    tenant: str
    file: Path
    url: str
    spec: GitOpsSpec
    environments: tuple[str, ...]
    virtual_cluster: bool

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    def refs(self) -> dict[str, dict[str, str]]:
        """Each environment's ref, as the GitRepository's `spec.ref` has it."""
        found = {}
        for environment in self.environments:
            ref = self.spec.ref_for(environment)
            found[environment] = {k: v for k in ("branch", "tag", "commit") if (v := getattr(ref, k)) is not None}
        return found


@dataclass
class GitServer:
    """The running server: its address, its certificate, and the repositories it serves."""

    address: str
    certificate: Path
    root: Path
    credentials: dict[str, dict[str, str]] = field(default_factory=dict)
    repositories: list[TenantRepository] = field(default_factory=list)
    commits: dict[str, str] = field(default_factory=dict)  # "<repo path> <ref>" -> commit

    def url(self, path: str) -> str:
        return f"https://{self.address}{path}"


def tenant_repositories(tenants: Path) -> list[TenantRepository]:
    """The tenants with `gitops` in the run's copy of tenants/, parsed by the program's own model."""
    found = []
    for file in sorted(tenants.glob("*.yaml")):
        document = yaml.safe_load(file.read_text()) or {}
        if not isinstance(document, dict) or not document.get("gitops"):
            continue
        spec = GitOpsSpec.model_validate(document["gitops"])
        environments = tuple(spec.environments or document.get("environments") or [])
        virtual = document.get("isolation") == "virtual-cluster"
        found.append(TenantRepository(document["name"], file, spec.url, spec, environments, virtual))
    return found


def app_manifests(tenant: str, environment: str) -> dict[str, str]:
    """The environment's path: a ConfigMap and a Deployment with no placement (the Kustomization's
    pool patches add it) and a kustomization.yaml listing them."""
    labels = {"app.kubernetes.io/name": "from-git"}
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "from-git", "labels": labels},
        "data": {"tenant": tenant, "environment": environment},
    }
    # As the admission tests' workloads (tools/generators/admission_cases.py): pulled always, limited,
    # hardened. Its pods land on the pool's kwok node (the real ones carry the probes' taint).
    container = {
        "name": "app",
        "image": "docker.io/nginxinc/nginx-unprivileged:1.29.4-alpine3.23",
        "imagePullPolicy": "Always",
        "resources": {"limits": {"memory": "64Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "from-git", "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["configmap.yaml", "deployment.yaml"],
    }
    return {
        "configmap.yaml": yaml.safe_dump(config_map),
        "deployment.yaml": yaml.safe_dump(deployment),
        "kustomization.yaml": yaml.safe_dump(kustomization),
    }


def git(args: Sequence[str], cwd: Path) -> str:
    """git with the run's author and no user or system configuration."""
    env = {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "realrun",
        "GIT_AUTHOR_EMAIL": "realrun@127.0.0.1",
        "GIT_COMMITTER_NAME": "realrun",
        "GIT_COMMITTER_EMAIL": "realrun@127.0.0.1",
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise GitServerError(f"git {' '.join(args)} in {cwd}: {(result.stderr or result.stdout).strip()[-500:]}")
    return result.stdout.strip()


def make_repository(
    root: Path, work: Path, path: str, files: Mapping[str, str], refs: Sequence[Mapping[str, str]]
) -> dict[str, str]:
    """A bare repository at `root/<path>` with one commit holding `files` (relative path -> text),
    reachable from every branch and tag in `refs`; returns ref -> commit."""
    work.mkdir(parents=True)
    git(["init", "--quiet", "--initial-branch", BRANCH_FOR_TAGS], work)
    for name, text in files.items():
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(["add", "--all"], work)
    git(["commit", "--quiet", "--message", "filled by the real run"], work)
    commit = git(["rev-parse", "HEAD"], work)
    made: dict[str, str] = {}
    for ref in refs:
        if "branch" in ref:
            git(["branch", "--force", ref["branch"]], work)
            made[f"branch {ref['branch']}"] = commit
        elif "tag" in ref:
            git(["tag", "--force", ref["tag"]], work)
            made[f"tag {ref['tag']}"] = commit
    bare = root / path.lstrip("/")
    bare.parent.mkdir(parents=True, exist_ok=True)
    git(["clone", "--quiet", "--bare", str(work), str(bare)], root)
    return made


def start(
    plane: ControlPlane,
    binary: Path,
    tenants: Path,
    folder: Path,
    extra: Mapping[str, Mapping[str, str]] | None = None,
    timeout: float = 30,
) -> GitServer:
    """Fill every tenant's repository and the `extra` ones (path -> files, branch main, readable
    anonymously), start the server, and point the tenant files at it."""
    root, work = folder / "repositories", folder / "work"
    root.mkdir(parents=True)
    repositories = tenant_repositories(tenants)
    credentials: dict[str, dict[str, str]] = {}
    commits: dict[str, str] = {}
    for repository in repositories:
        files: dict[str, str] = {}
        for environment in repository.environments:
            base = gitops_path(repository.spec, environment).removeprefix("./").strip("/")
            for name, text in app_manifests(repository.tenant, environment).items():
                files[f"{base}/{name}"] = text
        refs = [ref for ref in repository.refs().values() if "commit" not in ref]
        made = make_repository(root, work / repository.tenant, repository.path, files, refs)
        commits.update({f"{repository.path} {ref}": commit for ref, commit in made.items()})
        if repository.spec.secret:
            credentials[repository.path] = {"user": repository.tenant, "password": secrets.token_urlsafe(18)}
    for index, (path, content) in enumerate(sorted((extra or {}).items())):
        made = make_repository(root, work / f"extra-{index}", path, content, [{"branch": "main"}])
        commits.update({f"{path} {ref}": commit for ref, commit in made.items()})
    auth = folder / "auth.json"
    auth.write_text(json.dumps(credentials))
    auth.chmod(0o600)
    address_file, certificate = folder / "address", folder / "server.crt"
    plane.start(
        "flux-gitserver",
        [
            str(binary),
            f"-root={root}",
            f"-address-file={address_file}",
            f"-cert-file={certificate}",
            f"-auth-file={auth}",
        ],
    )
    deadline = time.monotonic() + timeout
    while not (address_file.exists() and certificate.exists() and address_file.read_text()):
        if time.monotonic() > deadline:
            raise GitServerError(f"flux-gitserver wrote no address in {timeout:.0f} s (its log: {plane.folder}/logs)")
        time.sleep(0.1)
    server = GitServer(address_file.read_text().strip(), certificate, root, credentials, repositories, commits)
    for repository in repositories:
        point_at(repository.file, repository.url, server.url(repository.path))
    return server


def point_at(file: Path, url: str, local: str) -> None:
    """The tenant file's `gitops.url` replaced by the local server's (the text, so comments stay)."""
    text = file.read_text()
    if text.count(url) != 1:
        raise GitServerError(f"{file}: gitops.url {url} appears {text.count(url)} times; expected once")
    file.write_text(text.replace(url, local))


def secret_data(server: GitServer, repository: TenantRepository) -> dict[str, str]:
    """What the tenant's team puts into its Git credentials Secret for the local server."""
    credentials = server.credentials[repository.path]
    return {"username": credentials["user"], "password": credentials["password"]}


def served_refs(server: GitServer, repository: TenantRepository) -> dict[str, Any]:
    """Each environment's ref and the commit the server holds for it (None: not made)."""
    out: dict[str, Any] = {}
    for environment, ref in repository.refs().items():
        kind, value = next(iter(ref.items()))
        out[environment] = (f"{kind} {value}", server.commits.get(f"{repository.path} {kind} {value}"))
    return out
