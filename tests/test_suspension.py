"""Suspension that suspends, and resuming that restores (components/lifecycle.py).

The example tenants are planned active, then with acme (chart and image apps, databases) and
genomics-lab (GitOps) suspended, then active again. Between the plans, the Pulumi engine's own
`ignoreChanges` step is replayed (old inputs kept at ignored paths), because that is where a
suspension could leak into the resumed state: the first and last renders must be identical.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.delivery.objects import SKIP_AWAIT
from components.model.catalog.stack_config import parse_settings
from tests.admission.layers import ACME_ADMIN, ACME_DEV, ACME_PROD, Cluster, cluster, platform_identity
from tests.k8s_schema import validate_builtin, validate_custom
from tests.rbac import Authorizer, Subject
from tests.support import EXAMPLE_TENANTS, kubernetes_objects, objects_of_kind, plan
from tools.plan.diff import diff_dirs
from tools.plan.harness import ProgramRun, stack_config
from tools.plan.run import write_plan

SUSPENDED = ("acme", "genomics-lab")
HTTPS_CHART = {"repository": "https://charts.acme-corp.example", "name": "docs", "version": "1.2.0"}
FLUX_KINDS = {"HelmRelease", "OCIRepository", "HelmRepository", "GitRepository", "Kustomization"}
# What a suspension may touch: the switches, never data, identities or secrets delivery.
SWITCHED = {
    "kubernetes:core/v1:Namespace",
    "kubernetes:core/v1:ResourceQuota",
    "kubernetes:networking.k8s.io/v1:NetworkPolicy",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
    "kubernetes:apps/v1:Deployment",
    "kubernetes:helm.toolkit.fluxcd.io/v2:HelmRelease",
    "kubernetes:source.toolkit.fluxcd.io/v1:OCIRepository",
    "kubernetes:source.toolkit.fluxcd.io/v1:GitRepository",
    "kubernetes:source.toolkit.fluxcd.io/v1:HelmRepository",
    "kubernetes:kustomize.toolkit.fluxcd.io/v1:Kustomization",
}


def tenants(directory: Path, lifecycle: str) -> Path:
    """The example tenants with SUSPENDED in `lifecycle`."""
    if directory.exists():
        shutil.rmtree(directory)
    shutil.copytree(EXAMPLE_TENANTS, directory)
    for name in SUSPENDED:
        path = directory / f"{name}.yaml"
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        document["lifecycle"] = lifecycle
        if name == "acme":
            # An HTTPS chart as well, so a HelmRepository is among the suspended sources.
            document["apps"].append({"name": "docs", "chart": HTTPS_CHART, "environments": ["dev"]})
        path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return directory


def engine_step(previous: ProgramRun, current: ProgramRun) -> ProgramRun:
    """What the engine sends after `previous` was applied: at each `ignoreChanges` path, the old
    input value (or none where the old inputs had none), as Pulumi's engine does."""
    old = previous.by_urn()
    result = copy.deepcopy(current)
    for resource in result.resources:
        before = old.get(resource.urn)
        for path in resource.ignore_changes if before is not None else []:
            _copy_path(before.inputs if before else {}, resource.inputs, path.split("."))
    return result


def _copy_path(source: dict[str, Any], target: dict[str, Any], path: list[str]) -> None:
    for key in path[:-1]:
        source, target = source.get(key, {}), target.setdefault(key, {})
    if path[-1] in source:
        target[path[-1]] = source[path[-1]]
    else:
        target.pop(path[-1], None)


@pytest.fixture(scope="module", params=["dev", "prod"])
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[ProgramRun]:
    """Active, suspended, active again, each as the engine would receive it after the one before."""
    directory = tmp_path_factory.mktemp(request.param) / "tenants"
    active = plan(request.param, tenants(directory, "active"))
    suspended = engine_step(active, plan(request.param, tenants(directory, "suspended")))
    resumed = engine_step(suspended, plan(request.param, tenants(directory, "active")))
    return [active, suspended, resumed]


def test_resuming_renders_exactly_the_state_before_suspension(runs: list[ProgramRun], tmp_path: Path) -> None:
    for index, run in enumerate(runs):
        write_plan(run, tmp_path / str(index))
    assert not diff_dirs(tmp_path / "0", tmp_path / "1").empty()
    assert diff_dirs(tmp_path / "0", tmp_path / "2").empty()


