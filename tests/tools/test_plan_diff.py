"""The plan diff: what reviewers read on a pull request, checked on real plans and small records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import EXAMPLE_TENANTS, tenant_document
from tools.plan import harness
from tools.plan.diff import CLUSTER_SCOPE, PlanDiff, diff_dirs, diff_records, field_changes, main, render_markdown
from tools.plan.harness import run_program, stack_config
from tools.plan.run import main as plan_main
from tools.plan.run import write_plan


def _write_plan(out: Path, stack: str = "dev", tenants_dir: Path | None = None, **config: str) -> Path:
    overrides = {f"tenancy:{key}": value for key, value in config.items()}
    if tenants_dir is not None:
        overrides["tenancy:tenantsDir"] = str(tenants_dir)
    write_plan(run_program(stack, *stack_config(stack, overrides)), out)
    return out


def _copy_tenants(tmp_path: Path) -> Path:
    directory = tmp_path / "tenants"
    shutil.copytree(EXAMPLE_TENANTS, directory)
    return directory


@pytest.fixture(scope="module")
def base_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_plan(tmp_path_factory.mktemp("base") / "plan")


def _record(urn: str, tenant: str | None, **inputs: Any) -> dict[str, Any]:
    return {
        "urn": urn,
        "type": "kubernetes:core/v1:Secret",
        "name": urn.rsplit("::", 1)[-1],
        "tenant": tenant,
        "parent": None,
        "custom": True,
        "protect": False,
        "retainOnDelete": False,
        "deletedWith": None,
        "ignoreChanges": [],
        "inputs": inputs,
    }


def test_identical_plans_have_no_changes(base_plan: Path, tmp_path: Path) -> None:
    head = _write_plan(tmp_path / "head")
    diff = diff_dirs(base_plan, head)
    assert diff.empty()
    assert "No changes." in render_markdown(diff)


def test_new_tenant_is_listed_as_added_under_its_own_heading(base_plan: Path, tmp_path: Path) -> None:
    tenants = _copy_tenants(tmp_path)
    (tenants / "newco.yaml").write_text(yaml.safe_dump(tenant_document("newco")), encoding="utf-8")
    diff = diff_dirs(base_plan, _write_plan(tmp_path / "head", tenants_dir=tenants))

    assert set(diff.scopes) == {"newco"}
    changes = diff.scopes["newco"]
    assert changes.removed == [] and changes.changed == []
    added_types = {record["type"] for record in changes.added}
    assert {"tenancy:index:Tenant", "kubernetes:core/v1:Namespace", "kubernetes:core/v1:ResourceQuota"} <= added_types
    markdown = render_markdown(diff, "Plan diff: dev")
    assert f"**{len(changes.added)} to add, 0 to remove, 0 to change**" in markdown
    assert "### tenant `newco`" in markdown
    assert "(Namespace tenant-newco-dev)" in markdown
    assert "tenant `acme`" not in markdown
    # The new tenant's exports show up too, so reviewers see what the team will be handed.
    assert any(change.path.startswith("tenants.newco.") and change.old is None for change in diff.outputs)


def test_removed_tenant_is_listed_as_removed(base_plan: Path, tmp_path: Path) -> None:
    tenants = _copy_tenants(tmp_path)
    (tenants / "status-page.yaml").unlink()
    diff = diff_dirs(base_plan, _write_plan(tmp_path / "head", tenants_dir=tenants))
    assert set(diff.scopes) == {"status-page"}
    assert diff.scopes["status-page"].added == []
    namespaces = [r for r in diff.scopes["status-page"].removed if r["type"] == "kubernetes:core/v1:Namespace"]
    assert namespaces
    assert f"**removed** `{namespaces[0]['name']}`" in render_markdown(diff)


def test_kubernetes_version_bump_shows_each_changed_label(base_plan: Path, tmp_path: Path) -> None:
    diff = diff_dirs(base_plan, _write_plan(tmp_path / "head", kubernetesVersion="1.37"))
    markdown = render_markdown(diff)
    # Every tenant namespace changes its Pod Security version labels, nothing is added or removed.
    for scope, changes in diff.scopes.items():
        assert changes.added == [] and changes.removed == [], scope
    namespaces = [r for s in diff.scopes.values() for r, _ in s.changed if r["type"] == "kubernetes:core/v1:Namespace"]
    assert namespaces
    assert '`inputs.metadata.labels["pod-security.kubernetes.io/enforce-version"]`: `v1.36` → `v1.37`' in markdown


def test_app_version_bump_shows_the_old_and_new_version(base_plan: Path, tmp_path: Path) -> None:
    """Bumping a pinned app version in one tenant file changes only that tenant's resources."""
    tenants = _copy_tenants(tmp_path)
    acme = yaml.safe_load((tenants / "acme.yaml").read_text(encoding="utf-8"))
    worker = next(app for app in acme["apps"] if app["name"] == "worker")
    old_tag = worker["image"]["tag"]
    base_acme = [r for r in json.loads((base_plan / "resources.json").read_text()) if r["tenant"] == "acme"]
    if old_tag not in json.dumps(base_acme):
        pytest.skip("the plan does not render apps yet (delivery), so an app version cannot show")
    worker["image"]["tag"] = "4.12.1"
    (tenants / "acme.yaml").write_text(yaml.safe_dump(acme), encoding="utf-8")

    diff = diff_dirs(base_plan, _write_plan(tmp_path / "head", tenants_dir=tenants))
    assert set(diff.scopes) == {"acme"}
    fields = [change for _, changes in diff.scopes["acme"].changed for change in changes]
    assert any(old_tag in str(change.old) and "4.12.1" in str(change.new) for change in fields)
    assert "4.12.1" in render_markdown(diff)


