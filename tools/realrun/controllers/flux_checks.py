"""The run's Flux lines: each tenant's GitOps reconciled by the real controllers as its deployer, and
repositories that reach past the tenant refused with nothing landed (flux_attacks.py).

After the converged `up` the tenant's team fills its Git credentials Secret (the local cloud's
external secrets are filled by the team, components/clouds/local/data.py), impersonated as a member
of the tenant's admin group where people may write, as the platform where the environment is
read-only for people; the run then asks for a reconcile as `flux reconcile` does (the
`reconcile.fluxcd.io/requestedAt` annotation) and reads only what the controllers wrote.

Applied as the deployer, not as the controller: the Deployment from the repository exists, while
kustomize-controller's own account may not create Deployments there (SubjectAccessReview); the
attacks' refusals name the deployer as the user the API server judged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from kubernetes import client

from components.delivery.gitops import GITOPS_NAME
from components.guardrails.access import DEPLOYER_ACCOUNT
from components.model.core.labels import NODE_POOL_KEY, namespace_name
from tools.realrun.controllers import flux_attacks, gitserver
from tools.realrun.controllers.chart import ChartIdentity
from tools.realrun.kube import dynamic, plain
from tools.realrun.report import Report

if TYPE_CHECKING:
    from tools.realrun.controllers.flux import Started

SOURCE_API = "source.toolkit.fluxcd.io/v1"
KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
# The field managers the controllers write statuses and applied objects with, as the real run saw
# them: source-controller's status as `source-controller`, kustomize-controller's own status as
# `gotk-kustomize-controller` (its status patcher's owner) and what it applies as `kustomize-controller`.
SOURCE_MANAGER = "source-controller"
KUSTOMIZE_STATUS_MANAGER = "gotk-kustomize-controller"
KUSTOMIZE_MANAGER = "kustomize-controller"


@dataclass(frozen=True)
class AttackPlan:
    """Where the attacks run: one tenant environment, and another tenant's namespace to reach for."""

    namespace: str
    other_namespace: str
    attacks: tuple[flux_attacks.Attack, ...]


def plan_attacks(tenants: Path) -> AttackPlan | None:
    """The first GitOps tenant environment outside a virtual cluster, and another tenant's namespace."""
    repositories = [r for r in gitserver.tenant_repositories(tenants) if not r.virtual_cluster and r.environments]
    if not repositories:
        return None
    target = repositories[0]
    namespace = namespace_name(target.tenant, target.environments[0])
    for file in sorted(tenants.glob("*.yaml")):
        document = yaml.safe_load(file.read_text()) or {}
        if document.get("name") not in (None, target.tenant) and document.get("environments"):
            other = namespace_name(document["name"], document["environments"][0])
            return AttackPlan(namespace, other, tuple(flux_attacks.attacks(namespace, other, DEPLOYER_ACCOUNT)))
    return None


