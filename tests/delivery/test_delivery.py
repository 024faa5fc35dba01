"""App components and GitOps as the real program renders them: pinned versions, the per-stack
override, one-field version bumps, impersonation wiring, pod placement, the optional cluster Flux,
and every bad input refused before anything is registered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from components.vcluster.values import INSTALLER_ACCOUNT, RELEASE_NAME
from tests.k8s_schema import validate_builtin, validate_custom
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, new_monitor, run_program, stack_config

FLUX_KINDS = ("HelmRelease", "OCIRepository", "HelmRepository", "GitRepository", "Kustomization")


def _chart_app(version: str = "1.4.2", repository: str = "https://charts.example.org", **extra: Any) -> dict[str, Any]:
    return {"name": "web", "chart": {"repository": repository, "name": "web", "version": version}, **extra}


def _one(run: ProgramRun, kind: str, namespace: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objects_of_kind(run, kind, namespace) if o["metadata"]["name"] == name]
    return found


def test_acme_web_is_the_release_candidate_in_dev_and_pinned_in_prod(
    dev_plan: ProgramRun, prod_plan: ProgramRun
) -> None:
    for run, version in ((dev_plan, "4.13.0-rc.1"), (prod_plan, "4.12.0")):
        for env in ("dev", "prod"):
            source = _one(run, "OCIRepository", f"tenant-acme-{env}", "web")
            assert source["spec"]["ref"] == {"tag": version}
            assert source["spec"]["url"] == "oci://registry.acme-corp.example/charts/acme-web"
            release = _one(run, "HelmRelease", f"tenant-acme-{env}", "web")
            assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": "web"}
            assert run.outputs["tenants"]["acme"]["apps"][env]["web"]["version"] == version
        # The worker is not overridden: the same pinned tag in both stacks.
        worker = _one(run, "Deployment", "tenant-acme-prod", "worker")
        assert worker["spec"]["template"]["spec"]["containers"][0]["image"] == (
            "docker.io/nginxinc/nginx-unprivileged:1.29.4-alpine3.23"
        )


def test_example_plans_show_components_and_gitops(dev_plan: ProgramRun) -> None:
    tenants = dev_plan.outputs["tenants"]
    assert sorted(tenants["acme"]["apps"]["dev"]) == ["web", "worker"]
    assert tenants["status-page"]["apps"]["prod"]["status"]["type"] == "image"
    assert tenants["genomics-lab"]["gitops"]["prod"] == {
        "url": "https://git.university.example/genomics/platform-config.git",
        "revision": "tag v2.3.0",
        "path": "./clusters/prod",
    }
    assert tenants["genomics-lab"]["gitops"]["dev"]["revision"] == "branch main"
    kustomization = _one(dev_plan, "Kustomization", "tenant-genomics-lab-prod", "tenant-gitops")
    assert kustomization["spec"]["path"] == "./clusters/prod"
    source = _one(dev_plan, "GitRepository", "tenant-genomics-lab-prod", "tenant-gitops")
    assert source["spec"]["secretRef"] == {"name": "git-credentials"}
    assert source["spec"]["ref"] == {"tag": "v2.3.0"}
    dev_source = _one(dev_plan, "GitRepository", "tenant-genomics-lab-dev", "tenant-gitops")
    assert dev_source["spec"]["ref"] == {"branch": "main"}


def test_flux_objects_validate_against_the_upstream_crds(example_plan: ProgramRun) -> None:
    rendered = [o for kind in FLUX_KINDS for o in objects_of_kind(example_plan, kind)]
    assert {o["kind"] for o in rendered} >= {"HelmRelease", "OCIRepository", "GitRepository", "Kustomization"}
    for obj in rendered:
        validate_custom(obj)
        if obj["kind"] == "HelmRelease":
            # The CRD's CEL rule (not evaluated by jsonschema): exactly one of chart or chartRef.
            assert ("chart" in obj["spec"]) != ("chartRef" in obj["spec"])


def test_flux_reconciles_as_the_tenants_deployer_inside_its_namespace(example_plan: ProgramRun) -> None:
    """Every Flux object runs as the deployer, but a virtual cluster's own release, which runs as the
    platform's installer (issue 43: the tenant may not write the control plane it installs)."""
    installers: set[str] = set()
    for kind in ("HelmRelease", "Kustomization"):
        for obj in objects_of_kind(example_plan, kind):
            namespace = obj["metadata"]["namespace"]
            if kind == "HelmRelease" and obj["spec"]["serviceAccountName"] == INSTALLER_ACCOUNT:
                assert obj["metadata"]["name"] == RELEASE_NAME and obj["spec"]["chart"]["spec"]["chart"] == "vcluster"
                installers.add(namespace)
            else:
                assert obj["spec"]["serviceAccountName"] == "deployer", namespace
            if kind == "Kustomization":
                # Into its own namespace, or into the virtual cluster in it (docs/virtual-clusters.md).
                target = obj["spec"].get("targetNamespace") or obj["spec"]["kubeConfig"]["secretRef"]["name"]
                assert target in (namespace, "vcluster-kubeconfig")
                assert obj["spec"]["prune"] is True
            # No cross-namespace references: every source is in the object's own namespace.
            reference = obj["spec"].get("sourceRef") or obj["spec"].get("chartRef") or obj["spec"]["chart"]["spec"]
            reference = reference.get("sourceRef", reference)
            assert "namespace" not in reference
            source_names = {o["metadata"]["name"] for o in objects_of_kind(example_plan, reference["kind"], namespace)}
            assert reference["name"] in source_names
    # The deployer that is impersonated exists in every namespace that has Flux objects.
    deployers = {
        o["metadata"]["namespace"]
        for o in objects_of_kind(example_plan, "ServiceAccount")
        if o["metadata"]["name"] == "deployer"
    }
    flux_namespaces = {o["metadata"]["namespace"] for kind in FLUX_KINDS for o in objects_of_kind(example_plan, kind)}
    assert flux_namespaces and flux_namespaces <= deployers
    # So does the installer, where a virtual cluster's release names it.
    installer_accounts = {
        o["metadata"]["namespace"]
        for o in objects_of_kind(example_plan, "ServiceAccount")
        if o["metadata"]["name"] == INSTALLER_ACCOUNT
    }
    assert installers and installers <= installer_accounts