def test_suspension_touches_only_its_switches_never_data(runs: list[ProgramRun], tmp_path: Path) -> None:
    active, suspended, _ = runs
    write_plan(active, tmp_path / "active")
    write_plan(suspended, tmp_path / "suspended")
    diff = diff_dirs(tmp_path / "active", tmp_path / "suspended")
    assert {scope for scope, changes in diff.scopes.items() if not changes.empty()} == set(SUSPENDED)
    assert not diff.scopes["acme"].added and not diff.scopes["genomics-lab"].added
    changed = {record["type"] for scope in SUSPENDED for record, _ in diff.scopes[scope].changed}
    removed = {record["type"] for scope in SUSPENDED for record in diff.scopes[scope].removed}
    assert changed <= SWITCHED and removed == {"kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"}
    # Databases, secrets, keys, passwords and identities stay exactly as they were.
    assert not changed & {"kubernetes:core/v1:Secret", "kubernetes:postgresql.cnpg.io/v1:Cluster"}


def _of(run: ProgramRun, tenant: str, kind: str) -> list[dict[str, Any]]:
    return [
        obj
        for obj in objects_of_kind(run, kind)
        if obj["metadata"].get("namespace", obj["metadata"]["name"]).startswith(f"tenant-{tenant}-")
    ]


def test_a_suspended_tenants_flux_objects_are_suspended_and_valid(runs: list[ProgramRun]) -> None:
    active, suspended, _ = runs
    flux = [obj for kind in FLUX_KINDS for tenant in SUSPENDED for obj in _of(suspended, tenant, kind)]
    assert {obj["kind"] for obj in flux} == FLUX_KINDS
    for obj in flux:
        assert obj["spec"]["suspend"] is True
        validate_custom(obj)
    # Other tenants keep reconciling, and active objects carry no `suspend` at all.
    others = [obj for kind in FLUX_KINDS for obj in objects_of_kind(active, kind)]
    assert others and all("suspend" not in obj["spec"] for obj in others)


def test_platform_managed_apps_scale_to_zero_and_take_the_count_over(runs: list[ProgramRun]) -> None:
    active, suspended, _ = runs
    (worker,) = [d for d in _of(suspended, "acme", "Deployment") if d["metadata"]["namespace"] == ACME_PROD]
    assert worker["spec"]["replicas"] == 0
    assert worker["metadata"]["annotations"] == {"pulumi.com/patchForce": "true", **SKIP_AWAIT}
    validate_builtin(worker, "1.34")
    (running,) = [d for d in _of(active, "acme", "Deployment") if d["metadata"]["namespace"] == ACME_PROD]
    assert "replicas" not in running["spec"] and running["metadata"]["annotations"] == SKIP_AWAIT


def test_a_suspended_namespace_is_marked_admits_no_pods_and_no_platform_traffic(runs: list[ProgramRun]) -> None:
    active, suspended, _ = runs
    for namespace in _of(suspended, "acme", "Namespace"):
        assert namespace["metadata"]["labels"]["tenancy.io/suspended"] == "true"
    for quota in _of(suspended, "acme", "ResourceQuota"):
        assert quota["spec"]["hard"]["pods"] == "0"

    # The stack's platform namespaces as the program resolves them (with the Gateway's proxies).
    settings = parse_settings(stack_config(active.stack)[0], f"Pulumi.{active.stack}.yaml")
    platform = {entry.name for entry in settings.platform_namespaces}
    assert platform
    assert platform <= selected_namespaces(active)
    # The ingress controller and other platform namespaces lose their way in; operators keep theirs.
    assert not platform & selected_namespaces(suspended)
    assert selected_namespaces(suspended) == selected_namespaces(active) - platform


def selected_namespaces(run: ProgramRun) -> set[str]:
    """Namespaces acme's isolation policies admit traffic from."""
    policies = [p for p in _of(run, "acme", "NetworkPolicy") if p["metadata"]["name"] == "tenancy-isolation"]
    peers = [peer for p in policies for rule in p["spec"]["ingress"] for peer in rule["from"]]
    return {
        p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for p in peers if "namespaceSelector" in p
    }


def test_people_drop_to_read_only_while_the_deployer_identity_stays(runs: list[ProgramRun]) -> None:
    active, suspended, _ = runs
    before, after = Authorizer(kubernetes_objects(active)), Authorizer(kubernetes_objects(suspended))
    assert before.allowed(ACME_ADMIN, "create", "deployments", ACME_DEV, group="apps")
    assert not after.allowed(ACME_ADMIN, "create", "deployments", ACME_DEV, group="apps")
    assert not after.allowed(ACME_ADMIN, "delete", "secrets", ACME_DEV)
    assert after.allowed(ACME_ADMIN, "get", "deployments", ACME_DEV, group="apps")
    assert after.allowed(ACME_ADMIN, "list", "pods", ACME_DEV)
    deployer = Subject("ServiceAccount", "deployer", ACME_PROD)
    assert after.allowed(deployer, "create", "deployments", ACME_PROD, group="apps")


