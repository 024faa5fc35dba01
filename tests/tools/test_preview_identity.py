"""The preview identity (pull request previews, daily drift checks) can refresh everything the
program manages, and no more: checked against the plans of every committed cloud stack.

Why `roles/viewer` was not enough: refreshing a Secret Manager secret version reads its payload
(`secretmanager.versions.access`, not in the basic Viewer role:
https://cloud.google.com/secret-manager/docs/access-control), the AWS provider's read of a
Secrets Manager version calls GetSecretValue, and the Kubernetes provider previews with a
server-side-apply dry run, which RBAC authorizes as `patch`
(https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run-authorization).
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest
import yaml

from tests.k8s_schema import crd_documents, require_crds
from tools.ci import preview_identity
from tools.ci.preview_identity import (
    AWS_SECRET_PREFIX,
    GCP_SECRET_PREFIX,
    OUT_DIR,
    READS,
    cloud_of,
    kubernetes_resource,
)
from tools.plan.harness import RecordedResource, run_stack

CLOUD_STACKS = {"prod": "gcp", "prod-aws": "aws"}


@pytest.fixture(scope="module")
def plans() -> dict[str, list[RecordedResource]]:
    return {stack: run_stack(stack).resources for stack in CLOUD_STACKS}


def _committed() -> tuple[set[str], set[str], dict[str, Any], list[dict[str, Any]]]:
    role = yaml.safe_load((OUT_DIR / "gcp-preview-role.yaml").read_text())
    secrets = yaml.safe_load((OUT_DIR / "gcp-preview-secrets-role.yaml").read_text())
    policy = json.loads((OUT_DIR / "aws-preview-policy.json").read_text())
    cluster = list(yaml.safe_load_all((OUT_DIR / "kubernetes-preview-clusterrole.yaml").read_text()))
    return set(role["includedPermissions"]), set(secrets["includedPermissions"]), policy, cluster


def test_every_cloud_type_the_plans_register_has_its_reads(plans: dict[str, list[RecordedResource]]) -> None:
    missing = sorted(
        {r.type for resources in plans.values() for r in resources if r.custom and cloud_of(r.type) in ("gcp", "aws")}
        - set(READS)
    )
    assert not missing, f"add what each provider's read needs to tools/ci/preview_identity.py READS: {missing}"


def test_committed_identity_files_are_current() -> None:
    assert preview_identity.main(["--check"]) == 0, "run tenancy preview-identity --write"


def test_gcp_preview_roles_grant_every_read_of_the_plan(plans: dict[str, list[RecordedResource]]) -> None:
    role, secrets, _, _ = _committed()
    needed = {perm for r in plans["prod"] if r.type in READS for perm in READS[r.type]}
    assert needed <= role | secrets, sorted(needed - role - secrets)
    # Secret payloads: a role of their own, bound on the program's secrets only.
    assert secrets == {"secretmanager.versions.access"}
    assert "secretmanager.versions.access" not in role
    assert "container.clusters.get" in role  # get-credentials for the cluster
    # The program's own secrets; the platform team's shared secrets are only read (`Secret.get`, no
    # inputs, no payload access) under their own names.
    secret_ids = [
        r.inputs["secretId"] for r in plans["prod"] if r.type == "gcp:secretmanager/secret:Secret" and not r.read
    ]
    assert secret_ids and all(name.startswith(GCP_SECRET_PREFIX) for name in secret_ids)
    condition = preview_identity.gcp_secret_condition("123456789012")
    assert condition == 'resource.name.startsWith("projects/123456789012/secrets/tenancy_")'


def test_aws_preview_policy_grants_every_read_and_secret_values_only_of_the_program(
    plans: dict[str, list[RecordedResource]],
) -> None:
    _, _, policy, _ = _committed()
    statements = policy["Statement"]
    allowed = {(action, stmt["Resource"]) for stmt in statements for action in stmt["Action"]}
    needed = {perm for r in plans["prod-aws"] if r.type in READS for perm in READS[r.type]}
    assert needed <= {action for action, _ in allowed}, sorted(needed - {a for a, _ in allowed})
    assert ("secretsmanager:GetSecretValue", f"arn:aws:secretsmanager:*:*:secret:{AWS_SECRET_PREFIX}*") in allowed
    assert all(resource != "*" for action, resource in allowed if action == "secretsmanager:GetSecretValue")
    assert all(stmt["Effect"] == "Allow" and not any(a.endswith("*") for a in stmt["Action"]) for stmt in statements)
    names = [r.inputs["name"] for r in plans["prod-aws"] if r.type == "aws:secretsmanager/secret:Secret"]
    arn_pattern = f"{AWS_SECRET_PREFIX}*"
    assert names and all(fnmatch.fnmatch(name, arn_pattern) for name in names)


def test_kubernetes_preview_role_may_get_and_dry_run_patch_every_kind(
    plans: dict[str, list[RecordedResource]],
) -> None:
    _, _, _, (cluster_role, binding, *_) = _committed()
    granted = {
        (group, resource, verb)
        for rule in cluster_role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    kinds = {r.type for resources in plans.values() for r in resources if cloud_of(r.type) == "kubernetes" and r.custom}
    kinds.discard("pulumi:providers:kubernetes")
    # A Helm release is no API object: its state is Secrets in its namespace (test below).
    kinds.discard(preview_identity.HELM_RELEASE)
    for token in kinds:
        group, plural = kubernetes_resource(token)
        for verb in ("get", "list", "watch", "patch"):
            if verb == "patch" and group == "admissionregistration.k8s.io":
                continue  # no admission policy sees these writes: read only (next test)
            assert (group, plural, verb) in granted, (token, verb)
    assert not {verb for _, _, verb in granted} - {"get", "list", "watch", "patch"}
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": preview_identity.PREVIEW_GROUP}
    ]


def test_the_preview_role_cannot_patch_what_admission_cannot_guard() -> None:
    """ValidatingAdmissionPolicies never see writes of admission policies and bindings (k8s.io/apiserver
    v0.34.0 pkg/admission/plugin/policy/generic/plugin.go `admissionResources`), so
    `tenancy-preview-dry-run` could not refuse a real patch of the bundle: the role only reads them."""
    _, _, _, (cluster_role, _, *_) = _committed()
    admission = [rule for rule in cluster_role["rules"] if "admissionregistration.k8s.io" in rule["apiGroups"]]
    assert admission, "the program manages admission policies: the role must read them"
    assert all(rule["verbs"] == ["get", "list", "watch"] for rule in admission)
    assert all("*" not in rule["apiGroups"] and "*" not in rule["verbs"] for rule in cluster_role["rules"])


def test_the_bound_group_is_the_settings_default_preview_group() -> None:
    """The ClusterRoleBinding's group is what `tenancy:policy.previewIdentities.groups` holds to dry runs."""
    from components.model.settings.admission import PolicySettings

    _, _, _, (_, binding, *_) = _committed()
    [subject] = binding["subjects"]
    assert subject["kind"] == "Group"
    assert PolicySettings().preview_identities.groups == [subject["name"]]


