"""The preview identity may dry-run what the platform writes, and write nothing (issue 28).

RBAC gives the preview identity `patch` on every kind the program manages
(deploy/identities/kubernetes-preview-clusterrole.yaml), because the Kubernetes provider previews
with a server-side-apply dry run, and RBAC authorizes a dry run like the real request
(https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run-authorization). Admission
sees the difference in `request.dryRun` (AdmissionRequest.dryRun; k8s.io/apiserver v0.34.0
pkg/admission/plugin/cel/compile.go declares it, condition.go sets it from `attr.IsDryRun()`).

Each request is played through RBAC (the committed preview ClusterRole and its bindings, as
tools/operations/bootstrap.py applies them) and the rendered admission chain with the real CEL engine
(tests/cel_admission.py), on dev (kind), prod (GKE: the preview service account is a user) and
prod-aws (EKS: the preview role's access entry carries the group `tenancy-preview`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from components.admission.rules.preview_dry_run import POLICY
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.core.labels import PLATFORM_OWNED_KEY, TENANT_KEY
from components.model.settings.admission import PolicySettings
from tests.admission.layers import ACME_ADMIN, ACME_DEV, Cluster, cluster, platform_identity
from tests.cel_admission import Request
from tests.rbac import UserInfo
from tests.support import kubernetes_objects
from tools.ci.preview_identity import OUT_DIR, kubernetes_resource
from tools.operations.bootstrap import BootstrapError, check_preview_identity, preview_subject
from tools.plan.harness import ProgramRun, stack_config

AUTHENTICATED = "system:authenticated"
PLATFORM_OWNED_POLICIES = ("tenancy-platform-owned", "tenancy-platform-owned-namespaces")
# What components/admission/rules/platform_owned.py matches (a labelled SecurityGroupPolicy is not).
PLATFORM_OWNED_RULE_KINDS = {
    "Namespace",
    "ResourceQuota",
    "LimitRange",
    "NetworkPolicy",
    "RoleBinding",
    "ExternalSecret",
}


def settings_of(stack: str) -> Any:
    config, _ = stack_config(stack)
    return parse_settings(config, f"Pulumi.{stack}.yaml")


def preview(stack: str) -> UserInfo:
    """The preview identity as the stack's cluster sees it (tools/operations/bootstrap.py preview_subject)."""
    subject = preview_subject(stack, settings_of(stack))
    if subject is not None and subject[0] == "User":
        return UserInfo(subject[1], (AUTHENTICATED,))
    group = subject[1] if subject is not None else PolicySettings().preview_identities.groups[0]
    return UserInfo(f"{stack}-preview", (group, AUTHENTICATED))


def preview_rbac(stack: str) -> list[dict[str, Any]]:
    """The committed ClusterRole and group binding, plus the user binding the bootstrap adds on GKE."""
    objects = list(yaml.safe_load_all((OUT_DIR / "kubernetes-preview-clusterrole.yaml").read_text()))
    subject = preview_subject(stack, settings_of(stack))
    if subject is not None and subject[0] == "User":
        binding = copy.deepcopy(objects[1])
        binding["metadata"]["name"] = f"tenancy-preview-{stack}"
        binding["subjects"] = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": subject[1]}]
        objects.append(binding)
    return objects


@pytest.fixture(scope="module")
def clusters(dev_plan: ProgramRun, prod_plan: ProgramRun, prod_aws_plan: ProgramRun) -> dict[str, Cluster]:
    return {run.stack: cluster(run, preview_rbac(run.stack)) for run in (dev_plan, prod_plan, prod_aws_plan)}


STACKS = ["dev", "prod", "prod-aws"]


def resource_of(obj: dict[str, Any]) -> str:
    """`group/version/plural` of a manifest, as the preview identity's role names it."""
    api = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
    group, plural = kubernetes_resource(f"kubernetes:{api}:{obj['kind']}")
    return f"{group}/{api.rsplit('/', 1)[1]}/{plural}"