def test_image_apps_pass_restricted_and_land_on_the_tenants_pool(dev_plan: ProgramRun) -> None:
    for resource in dev_plan.of_type("kubernetes:apps/v1:Deployment"):
        if not resource.inputs["metadata"]["namespace"].startswith("tenant-"):
            continue
        # Autoscalers own the count: Pulumi declares none (server-side apply leaves it to them)
        # and ignores none, so a suspension's 0 is not carried into the resumed app.
        assert resource.ignore_changes == []
        assert "replicas" not in resource.inputs["spec"]
    worker = _one(dev_plan, "Deployment", "tenant-acme-dev", "worker")
    validate_builtin(worker, "1.36")
    pod = worker["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    (container,) = pod["containers"]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert pod["nodeSelector"] == {"tenancy.io/pool": "customers"}
    assert pod["tolerations"] == [
        {"key": "tenancy.io/pool", "operator": "Equal", "value": "customers", "effect": "NoSchedule"}
    ]
    assert pod["automountServiceAccountToken"] is False


def test_status_page_gets_a_service_for_its_port(prod_plan: ProgramRun) -> None:
    service = _one(prod_plan, "Service", "tenant-status-page-prod", "status")
    assert service["spec"]["ports"] == [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}]
    deployment = _one(prod_plan, "Deployment", "tenant-status-page-prod", "status")
    # A public image that runs under Pod Security restricted, pinned to an exact tag.
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "docker.io/nginxinc/nginx-unprivileged:1.29.4-alpine3.23"


def test_a_digest_pin_is_what_the_node_pulls() -> None:
    from components.delivery.images import image_reference
    from components.model.tenant_file.apps import ImageSource

    digest = "sha256:" + "4f" * 32
    assert image_reference(ImageSource(repository="ghcr.io/example/app", digest=digest)) == (
        f"ghcr.io/example/app@{digest}"
    )
    pinned_both = ImageSource(repository="ghcr.io/example/app", tag="1.2.3", digest=digest)
    assert image_reference(pinned_both) == f"ghcr.io/example/app:1.2.3@{digest}"


def test_charts_are_patched_onto_the_pool_and_keep_autoscaled_replicas(dev_plan: ProgramRun) -> None:
    release = _one(dev_plan, "HelmRelease", "tenant-acme-dev", "web")
    assert release["spec"]["driftDetection"] == {"mode": "enabled", "ignore": [{"paths": ["/spec/replicas"]}]}
    patches = release["spec"]["postRenderers"][0]["kustomize"]["patches"]
    assert [p["target"]["kind"] for p in patches] == ["Deployment", "StatefulSet", "Job", "CronJob"]
    assert all("tenancy.io/pool: customers" in p["patch"] for p in patches)
    # `acme-{environment}.{suffix}` in the file, resolved for the dev stack's dev environment.
    assert release["spec"]["values"] == {
        "httpRoute": {
            "hostname": "acme-dev.tenants.dev.example.com",
            "parentRef": {"name": "platform", "namespace": "tenancy-gateway"},
        }
    }


def _inputs_by_urn(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {r.urn: r.inputs for r in run.resources}


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for key in sorted(set(a) | set(b)) for d in _diff(a.get(key), b.get(key), f"{path}.{key}")]
    return [] if a == b else [path]


@pytest.mark.parametrize(
    ("repository", "field"),
    [
        ("https://charts.example.org", ".spec.chart.spec.version"),
        ("oci://registry.example.org/charts", ".spec.ref.tag"),
    ],
)
def test_a_version_bump_changes_exactly_one_field_of_one_object(tmp_path: Path, repository: str, field: str) -> None:
    def run(version: str) -> ProgramRun:
        tenant = tenant_document("shop", apps=[_chart_app(version, repository)])
        return plan("dev", write_tenants(tmp_path / version, tenant))

    before, after = _inputs_by_urn(run("1.4.2")), _inputs_by_urn(run("1.5.0"))
    assert before.keys() == after.keys()
    changed = {urn: _diff(before[urn], after[urn]) for urn in before if before[urn] != after[urn]}
    # Exactly one object per environment (dev and prod namespaces), one field each.
    assert len(changed) == 2
    assert all(paths == [field] for paths in changed.values()), changed


