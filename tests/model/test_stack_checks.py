"""Issue 13, holes 8-10: reserved names and groups, platform lock-out, Flux lockdown.

Each refusal is checked with its exact `file: field: message` and the legitimate form beside it.
The lock-out is also played through the real platform-owned admission rule (cel-cpp): without a
platform identity an EKS `up` is denied; with the configured group it is admitted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.checks.stack import OPERATOR_IDENTITY
from components.model.core.errors import ConfigurationError
from components.model.settings.stack import StackSettings
from tests.cel_admission import AdmissionChain, Request
from tests.rbac import Authorizer, UserInfo
from tests.support import kubernetes_objects, objects_of_kind, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, run_stack

BASE = {"tenancy:domainSuffix": "tenants.example.com"}
# The edge needs zones, an ACME account and roles on a cloud (tests/edge/); these checks are about others.
EDGE_OFF = '{"gateway": {"enabled": false}, "tls": {"enabled": false}, "externalDns": {"enabled": false}}'
AWS = {"tenancy:cloud": "aws", "tenancy:aws": '{"region": "eu-west-1"}', "tenancy:edge": EDGE_OFF}
GCP = {
    "tenancy:cloud": "gcp",
    "tenancy:gcp": '{"project": "tenancy-test", "region": "europe-west1"}',
    "tenancy:edge": EDGE_OFF,
}
CHART_APP = {"name": "web", "chart": {"repository": "https://charts.example.org", "name": "web", "version": "1.0.0"}}


def settings_problems(config: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({**BASE, **config}, "Pulumi.test.yaml")
    return [str(p) for p in raised.value.problems]


def catalog_problems(tmp_path: Path, settings: StackSettings, *documents: dict[str, Any]) -> list[str]:
    directory = write_tenants(tmp_path / "tenants", *documents)
    with pytest.raises(ConfigurationError) as raised:
        load_catalog(directory, settings, "dev", cloud=cloud_for(settings), root=directory.parent)
    return [str(p) for p in raised.value.problems]


def loads(tmp_path: Path, settings: StackSettings, *documents: dict[str, Any]) -> list[str]:
    directory = write_tenants(tmp_path / "tenants", *documents)
    return load_catalog(directory, settings, "dev", cloud=cloud_for(settings), root=directory.parent).names()


LOCAL = parse_settings(BASE, "Pulumi.test.yaml")


# --- hole 8: reserved tenant names ------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["platform", "system", "kube", "default", "tenancy", "kube-public", "systemd", "tenancy-shared"]
)
def test_reserved_tenant_names_are_refused(tmp_path: Path, name: str) -> None:
    found = catalog_problems(tmp_path, LOCAL, tenant_document(name))
    assert len(found) == 1 and found[0].startswith(f"tenants/{name}.yaml: name: Value error, {name!r} ")
    assert "reserved for the platform or Kubernetes; choose another tenant name" in found[0]


@pytest.mark.parametrize("name", ["acme", "kubeflow-team", "platform-eng", "my-system", "tenants"])
def test_ordinary_tenant_names_are_admitted(tmp_path: Path, name: str) -> None:
    assert loads(tmp_path, LOCAL, tenant_document(name)) == [name]


# --- hole 8: access groups ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "group",
    [
        "system:authenticated",
        "system:unauthenticated",
        "system:serviceaccounts",
        "system:serviceaccounts:tenant-other-prod",
        "system:masters",
        "system:nodes",
        "system:anything",
    ],
)
def test_system_groups_are_refused_with_the_field_path(tmp_path: Path, group: str) -> None:
    found = catalog_problems(tmp_path, LOCAL, tenant_document("acme", access={"viewer": ["acme-support", group]}))
    assert found == [
        f"tenants/acme.yaml: access.viewer.1: Value error, {group!r} is a Kubernetes system group (every identity, "
        "service account or node of the cluster may carry it); bind an identity-provider group instead"
    ]


@pytest.mark.parametrize(
    ("group", "reason"),
    [
        ("", "a group name cannot be empty or blank"),
        ("   ", "a group name cannot be empty or blank"),
        (" acme", "' acme' contains whitespace; identity-provider group names never do"),
        ("acme,other-admins", "'acme,other-admins' contains ',', which would split it into two groups in admission"),
    ],
)
def test_blank_or_splitting_groups_are_refused(tmp_path: Path, group: str, reason: str) -> None:
    found = catalog_problems(tmp_path, LOCAL, tenant_document("acme", access={"admin": [group]}))
    assert found == [f"tenants/acme.yaml: access.admin.0: Value error, {reason}"]


def test_identity_provider_groups_are_admitted(tmp_path: Path) -> None:
    access = {"admin": ["idp:acme-leads"], "operator": ["oidc:system-admins"], "viewer": ["acme-support"]}
    assert loads(tmp_path, LOCAL, tenant_document("acme", access=access)) == ["acme"]


def test_a_platform_identity_group_is_not_a_tenant_group(tmp_path: Path) -> None:
    settings = parse_settings({**BASE, "tenancy:policy": '{"platformIdentities": {"groups": ["ops"]}}'}, "P.yaml")
    found = catalog_problems(tmp_path, settings, tenant_document("acme", access={"operator": ["ops"]}))
    assert found == [
        "tenants/acme.yaml: access.operator.0: 'ops' is a platform identity group "
        "(tenancy:policy.platformIdentities.groups); its members would bypass the platform-owned rule"
    ]


def test_a_tenant_namespace_may_not_be_a_platform_namespace(tmp_path: Path) -> None:
    settings = parse_settings({**BASE, "tenancy:platformNamespaces": '[{"name": "tenant-acme-dev"}]'}, "P.yaml")
    found = catalog_problems(tmp_path, settings, tenant_document("acme"))
    assert found == ["tenants/acme.yaml: name: namespace 'tenant-acme-dev' is a platform namespace of this stack"]


# --- hole 9: platform lock-out ------------------------------------------------------------------


def identity_problems(tmp_path: Path, config: dict[str, str]) -> list[str]:
    """The up-identity problems of a stack: a cross-check the cloud answers, run by the catalog."""
    settings = parse_settings({**BASE, **config}, "Pulumi.test.yaml")
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme"))
    try:
        load_catalog(directory, settings, "dev", cloud=cloud_for(settings), root=directory.parent)
    except ConfigurationError as error:
        return [str(p) for p in error.problems if "platformIdentities" in str(p)]
    return []


@pytest.mark.parametrize(("cloud", "config"), [("aws", AWS), ("gcp", GCP)])
def test_a_managed_cluster_stack_needs_its_platform_identity(
    tmp_path: Path, cloud: str, config: dict[str, str]
) -> None:
    (found,) = identity_problems(tmp_path, config)
    assert found.startswith(
        f"Pulumi.test.yaml: tenancy:policy.platformIdentities: cloud {cloud} needs the identity that runs "
        "`pulumi up` listed here, or the stack's platform-owned admission rule denies its own updates"
    )
    # Listing only the kubeadm groups is no better: neither GKE nor EKS puts anyone in them.
    policy = '{"platformIdentities": {"groups": ["system:masters"]}}'
    assert len(identity_problems(tmp_path, {**config, "tenancy:policy": policy})) == 1


@pytest.mark.parametrize(
    "policy",
    [
        '{"platformIdentities": {"groups": ["tenancy-platform"]}}',
        '{"platformIdentities": {"users": ["arn:aws:iam::111122223333:role/ci"]}}',
        '{"actions": {"platformOwned": "Warn"}}',
        '{"enabled": false}',
    ],
)
def test_aws_stack_with_an_identity_or_no_enforcement_is_accepted(tmp_path: Path, policy: str) -> None:
    assert identity_problems(tmp_path, {**AWS, "tenancy:policy": policy}) == []


def test_a_local_stack_needs_no_extra_identity(tmp_path: Path) -> None:
    assert identity_problems(tmp_path, {}) == []


def test_local_stack_relies_on_the_kubeadm_admin_groups() -> None:
    # kind's admin kubeconfig is in kubeadm:cluster-admins (1.29+) / system:masters, listed by default.
    assert parse_settings(BASE, "Pulumi.test.yaml").policy.platform_identities.groups == [
        "system:masters",
        "kubeadm:cluster-admins",
    ]


@pytest.mark.parametrize(
    ("where", "identity"),
    [
        ("groups", "system:authenticated"),
        ("groups", "system:serviceaccounts"),
        ("groups", "system:serviceaccounts:tenant-acme-dev"),
        ("users", "system:serviceaccount:tenant-acme-dev:deployer"),
        ("users", "system:anonymous"),
    ],
)
def test_platform_identities_may_not_include_tenants(where: str, identity: str) -> None:
    policy = f'{{"platformIdentities": {{"{where}": ["{identity}"]}}}}'
    found = settings_problems({"tenancy:policy": policy})
    assert len(found) == 1 and found[0].startswith(f"Pulumi.test.yaml: tenancy:policy.platformIdentities.{where}.0: ")


def test_an_operator_reconciled_split_stack_needs_the_operator_identity() -> None:
    split = {"tenancy:stackRole": "platform", "tenancy:baseStack": "dev"}
    (found,) = settings_problems(split)
    assert found.startswith(
        f"Pulumi.test.yaml: tenancy:policy.platformIdentities.users: this split stack is reconciled by the Pulumi "
        f"Kubernetes Operator as {OPERATOR_IDENTITY!r}"
    )
    policy = f'{{"platformIdentities": {{"users": ["{OPERATOR_IDENTITY}"]}}}}'
    assert parse_settings({**BASE, **split, "tenancy:policy": policy}, "P.yaml").stack_role == "platform"


@pytest.fixture(scope="module")
def aws_plan(prod_aws_plan: ProgramRun) -> ProgramRun:
    return prod_aws_plan


def _quota_update(run: ProgramRun, username: str, groups: list[str]) -> Request:
    quota = objects_of_kind(run, "ResourceQuota")[0]
    [namespace] = [
        n for n in objects_of_kind(run, "Namespace") if n["metadata"]["name"] == quota["metadata"]["namespace"]
    ]
    return Request(
        "UPDATE", "/v1/resourcequotas", "ResourceQuota", object=quota, old_object=quota,
        namespace_object=namespace, username=username, groups=groups,
    )  # fmt: skip


def test_the_eks_identity_is_admitted_and_the_lockout_is_real(aws_plan: ProgramRun, dev_plan: ProgramRun) -> None:
    # EKS access entry of the CI role: a session username plus the group the stack config names.
    username = "arn:aws:sts::111122223333:assumed-role/tenancy-prod-ci/1700000000"
    eks_groups = ["tenancy-platform", "system:authenticated"]
    aws = AdmissionChain(kubernetes_objects(aws_plan))
    assert aws.admit(_quota_update(aws_plan, username, eks_groups)).allowed
    # Without the access entry's group the same identity is denied by prod-aws's own rule ...
    assert not aws.admit(_quota_update(aws_plan, username, ["system:authenticated"])).allowed
    # ... and by a bundle with only the default (kubeadm) identities, which is what prod-aws would
    # have rendered without tenancy:policy.platformIdentities: the lock-out the refusal prevents.
    dev = AdmissionChain(kubernetes_objects(dev_plan))
    assert not dev.admit(_quota_update(dev_plan, username, ["system:authenticated"])).allowed


# --- hole 10: Flux lockdown ---------------------------------------------------------------------


def test_tenant_flux_objects_without_installed_flux_need_the_acknowledgement(tmp_path: Path) -> None:
    found = catalog_problems(tmp_path, LOCAL, tenant_document("acme", apps=[CHART_APP]))
    assert len(found) == 1
    assert found[0].startswith(
        "Pulumi.test.yaml: tenancy:delivery.fluxLockdownAcknowledged: tenants render Flux HelmReleases or "
        "Kustomizations (tenants/acme.yaml) but this stack does not install Flux"
    )
    assert "--no-cross-namespace-refs=true, --default-service-account=default and --no-remote-bases=true" in found[0]


@pytest.mark.parametrize("delivery", ['{"installFlux": true}', '{"fluxLockdownAcknowledged": true}'])
def test_installed_or_acknowledged_flux_is_accepted(tmp_path: Path, delivery: str) -> None:
    settings = parse_settings({**BASE, "tenancy:delivery": delivery}, "Pulumi.test.yaml")
    assert loads(tmp_path, settings, tenant_document("acme", apps=[CHART_APP])) == ["acme"]


def test_tenants_without_flux_objects_need_no_acknowledgement(tmp_path: Path) -> None:
    image_app = {"name": "web", "image": {"repository": "registry.example.org/web", "tag": "1.0.0"}}
    assert loads(tmp_path, LOCAL, tenant_document("acme", apps=[image_app])) == ["acme"]


def test_without_a_locked_down_flux_tenants_cannot_write_flux_objects(tmp_path: Path) -> None:
    """Tenant roles could write HelmReleases whatever the tenant files render: a stack whose Flux is
    neither installed here nor confirmed locked down gives no role Flux writes at all."""
    image_app = {"name": "web", "image": {"repository": "registry.example.org/web", "tag": "1.0.0"}}
    access = {"admin": ["acme-admins"]}
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", apps=[image_app], access=access))
    open_flux = run_stack("dev", {"tenancy:tenantsDir": str(directory), "tenancy:delivery": '{"installFlux": false}'})
    authz = Authorizer(kubernetes_objects(open_flux))
    admin = UserInfo("alice", ("acme-admins", "system:authenticated"))
    for group, resource in [
        ("helm.toolkit.fluxcd.io", "helmreleases"),
        ("source.toolkit.fluxcd.io", "helmrepositories"),
    ]:
        assert not authz.allowed(admin, "create", resource, "tenant-acme-dev", group=group), resource
        assert authz.allowed(admin, "list", resource, "tenant-acme-dev", group=group), resource
    locked = Authorizer(kubernetes_objects(run_stack("dev", {"tenancy:tenantsDir": str(directory)})))
    assert locked.allowed(admin, "create", "helmreleases", "tenant-acme-dev", group="helm.toolkit.fluxcd.io")