@pytest.fixture(scope="module")
def clusters(runs: list[ProgramRun]) -> tuple[Cluster, Cluster]:
    return cluster(runs[0]), cluster(runs[1])


@pytest.mark.parametrize(
    ("resource", "kind", "spec"),
    [
        ("networking.k8s.io/v1/ingresses", "Ingress", {"rules": [{"host": "shop.acme-corp.example"}]}),
        ("gateway.networking.k8s.io/v1/httproutes", "HTTPRoute", {"hostnames": ["shop.acme-corp.example"]}),
    ],
)
def test_no_hostname_is_published_in_a_suspended_namespace(
    clusters: tuple[Cluster, Cluster], resource: str, kind: str, spec: dict[str, Any]
) -> None:
    active, suspended = clusters
    obj: dict[str, Any] = {
        "apiVersion": resource.rpartition("/")[0],
        "kind": kind,
        "metadata": {"name": "web"},
        "spec": spec,
    }
    deployer = Subject("ServiceAccount", "deployer", ACME_PROD)
    platform = platform_identity(active.stack)
    # Active: the deployer publishes its own hostname.
    assert active.attempt(deployer, "CREATE", resource, copy.deepcopy(obj), ACME_PROD).stopped_by is None
    # Suspended: people stop at RBAC (read-only); every identity that passes RBAC stops at admission.
    assert suspended.attempt(ACME_ADMIN, "CREATE", resource, copy.deepcopy(obj), ACME_DEV).stopped_by == "rbac"
    for who in (deployer, platform):
        outcome = suspended.attempt(who, "CREATE", resource, copy.deepcopy(obj), ACME_PROD)
        assert outcome.denied_by("tenancy-suspension", "tenant acme is suspended"), outcome
        changed = suspended.attempt(who, "UPDATE", resource, copy.deepcopy(obj), ACME_PROD, old=copy.deepcopy(obj))
        assert changed.denied_by("tenancy-suspension"), changed
    # What is being deleted may still be updated (finalizers); other tenants are untouched.
    leaving = copy.deepcopy(obj)
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    outcome = suspended.attempt(deployer, "UPDATE", resource, copy.deepcopy(leaving), ACME_PROD, old=copy.deepcopy(obj))
    assert outcome.stopped_by is None, outcome


def test_the_suspension_rule_covers_every_kind_that_publishes_a_hostname(runs: list[ProgramRun]) -> None:
    (policy,) = [
        p
        for p in objects_of_kind(runs[0], "ValidatingAdmissionPolicy")
        if p["metadata"]["name"] == "tenancy-suspension"
    ]
    covered = {
        (group, resource)
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    routes = {"httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "listenersets"}
    assert covered == {("networking.k8s.io", "ingresses")} | {("gateway.networking.k8s.io", r) for r in routes}
    assert all(
        rule["operations"] == ["CREATE", "UPDATE"] for rule in policy["spec"]["matchConstraints"]["resourceRules"]
    )


_RULED = {
    "Service": "services",
    "NetworkPolicy": "networkpolicies",
    "HelmRelease": "helmreleases",
    "Kustomization": "kustomizations",
    "OCIRepository": "ocirepositories",
    "HelmRepository": "helmrepositories",
    "GitRepository": "gitrepositories",
}


def test_the_platform_applies_its_own_suspended_render(
    runs: list[ProgramRun], clusters: tuple[Cluster, Cluster]
) -> None:
    """Every Service, NetworkPolicy and Flux object rendered into a suspended namespace passes the
    suspension rules when the platform identity creates or updates it."""
    _, suspended = clusters
    platform = platform_identity(suspended.stack)
    marked = {
        n["metadata"]["name"]
        for n in objects_of_kind(runs[1], "Namespace")
        if n["metadata"].get("labels", {}).get("tenancy.io/suspended") == "true"
    }
    objects = [
        o for o in kubernetes_objects(runs[1]) if o["kind"] in _RULED and o["metadata"].get("namespace") in marked
    ]
    assert {o["kind"] for o in objects} >= {"NetworkPolicy", "HelmRelease", "Kustomization"}
    for obj in objects:
        group_version = obj["apiVersion"] if "/" in obj["apiVersion"] else "/" + obj["apiVersion"]
        resource, namespace = f"{group_version}/{_RULED[obj['kind']]}", obj["metadata"]["namespace"]
        for operation, old in (("CREATE", None), ("UPDATE", copy.deepcopy(obj))):
            outcome = suspended.attempt(platform, operation, resource, copy.deepcopy(obj), namespace, old=old)
            assert outcome.stopped_by is None, (obj["kind"], obj["metadata"]["name"], outcome)