def tenant_namespaces(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {
        o["metadata"]["name"]: o
        for o in kubernetes_objects(run)
        if o["kind"] == "Namespace" and TENANT_KEY in (o["metadata"].get("labels") or {})
    }


def tenant_objects(run: ProgramRun) -> list[dict[str, Any]]:
    """Everything the program renders in tenant namespaces, and the tenant Namespaces themselves."""
    namespaces = tenant_namespaces(run)
    return [
        o
        for o in kubernetes_objects(run)
        if o["metadata"].get("namespace") in namespaces
        or (o["kind"] == "Namespace" and o["metadata"]["name"] in namespaces)
    ]


def platform_owned(run: ProgramRun) -> list[dict[str, Any]]:
    return [
        o
        for o in tenant_objects(run)
        if o["kind"] == "Namespace" or PLATFORM_OWNED_KEY in (o["metadata"].get("labels") or {})
    ]


def changed(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as a new `pulumi up` would write it: one annotation more."""
    new = copy.deepcopy(obj)
    new["metadata"].setdefault("annotations", {})["tenancy.io/preview-check"] = "1"
    return new


def namespace_of(obj: dict[str, Any]) -> str:
    return "" if obj["kind"] == "Namespace" else str(obj["metadata"]["namespace"])


def apply(c: Cluster, who: UserInfo, obj: dict[str, Any], *, dry_run: bool, create: bool = False) -> Any:
    """A server-side apply of `obj` (RBAC verb `patch`): UPDATE of the stored object, or CREATE."""
    return c.attempt(
        who,
        "CREATE" if create else "UPDATE",
        resource_of(obj),
        changed(obj),
        namespace_of(obj),
        old=None if create else copy.deepcopy(obj),
        verb="patch",
        dry_run=dry_run,
    )


@pytest.mark.parametrize("stack", STACKS)
def test_the_preview_may_dry_run_every_platform_owned_object(stack: str, clusters: dict[str, Cluster]) -> None:
    c = clusters[stack]
    owned = platform_owned(c.run)
    kinds = {o["kind"] for o in owned}
    assert {"Namespace", "ResourceQuota", "NetworkPolicy", "RoleBinding"} <= kinds, kinds
    for obj in owned:
        for create in (False, True):
            outcome = apply(c, preview(stack), obj, dry_run=True, create=create)
            assert outcome.stopped_by is None, (obj["kind"], obj["metadata"]["name"], outcome.decision.denials)


@pytest.mark.parametrize("stack", STACKS)
def test_the_same_patch_for_real_is_refused_twice(stack: str, clusters: dict[str, Cluster]) -> None:
    """By the dry-run-only rule and, as before, by the platform-owned rule: dry runs only are exempt."""
    c = clusters[stack]
    for obj in platform_owned(c.run):
        for create in (False, True):
            outcome = apply(c, preview(stack), obj, dry_run=False, create=create)
            assert outcome.stopped_by == "admission", obj["metadata"]["name"]
            assert outcome.denied_by(
                POLICY, "is a preview identity (tenancy:policy.previewIdentities) and may only dry-run"
            )
            if obj["kind"] in PLATFORM_OWNED_RULE_KINDS:
                assert any(outcome.denied_by(p, "is managed by the tenancy platform") for p in PLATFORM_OWNED_POLICIES)


@pytest.mark.parametrize("stack", STACKS)
def test_a_preview_dry_run_is_judged_like_the_platforms_own_write(stack: str, clusters: dict[str, Cluster]) -> None:
    """Every object the program renders for tenants: the preview's dry run gets the platform's answer."""
    c = clusters[stack]
    platform = platform_identity(stack)
    namespaces = tenant_namespaces(c.run)
    checked = 0
    for obj in tenant_objects(c.run):
        for create in (False, True):
            requests = [
                Request(
                    "CREATE" if create else "UPDATE",
                    resource_of(obj),
                    obj["kind"],
                    object=changed(obj),
                    old_object=None if create else copy.deepcopy(obj),
                    namespace_object=namespaces.get(namespace_of(obj)),
                    username=who.name,
                    groups=list(who.groups),
                    dry_run=dry_run,
                )
                for who, dry_run in ((platform, False), (preview(stack), True))
            ]
            as_platform, as_preview = (c.chain.admit(r) for r in requests)
            assert as_preview.denials == as_platform.denials, (obj["kind"], obj["metadata"]["name"])
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("stack", STACKS)
def test_a_dry_run_is_no_exemption_for_anyone_else(stack: str, clusters: dict[str, Cluster]) -> None:
    """A tenant admin's dry run of a platform-owned object is refused exactly like the real request."""
    c = clusters[stack]
    admin = UserInfo("alice@acme.example", (ACME_ADMIN.name, AUTHENTICATED))
    namespaces = tenant_namespaces(c.run)
    for obj in (o for o in platform_owned(c.run) if o["kind"] in PLATFORM_OWNED_RULE_KINDS):
        decisions = [
            c.chain.admit(
                Request(
                    "UPDATE",
                    resource_of(obj),
                    obj["kind"],
                    object=changed(obj),
                    old_object=copy.deepcopy(obj),
                    namespace_object=namespaces.get(namespace_of(obj)),
                    username=admin.name,
                    groups=list(admin.groups),
                    dry_run=dry_run,
                )
            )
            for dry_run in (False, True)
        ]
        assert decisions[0].denials == decisions[1].denials
        assert any(
            d.startswith(f"{p}: ") and "is managed by the tenancy platform" in d
            for p in PLATFORM_OWNED_POLICIES
            for d in decisions[1].denials
        ), obj["metadata"]["name"]


def test_a_tenant_admins_dry_run_through_rbac_is_refused(clusters: dict[str, Cluster]) -> None:
    c = clusters["dev"]
    [quota] = [o for o in platform_owned(c.run) if o["kind"] == "ResourceQuota" and namespace_of(o) == ACME_DEV]
    admin = UserInfo("alice@acme.example", (ACME_ADMIN.name, AUTHENTICATED))
    outcome = apply(c, admin, quota, dry_run=True)
    assert outcome.stopped_by in ("rbac", "admission")
    if outcome.stopped_by == "admission":
        assert outcome.denied_by("tenancy-platform-owned", "is managed by the tenancy platform")


def cluster_role(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    }


@pytest.mark.parametrize("stack", STACKS)
def test_real_patches_outside_tenant_namespaces_are_refused_too(stack: str, clusters: dict[str, Cluster]) -> None:
    """Cluster-wide: a ClusterRole (cluster-scoped), a platform Deployment, anything the role can patch."""
    c = clusters[stack]
    tenant_role = next(
        o
        for o in kubernetes_objects(c.run)
        if o["kind"] == "ClusterRole" and o["metadata"]["name"].startswith("tenancy-tenant-")
    )
    escalated = {**copy.deepcopy(tenant_role), "rules": cluster_role("x")["rules"]}
    real = c.attempt(
        preview(stack),
        "UPDATE",
        "rbac.authorization.k8s.io/v1/clusterroles",
        escalated,
        "",
        old=tenant_role,
        verb="patch",
    )
    assert real.denied_by(POLICY, "may only dry-run: update of ClusterRole " + tenant_role["metadata"]["name"])
    dry = c.attempt(
        preview(stack),
        "UPDATE",
        "rbac.authorization.k8s.io/v1/clusterroles",
        copy.deepcopy(escalated),
        "",
        old=tenant_role,
        verb="patch",
        dry_run=True,
    )
    assert dry.stopped_by is None, dry.decision.denials
    # Everything else the program renders: cluster-scoped objects and the platform's own namespaces.
    who = preview(stack)
    tenants = tenant_namespaces(c.run)
    checked = 0
    for obj in kubernetes_objects(c.run):
        namespace = obj["metadata"].get("namespace") or ""
        if namespace in tenants or (obj["kind"] == "Namespace" and obj["metadata"]["name"] in tenants):
            continue
        group, _, plural = resource_of(obj).split("/")
        if not c.authz.allowed(who, "patch", plural, namespace, group=group):
            continue  # admission objects (read only) and kinds only dev renders
        platform_namespace = (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}} if namespace else None
        )
        for dry_run in (False, True):
            decision = c.chain.admit(
                Request(
                    "UPDATE",
                    resource_of(obj),
                    obj["kind"],
                    object=changed(obj),
                    old_object=copy.deepcopy(obj),
                    namespace_object=platform_namespace,
                    username=who.name,
                    groups=list(who.groups),
                    dry_run=dry_run,
                )
            )
            assert decision.allowed == dry_run, (obj["kind"], obj["metadata"]["name"], decision.denials)
            assert dry_run or any(d.startswith(f"{POLICY}: ") for d in decision.denials)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("operation", ["DELETE", "CONNECT"])