def test_changed_fields_are_paths_with_old_and_new_values() -> None:
    old = _record("urn:a", "acme", metadata={"labels": {"tier": "a"}}, rules=[{"verbs": ["get"]}])
    new = _record("urn:a", "acme", metadata={"labels": {"tier": "b"}}, rules=[{"verbs": ["get", "list"]}])
    new["protect"] = True
    changes = {change.path: (change.old, change.new) for change in field_changes(old, new)}
    assert changes == {
        "inputs.metadata.labels.tier": ("a", "b"),
        "inputs.rules[0].verbs": (["get"], ["get", "list"]),
        "protect": (False, True),
    }


def test_secrets_stay_redacted_in_the_markdown() -> None:
    base = [_record("urn:s", "acme", stringData={"password": "[secret]"}, type="Opaque")]
    head = [
        _record("urn:s", "acme", stringData={"password": "[secret]"}, type="kubernetes.io/basic-auth"),
        _record("urn:t", None, stringData="[secret]"),
    ]
    scopes = diff_records(base, head)
    assert set(scopes) == {"acme", CLUSTER_SCOPE}
    # A changed secret value cannot be seen offline: both sides are the placeholder.
    assert [change.path for _, changes in scopes["acme"].changed for change in changes] == ["inputs.type"]
    markdown = render_markdown(PlanDiff(scopes, [], 1, 2))
    assert "### cluster-wide" in markdown
    assert "never shown" in markdown


def test_removing_a_protected_resource_is_called_out() -> None:
    protected = _record("urn:db", "acme")
    protected["protect"] = True
    markdown = render_markdown(PlanDiff(diff_records([protected], []), [], 1, 0))
    assert "**protected: the engine will refuse to delete it**" in markdown


def test_cli_prints_markdown_and_reports_missing_plans(
    base_plan: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(base_plan), str(base_plan), "--title", "Plan diff: dev"]) == 0
    assert capsys.readouterr().out.startswith("## Plan diff: dev\n")
    assert main([str(tmp_path / "missing"), str(base_plan)]) == 2
    assert "resources.json not found" in capsys.readouterr().err