def _items(api: client.ApiClient, api_version: str, kind: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = (
        dynamic(api).resources.get(api_version=api_version, kind=kind).get().to_dict()["items"]
    )
    return items


def _ready(item: Mapping[str, Any]) -> dict[str, Any]:
    conditions = (item.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Ready"), {})


def _status_writers(item: Mapping[str, Any]) -> set[str]:
    return {
        m.get("manager", "") for m in item["metadata"].get("managedFields") or [] if m.get("subresource") == "status"
    }


def _acting(api: client.ApiClient, user: str, group: str) -> client.ApiClient:
    acting = client.ApiClient(api.configuration)
    acting.set_default_header("Impersonate-User", user)  # type: ignore[no-untyped-call]
    acting.set_default_header("Impersonate-Group", group)  # type: ignore[no-untyped-call]
    return acting


def fill_secrets(
    api: client.ApiClient, server: gitserver.GitServer, admins: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """Each GitOps Secret filled with the server's credentials: by a member of the tenant's admin group
    where RBAC lets people write Secrets, else by the platform. Returns who filled what, and the
    refusals of a write RBAC allowed (admission refusing the team its own Secret is a finding)."""
    done, refused = [], []
    for repository in server.repositories:
        if not repository.spec.secret:
            continue
        body = {"stringData": gitserver.secret_data(server, repository)}
        user, group = f"realrun:{repository.tenant}-admin", admins.get(repository.tenant, "")
        for environment in repository.environments:
            namespace = namespace_name(repository.tenant, environment)
            if group and may(api, user, "patch", "", "secrets", namespace, groups=[group]):
                try:
                    acting = client.CoreV1Api(_acting(api, user, group))
                    acting.patch_namespaced_secret(repository.spec.secret, namespace, body)
                    done.append(f"{namespace} by {group}")
                    continue
                except client.ApiException as error:
                    refused.append(
                        f"{namespace}: {group} may patch Secrets but was refused: {error.body or error}"[:500]
                    )
            client.CoreV1Api(api).patch_namespaced_secret(repository.spec.secret, namespace, body)
            done.append(f"{namespace} by the platform (people may not write Secrets there)")
    return done, refused


def request_reconcile(api: client.ApiClient, api_version: str, kind: str, namespace: str, name: str) -> None:
    """What `flux reconcile` does: a new `reconcile.fluxcd.io/requestedAt` value."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    resource = dynamic(api).resources.get(api_version=api_version, kind=kind)
    resource.patch(
        body={"metadata": {"annotations": {REQUESTED_AT: now}}},
        name=name,
        namespace=namespace,
        content_type="application/merge-patch+json",
    )


def _wait(done: Callable[[], list[str]], timeout: float) -> list[str]:
    """Poll until `done()` returns no problems or the time is up; the last problems."""
    deadline = time.monotonic() + timeout
    problems = done()
    while problems and time.monotonic() < deadline:
        time.sleep(2)
        problems = done()
    return problems


def gitops_problems(api: client.ApiClient, server: gitserver.GitServer) -> list[str]:
    """What is not yet as it must be for every tenant environment's GitOps objects."""
    problems = []
    sources = {
        s["metadata"]["namespace"]: s
        for s in _items(api, SOURCE_API, "GitRepository")
        if s["metadata"]["name"] == GITOPS_NAME
    }
    kustomizations = {
        k["metadata"]["namespace"]: k
        for k in _items(api, KUSTOMIZE_API, "Kustomization")
        if k["metadata"]["name"] == GITOPS_NAME
    }
    for repository in server.repositories:
        for environment, (ref, commit) in gitserver.served_refs(server, repository).items():
            namespace = namespace_name(repository.tenant, environment)
            source, kustomization = sources.get(namespace), kustomizations.get(namespace)
            if source is None or kustomization is None:
                problems.append(f"{namespace}: no {GITOPS_NAME} GitRepository and Kustomization")
                continue
            if commit is None:
                problems.append(f"{namespace}: the run cannot make {ref} (a pinned commit)")
                continue
            revision = f"{ref.split(' ', 1)[1]}@sha1:{commit}"
            ready = _ready(source)
            artifact = ((source.get("status") or {}).get("artifact") or {}).get("revision")
            if ready.get("status") != "True" or artifact != revision:
                problems.append(
                    f"{namespace} GitRepository: {ready.get('reason')}: {ready.get('message', '')[:300]} "
                    f"(artifact {artifact}, want {revision})"
                )
                continue
            if SOURCE_MANAGER not in _status_writers(source):
                problems.append(f"{namespace} GitRepository: status written by {sorted(_status_writers(source))}")
            ready = _ready(kustomization)
            if repository.virtual_cluster:
                continue  # judged by virtual_cluster_limits
            applied = (kustomization.get("status") or {}).get("lastAppliedRevision")
            if ready.get("status") != "True" or applied != revision:
                problems.append(
                    f"{namespace} Kustomization: {ready.get('reason')}: {ready.get('message', '')[:400]} "
                    f"(applied {applied})"
                )
            elif KUSTOMIZE_STATUS_MANAGER not in _status_writers(kustomization):
                problems.append(
                    f"{namespace} Kustomization: status written by {sorted(_status_writers(kustomization))}"
                )
    return problems


def applied_problems(api: client.ApiClient, server: gitserver.GitServer, pools: Mapping[str, str]) -> list[str]:
    """The repositories' objects in each (host) environment: applied by kustomize-controller, with the
    Kustomization's pool patches on the Deployment."""
    problems = []
    apps = client.AppsV1Api(api)
    for repository in server.repositories:
        if repository.virtual_cluster:
            continue
        for environment in repository.environments:
            namespace = namespace_name(repository.tenant, environment)
            try:
                client.CoreV1Api(api).read_namespaced_config_map("from-git", namespace)
                deployment = plain(api, apps.read_namespaced_deployment("from-git", namespace))
            except client.ApiException as error:
                problems.append(f"{namespace}: the repository's objects are not there ({error.status} {error.reason})")
                continue
            managers = {str(m.get("manager")) for m in deployment["metadata"].get("managedFields") or []}
            if KUSTOMIZE_MANAGER not in managers:
                problems.append(f"{namespace}: Deployment from-git written by {sorted(managers)}")
            selector = deployment["spec"]["template"]["spec"].get("nodeSelector") or {}
            pool = pools.get(repository.tenant)
            if pool and selector.get(NODE_POOL_KEY) != pool:
                problems.append(f"{namespace}: Deployment from-git is not placed on pool {pool} ({selector})")
    return problems


def may(
    api: client.ApiClient,
    user: str,
    verb: str,
    group: str,
    resource: str,
    namespace: str,
    groups: list[str] | None = None,
) -> bool:
    """The API server's answer (SubjectAccessReview): may `user` `verb` the resource in `namespace`?
    A service account's groups are the ones the API server gives it; others are `groups`."""
    if groups is None and user.startswith("system:serviceaccount:"):
        groups = ["system:serviceaccounts", f"system:serviceaccounts:{user.split(':')[2]}"]
    review = client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(
            user=user,
            groups=[*(groups or []), "system:authenticated"],
            resource_attributes=client.V1ResourceAttributes(
                verb=verb, group=group, resource=resource, namespace=namespace
            ),
        )
    )
    answer = client.AuthorizationV1Api(api).create_subject_access_review(review)
    return bool(answer.status and answer.status.allowed)


def reconciled(
    api: client.ApiClient,
    server: gitserver.GitServer,
    controller: ChartIdentity,
    admins: Mapping[str, str],
    pools: Mapping[str, str],
    timeout: float = 240,
) -> tuple[bool, str]:
    """The line for the tenants' GitOps."""
    filled, problems = fill_secrets(api, server, admins)
    for repository in server.repositories:
        for environment in repository.environments:
            namespace = namespace_name(repository.tenant, environment)
            for api_version, kind in ((SOURCE_API, "GitRepository"), (KUSTOMIZE_API, "Kustomization")):
                request_reconcile(api, api_version, kind, namespace, GITOPS_NAME)
    problems += _wait(lambda: gitops_problems(api, server) + applied_problems(api, server, pools), timeout)
    host = [namespace_name(r.tenant, e) for r in server.repositories if not r.virtual_cluster for e in r.environments]
    own = [ns for ns in host if may(api, controller.username, "create", "apps", "deployments", ns)]
    account = f"system:serviceaccount:{{}}:{DEPLOYER_ACCOUNT}"
    deployer = [ns for ns in host if not may(api, account.format(ns), "create", "apps", "deployments", ns)]
    if own:
        problems.append(
            f"kustomize-controller's own account may create Deployments in {own}: impersonation is not shown"
        )
    if deployer:
        problems.append(f"the deployer may not create Deployments in {deployer}")
    if problems:
        return False, f"{len(problems)} problems: " + "; ".join(problems)[:3000]
    environments = ", ".join(host)
    return True, (
        f"{len(host)} tenant environments ({environments}) reconciled from https://{server.address} "
        "by source-controller "
        f"and kustomize-controller (statuses by their managers), each at the commit of its ref; the repository's "
        f"Deployment and ConfigMap applied by manager {KUSTOMIZE_MANAGER} with the pool patches, as the deployer "
        f"(kustomize-controller's own account may not create Deployments there, the deployer may); Git credentials "
        f"filled: {filled}"
    )


def virtual_cluster_limits(api: client.ApiClient, server: gitserver.GitServer) -> tuple[bool, str] | None:
    """The virtual-cluster tenants' Kustomizations apply inside a vCluster, which does not run here
    (not served by the Go module proxy): their sources are fetched, their applies fail on the missing
    kubeconfig Secret. None when no tenant has a virtual cluster."""
    virtual = [r for r in server.repositories if r.virtual_cluster]
    if not virtual:
        return None
    kustomizations = {
        k["metadata"]["namespace"]: k
        for k in _items(api, KUSTOMIZE_API, "Kustomization")
        if k["metadata"]["name"] == GITOPS_NAME
    }
    seen = []
    for repository in virtual:
        for environment in repository.environments:
            namespace = namespace_name(repository.tenant, environment)
            ready = _ready(kustomizations.get(namespace) or {})
            seen.append(f"{namespace}: {ready.get('status')} {ready.get('reason')}: {ready.get('message', '')[:160]}")
    return True, "; ".join(seen)


def attacks_refused(
    api: client.ApiClient, server: gitserver.GitServer, plan: AttackPlan, timeout: float = 180
) -> list[tuple[str, bool, str]]:
    """One (name, passed, detail) per attack, after all of them ran side by side."""
    source = (
        dynamic(api)
        .resources.get(api_version=SOURCE_API, kind="GitRepository")
        .get(name=GITOPS_NAME, namespace=plan.namespace)
        .to_dict()
    )
    kustomization = (
        dynamic(api)
        .resources.get(api_version=KUSTOMIZE_API, kind="Kustomization")
        .get(name=GITOPS_NAME, namespace=plan.namespace)
        .to_dict()
    )
    for attack in plan.attacks:
        for item in flux_attacks.attack_objects(attack, source, kustomization, server.url(attack.path)):
            resource = dynamic(api).resources.get(api_version=item["apiVersion"], kind=item["kind"])
            resource.server_side_apply(
                body=item, name=item["metadata"]["name"], namespace=plan.namespace, field_manager="realrun-flux-attacks"
            )

    def verdicts() -> list[tuple[str, bool, str]]:
        found = {
            k["metadata"]["name"]: k
            for k in _items(api, KUSTOMIZE_API, "Kustomization")
            if k["metadata"]["namespace"] == plan.namespace
        }
        out = []
        for attack in plan.attacks:
            item = found.get(f"realrun-attack-{attack.name}") or {}
            ready = _ready(item)
            message = str(ready.get("message", ""))
            refused = ready.get("status") == "False" and all(f in message for f in attack.refusal)
            out.append((attack.name, refused, f"{ready.get('status')} {ready.get('reason')}: {message[:600]}"))
        return out

    deadline = time.monotonic() + timeout
    results = verdicts()
    while not all(ok for _, ok, _ in results) and time.monotonic() < deadline:
        time.sleep(2)
        results = verdicts()
    final = []
    for (name, refused, detail), attack in zip(results, plan.attacks, strict=True):
        landed = [
            f"{kind} {ns}/{obj}"
            for api_version, kind, ns, obj in attack.must_not_land
            if _exists(api, api_version, kind, ns, obj)
        ]
        final.append((name, refused and not landed, f"{detail}; landed: {landed or 'nothing'}"))
    return final


def _exists(api: client.ApiClient, api_version: str, kind: str, namespace: str, name: str) -> bool:
    try:
        dynamic(api).resources.get(api_version=api_version, kind=kind).get(name=name, namespace=namespace or None)
    except client.ApiException as error:
        if error.status == 404:
            return False
        raise
    return True


def _tenant_facts(tenants: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Each tenant's first admin group and its node pool, from the run's copy of its file."""
    admins, pools = {}, {}
    for file in sorted(tenants.glob("*.yaml")):
        document = yaml.safe_load(file.read_text()) or {}
        name = document.get("name")
        if not name:
            continue
        groups = (document.get("access") or {}).get("admin") or []
        if groups:
            admins[name] = groups[0]
        if document.get("nodePool"):
            pools[name] = document["nodePool"]
    return admins, pools


def report_lines(report: Report, api: client.ApiClient, started: Started, tenants: Path) -> None:
    """The Flux lines of the real run (platform.check calls it after the converged `up`)."""
    server = started.git
    if server is None:
        return
    admins, pools = _tenant_facts(tenants)
    ok, detail = reconciled(api, server, started.identities["kustomize-controller"], admins, pools)
    report.check("flux reconciled every tenant's GitOps as its deployer", ok, detail)
    limits = virtual_cluster_limits(api, server)
    if limits is not None:
        report.note(
            f"flux: virtual-cluster environments (vCluster is not served here, their applies cannot run): {limits[1]}"
        )
    plan = plan_attacks(tenants)
    if plan is None:
        report.check("flux refused the attack repositories", False, "no tenant environment to run them in")
        return
    for name, refused, detail in attacks_refused(api, server, plan):
        report.check(f"flux refused the {name} repository, nothing landed", refused, f"in {plan.namespace}: {detail}")