def test_deletes_and_connects_are_refused_even_without_rbac(operation: str, clusters: dict[str, Cluster]) -> None:
    """The role grants neither; admission refuses them anyway, should a stray grant appear."""
    c = clusters["prod-aws"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "kube-system"}}
    who = preview("prod-aws")
    request = Request(
        operation,
        "/v1/pods",
        "Pod",
        object=None,
        old_object=pod,
        subresource="exec" if operation == "CONNECT" else "",
        username=who.name,
        groups=list(who.groups),
    )
    decision = c.chain.admit(request)
    assert any(d.startswith(f"{POLICY}: ") for d in decision.denials), decision.denials


def test_the_policy_matches_everything_the_preview_asks_and_nothing_else(prod_plan: ProgramRun) -> None:
    [policy] = [
        o
        for o in kubernetes_objects(prod_plan)
        if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == POLICY
    ]
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"] == {
        "resourceRules": [
            {
                "apiGroups": ["*"],
                "apiVersions": ["*"],
                "operations": ["CREATE", "UPDATE", "DELETE", "CONNECT"],
                "resources": ["*/*"],
            }
        ]
    }
    [condition] = spec["matchConditions"]
    assert "tenancy-prod-preview@tenancy-prod.iam.gserviceaccount.com" in condition["expression"]
    assert "'tenancy-preview'" in condition["expression"]