def test_apps_follow_their_environments_and_share_a_repository(tmp_path: Path) -> None:
    apps = [
        _chart_app(environments=["dev"]),
        {"name": "api", "chart": {"repository": "https://charts.example.org", "name": "api", "version": "2.0.0"}},
    ]
    run = plan("dev", write_tenants(tmp_path, tenant_document("shop", apps=apps)))
    assert sorted(run.outputs["tenants"]["shop"]["apps"]["dev"]) == ["api", "web"]
    assert sorted(run.outputs["tenants"]["shop"]["apps"]["prod"]) == ["api"]
    # One HelmRepository per repository and namespace, not one per app.
    assert len(objects_of_kind(run, "HelmRepository", "tenant-shop-dev")) == 1


def test_the_platform_can_install_a_locked_down_flux(tmp_path: Path) -> None:
    tenant = tenant_document("shop", apps=[_chart_app()])
    run = plan("dev", write_tenants(tmp_path, tenant), delivery='{"installFlux": true}')
    # The dev stack also installs its database operators (tests/platform/test_installs.py).
    (release,) = [r for r in run.of_type("kubernetes:helm.sh/v3:Release") if r.name == "flux-release"]
    values = release.inputs["values"]
    assert values["multitenancy"] == {"enabled": True, "defaultServiceAccount": "default", "privileged": False}
    assert values["kustomizeController"]["container"]["additionalArgs"] == ["--no-remote-bases=true"]
    assert release.inputs["version"] and release.inputs["chart"] == "flux2"
    flux_objects = [r for r in run.resources if r.type.startswith("kubernetes:helm.toolkit.fluxcd.io")]
    assert flux_objects and all(release.urn in r.dependencies for r in flux_objects)
    acknowledged = '{"installFlux": false, "fluxLockdownAcknowledged": true}'
    releases = plan("dev", write_tenants(tmp_path, tenant), delivery=acknowledged).of_type(
        "kubernetes:helm.sh/v3:Release"
    )
    assert [r for r in releases if r.name == "flux-release"] == []


def _refused(tmp_path: Path, **fields: Any) -> list[str]:
    directory = write_tenants(tmp_path / "tenants", tenant_document("shop", **fields))
    monitor = new_monitor()
    config, secrets = stack_config("dev", {"tenancy:tenantsDir": str(directory)})
    with pytest.raises(ConfigurationError) as raised:
        run_program("dev", config, secrets, monitor=monitor)
    assert monitor.recorded == []
    return [f"{p.field}: {p.message}" for p in raised.value.problems]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"apps": [_chart_app(), _chart_app("2.0.0")]}, "apps: Value error, names must be unique; repeated: web"),
        ({"apps": [_chart_app("^1.4")]}, "apps.0.chart.version: Value error, '^1.4' is not a pinned version"),
        ({"apps": [_chart_app(">=1.0.0")]}, "apps.0.chart.version: Value error, '>=1.0.0' is not a pinned version"),
        (
            {"apps": [{"name": "web", "chart": {"repository": "https://charts.example.org", "name": "web"}}]},
            "apps.0.chart.version: Field required",
        ),
        (
            {"gitops": {"url": "https://git.example.org/shop.git", "path": "./deploy/../../other"}},
            "gitops.path: Value error, path './deploy/../../other' must stay inside the repository",
        ),
        (
            {"gitops": {"url": "https://git.example.org/shop.git", "path": "./{tenant}/x"}},
            "gitops.path: Value error, path './{tenant}/x': the only placeholder is {environment}",
        ),
        (
            {"apps": [_chart_app(environments=["staging"])]},
            "apps.0.environments: environments the tenant does not have: staging",
        ),
        (
            {"gitops": {"url": "https://git.example.org/shop.git", "environments": ["qa"]}},
            "gitops.environments: environments the tenant does not have: qa",
        ),
        (
            {"apps": [{"name": "w", "image": {"repository": "ghcr.io/x/w", "tag": "1.0.0"}, "secrets": ["nope"]}]},
            "apps.0.secrets.0: 'nope' is not one of the tenant's secrets or sharedSecrets",
        ),
        (
            {"apps": [{"name": "w", "image": {"repository": "ghcr.io/x/w", "tag": "latest"}}]},
            "apps.0.image: Value error, tag 'latest' names a branch or channel that moves",
        ),
        (
            {"apps": [_chart_app(env={"A": "b"})]},
            "apps.0: Value error, env, secrets and resources apply to image apps",
        ),
    ],
)
def test_bad_delivery_input_is_refused_and_registers_nothing(
    tmp_path: Path, fields: dict[str, Any], expected: str
) -> None:
    problems = _refused(tmp_path, **fields)
    assert any(p.startswith(expected) for p in problems), problems