def test_plan_command_diff_option(base_plan: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = _copy_tenants(tmp_path)
    (tenants / "newco.yaml").write_text(yaml.safe_dump(tenant_document("newco")), encoding="utf-8")
    out = tmp_path / "head"
    code = plan_main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out), "--diff", str(base_plan)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Plan diff: stack dev\n" in printed
    assert "\ntenant newco (" in printed
    # A new tenant's quota shows its amounts, CPU in cores (issue 45: `cpu: "500"` is 500 cores).
    assert "  - quota: requests.cpu 1 core, requests.memory 2Gi, limits.cpu 4 cores, limits.memory 4Gi" in printed
    # Each of its Kubernetes objects says which environment's namespace it is in.
    assert "(Namespace tenant-newco-prod) in environment prod" in printed
    # --markdown: the pull request comment's form.
    assert (
        plan_main(
            ["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out), "--diff", str(base_plan), "--markdown"]
        )
        == 0
    )
    assert "### tenant `newco`" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        plan_main(["--stack", "dev", "--diff", str(base_plan)])
    assert "give --out too" in capsys.readouterr().err


def test_changing_a_generated_secret_never_shows_its_value(base_plan: Path, tmp_path: Path) -> None:
    """Regenerating a credential changes resources whose values are secrets; the diff shows the
    settings that changed and `[secret]`, never a generated value."""
    tenants = _copy_tenants(tmp_path)
    acme = yaml.safe_load((tenants / "acme.yaml").read_text(encoding="utf-8"))
    generated = next((s for s in acme.get("secrets", []) if s.get("source") == "generated"), None)
    if generated is None:
        pytest.skip("acme.yaml declares no generated secret")
    generated["length"] = int(generated.get("length", 32)) + 16
    (tenants / "acme.yaml").write_text(yaml.safe_dump(acme), encoding="utf-8")
    head = _write_plan(tmp_path / "head", tenants_dir=tenants)

    diff = diff_dirs(base_plan, head)
    # Local passwords are drawn by the program and written once into their Secret (ADR 0040): a
    # new length changes nothing the engine sees, and the diff shows no value either way.
    fields = [
        change for _, changes in (diff.scopes["acme"].changed if "acme" in diff.scopes else []) for change in changes
    ]
    assert not [change for change in fields if "data" in change.path and change.new not in ("[secret]", None)]
    markdown = render_markdown(diff)
    mock_prefix = getattr(harness, "MOCK_SECRET_PREFIX", "mock-secret-value-")
    assert mock_prefix not in markdown
    assert mock_prefix not in (head / "resources.json").read_text(encoding="utf-8")


PROVIDER = "urn:pulumi:dev::tenancy::pulumi:providers:kubernetes::cluster"
NAMESPACE = "urn:pulumi:dev::tenancy::tenancy:index:Tenant$kubernetes:core/v1:Namespace::acme-dev-namespace"
GRANT = "urn:pulumi:prod::tenancy::gcp:kms/keyRingIAMMember:KeyRingIAMMember::tenancy-sql-agent-keys"


def test_plans_record_each_resources_provider_and_dependencies(base_plan: Path) -> None:
    records = json.loads((base_plan / "resources.json").read_text(encoding="utf-8"))
    urns = {record["urn"] for record in records}
    providers = {record["urn"] for record in records if record["type"].startswith("pulumi:providers:")}
    kubernetes = [r for r in records if r["custom"] and r["type"].startswith("kubernetes:")]
    # Every Kubernetes object names the stack's cluster provider, by URN (no `::id` suffix).
    assert kubernetes and {r["provider"] for r in kubernetes} == {
        urn for urn in providers if urn.endswith("pulumi:providers:kubernetes::cluster")
    }
    # Components and the default-provider packages (random) record null.
    assert all(r["provider"] is None for r in records if not r["custom"] or r["type"].startswith("random:"))
    # Dependencies are URNs of the same plan: dependsOn and the resources feeding inputs.
    assert all(set(r["dependencies"]) <= urns for r in records)
    quota = next(r for r in records if r["name"] == "acme-dev-quota")
    assert quota["dependencies"] == [next(r["urn"] for r in records if r["name"] == "acme-dev-namespace")]


def test_a_changed_dependency_or_provider_is_shown_by_name() -> None:
    old = {**_record("urn:a", "acme"), "provider": PROVIDER, "dependencies": [NAMESPACE]}
    new = {**old, "provider": None, "dependencies": [GRANT]}
    changes = {change.path: (change.old, change.new) for change in field_changes(old, new)}
    assert changes == {"provider": (PROVIDER, None), "dependencies": ([NAMESPACE], [GRANT])}
    markdown = render_markdown(PlanDiff(diff_records([old], [new]), [], 1, 1))
    assert (
        "`dependencies`: now waits for `tenancy-sql-agent-keys` (`gcp:kms/keyRingIAMMember:KeyRingIAMMember`); "
        "no longer waits for `acme-dev-namespace` (`kubernetes:core/v1:Namespace`)"
    ) in markdown
    assert "`provider`: `cluster` (`pulumi:providers:kubernetes`) → _(default provider)_" in markdown


def test_a_plan_from_before_these_fields_shows_no_change_for_them() -> None:
    old = _record("urn:a", "acme")
    new = {**old, "provider": PROVIDER, "dependencies": [NAMESPACE]}
    assert field_changes(old, new) == []


def test_a_quota_tier_change_has_one_summary_line_per_namespace(tmp_path: Path) -> None:
    from tests.support import write_tenants

    tenants = write_tenants(tmp_path / "tenants", tenant_document("shop", quota={"tier": "small"}))
    base = _write_plan(tmp_path / "base", tenants_dir=tenants)
    write_tenants(tenants, tenant_document("shop", quota={"tier": "medium"}))
    head = _write_plan(tmp_path / "head", tenants_dir=tenants)
    markdown = render_markdown(diff_dirs(base, head))
    summaries = [line for line in markdown.splitlines() if line.startswith("- **quota**")]
    assert [line.split("`")[1] for line in summaries] == ["tenant-shop-dev", "tenant-shop-prod"]
    for line in summaries:
        assert ": tier small → medium; " in line and "requests.cpu " in line
    # Before the field-by-field detail of the tenant.
    section = markdown.split("### tenant `shop`")[1].splitlines()
    assert section[2].startswith("- **quota**")


def test_a_limits_change_has_a_summary_line() -> None:
    def limits(maximum: str) -> dict[str, Any]:
        return {
            "urn": "urn:limits",
            "type": "kubernetes:core/v1:LimitRange",
            "name": "shop-dev-limits",
            "tenant": "shop",
            "inputs": {
                "metadata": {"name": "tenancy-limits", "namespace": "tenant-shop-dev"},
                "spec": {"limits": [{"type": "Container", "max": {"cpu": maximum, "memory": "4Gi"}}]},
            },
        }

    markdown = render_markdown(PlanDiff(diff_records([limits("2")], [limits("4")]), [], 1, 1))
    assert "- **limits** `tenant-shop-dev`: max.cpu 2 → 4" in markdown