def test_every_rule_the_platform_passes_lets_a_preview_dry_run_pass(any_stack_plan: ProgramRun) -> None:
    """A policy naming the platform identities (so exempting them) must carry the preview's dry-run door."""
    settings = settings_of(any_stack_plan.stack).policy
    names = [*settings.platform_identities.users, *settings.platform_identities.groups]
    exempting = 0
    for policy in (o for o in kubernetes_objects(any_stack_plan) if o["kind"] == "ValidatingAdmissionPolicy"):
        if policy["metadata"]["name"] == POLICY:
            continue
        if any(f"'{n}'" in json.dumps(policy["spec"]) for n in names):
            exempting += 1
            conditions = {c["name"]: c["expression"] for c in policy["spec"].get("matchConditions", [])}
            assert "request.dryRun == true" in conditions.get("not-a-preview-dry-run", ""), policy["metadata"]["name"]
    assert exempting >= 6


def test_preview_and_platform_identities_may_not_overlap() -> None:
    with pytest.raises(ValueError, match="previewIdentities and platformIdentities both name tenancy-preview"):
        PolicySettings.model_validate({"platformIdentities": {"groups": ["tenancy-preview"]}})
    config, _ = stack_config("prod-aws")
    policy = json.loads(config["tenancy:policy"])
    config = {**config, "tenancy:policy": json.dumps({**policy, "previewIdentities": {"groups": ["tenancy-platform"]}})}
    with pytest.raises(ConfigurationError, match=r"Pulumi\.prod-aws\.yaml.*previewIdentities and platformIdentities"):
        parse_settings(config, "Pulumi.prod-aws.yaml")


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_the_bootstrap_binds_the_identity_the_stack_holds_to_dry_runs(stack: str) -> None:
    settings = settings_of(stack)
    check_preview_identity(stack, settings)
    kind, name = preview_subject(stack, settings) or ("", "")
    field = "users" if kind == "User" else "groups"
    emptied = settings.model_copy(
        update={
            "policy": settings.policy.model_copy(
                update={"preview_identities": type(settings.policy.preview_identities)(**{field: []})}
            )
        }
    )
    with pytest.raises(
        BootstrapError, match=rf"Pulumi.{stack}.yaml: tenancy:policy.previewIdentities.{field}: list '{name}'"
    ):
        check_preview_identity(stack, emptied)