def test_plural_names_match_the_upstream_crds(plans: dict[str, list[RecordedResource]]) -> None:
    require_crds()
    plurals = {}
    for crd in crd_documents():
        plurals[(crd["spec"]["group"], crd["spec"]["names"]["kind"])] = crd["spec"]["names"]["plural"]
    checked = 0
    for token in {r.type for resources in plans.values() for r in resources if cloud_of(r.type) == "kubernetes"}:
        if token.startswith("pulumi:"):
            continue
        group, plural = kubernetes_resource(token)
        kind = token.rsplit(":", 1)[1]
        if (group, kind) in plurals:
            assert plurals[(group, kind)] == plural, token
            checked += 1
    assert checked >= 5


def test_helm_release_state_is_readable_in_each_release_namespace_only(
    plans: dict[str, list[RecordedResource]],
) -> None:
    # Helm keeps a release's state in Secrets of its namespace (helm.sh/helm/v3 pkg/storage/driver/
    # secrets.go); a preview diffs a release against it. The preview group reads Secrets there only.
    *_, cluster = _committed()
    cluster_role = cluster[0]
    assert not any("secrets" in rule["resources"] and "" in rule["apiGroups"] for rule in cluster_role["rules"])
    roles = {d["metadata"]["namespace"]: d for d in cluster if d["kind"] == "Role"}
    bound = {
        d["metadata"]["namespace"]
        for d in cluster
        if d["kind"] == "RoleBinding"
        and d["subjects"]
        == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": preview_identity.PREVIEW_GROUP}]
        and d["roleRef"]["name"] == roles.get(d["metadata"]["namespace"], {}).get("metadata", {}).get("name")
    }
    releases = [r for resources in plans.values() for r in resources if r.type == preview_identity.HELM_RELEASE]
    assert releases, "the cloud plans install charts (the edge)"
    for release in releases:
        namespace = release.inputs["namespace"]
        assert namespace in bound, (release.name, namespace)
        assert roles[namespace]["rules"] == [
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}
        ]
