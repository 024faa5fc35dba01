"""A plan that would delete protected data says so per tenant and exits 3; the previous plan stands
for the last deployment in the virtual-cluster switch-back check."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import EXAMPLE_TENANTS
from tests.tools.test_workflows import load as load_workflow
from tests.vcluster.helpers import previous_outputs
from tools.plan.diff import CLUSTER_SCOPE, EXIT_REFUSED, PlanDiff, diff_records, render_markdown
from tools.plan.diff import main as diff_main
from tools.plan.refusals import refusals
from tools.plan.run import main as plan_main


def _tenants(tmp_path: Path) -> Path:
    directory = tmp_path / "tenants"
    shutil.copytree(EXAMPLE_TENANTS, directory)
    return directory


def _plan(tenants: Path, out: Path, *extra: str) -> int:
    return plan_main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out), *extra])


def _edit(path: Path, **fields: Any) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document.update(fields)
    path.write_text(yaml.safe_dump(document), encoding="utf-8")


def test_removing_a_tenant_file_with_protected_data_exits_3_naming_tenant_and_resources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tenants = _tenants(tmp_path)
    out = tmp_path / "plan"
    assert _plan(tenants, out) == 0
    capsys.readouterr()
    (tenants / "acme.yaml").unlink()

    assert _plan(tenants, out) == EXIT_REFUSED
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines  # one line per tenant, and only acme had data
    # 12: its namespaces, databases and Secrets (no RandomPassword on local: ADR 0040).
    assert lines[0].startswith("refused: tenant acme would delete 12 protected resource(s): ")
    for name in ("acme-dev-db-orders-cluster (Cluster)", "acme-prod-db-legacy-billing-mariadb (MariaDB)"):
        assert name in lines[0]
    assert "set lifecycle: decommissioned first" in lines[0]
    # At the terminal the refusal comes last, on stderr, not at the top of the diff.
    assert "The engine will refuse this change" not in captured.out
    # The refused plan is written beside the previous one, so the diff can be read; the previous plan
    # stays the baseline.
    refused = tmp_path / "plan.refused"
    assert (refused / "resources.json").is_file()
    assert f"refused: this plan is in {refused}" in captured.out
    # tools.plan.diff over the same two plans says the same and exits the same; its Markdown (what the
    # pull request comment shows) leads with the same line.
    assert diff_main([str(out), str(refused)]) == EXIT_REFUSED
    markdown = capsys.readouterr()
    assert markdown.err.splitlines() == lines
    assert "**The engine will refuse this change** (exit code 3):" in markdown.out
    assert f"- {lines[0]}" in markdown.out


def test_a_refused_plan_is_not_a_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = _tenants(tmp_path)
    out = tmp_path / "plan"
    assert _plan(tenants, out) == 0
    before = (out / "resources.json").read_text(encoding="utf-8")
    (tenants / "acme.yaml").unlink()
    assert _plan(tenants, out) == EXIT_REFUSED
    # The previous plan is still the one in --out: planning again refuses again, never "No changes."
    assert (out / "resources.json").read_text(encoding="utf-8") == before
    capsys.readouterr()
    assert _plan(tenants, out) == EXIT_REFUSED
    captured = capsys.readouterr()
    assert captured.err.startswith("refused: tenant acme would delete") and "No changes." not in captured.out
    # Once the input changes to something the engine accepts, the plan is a baseline again.
    shutil.copy(EXAMPLE_TENANTS / "acme.yaml", tenants / "acme.yaml")
    assert _plan(tenants, out) == 0
    assert "No changes." in capsys.readouterr().out


def test_a_tenant_never_deployed_leaves_without_a_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = _tenants(tmp_path)
    out = tmp_path / "plan"
    assert _plan(tenants, out) == 0
    deployed = json.loads((out / "outputs.json").read_text(encoding="utf-8"))
    # A new tenant with data is planned (and becomes the baseline), then its file is removed before any `up`.
    (tenants / "newco.yaml").write_text(
        yaml.safe_dump(
            {**yaml.safe_load((EXAMPLE_TENANTS / "acme.yaml").read_text(encoding="utf-8")), "name": "newco"}
        ),
        encoding="utf-8",
    )
    _edit(tenants / "newco.yaml", domains=[])
    assert _plan(tenants, out) == 0
    (tenants / "newco.yaml").unlink()
    outputs_file = tmp_path / "outputs.json"
    outputs_file.write_text(json.dumps(deployed), encoding="utf-8")
    capsys.readouterr()
    # Without them, the previous plan stands for the deployment, and the removal is refused.
    assert _plan(tenants, out) == EXIT_REFUSED
    assert capsys.readouterr().err.startswith("refused: tenant newco would delete")
    # tools.plan.diff with the stack's last outputs (saved from `pulumi stack output --json`): not refused.
    assert diff_main([str(out), str(tmp_path / "plan.refused"), "--stack-outputs", str(outputs_file)]) == 0
    capsys.readouterr()
    # They do not list it: it was never deployed, so there is nothing to delete.
    assert _plan(tenants, out, "--stack-outputs", str(outputs_file)) == 0
    captured = capsys.readouterr()
    assert "refused" not in captured.err
    assert "never deployed (not in the stack's last outputs): nothing to delete" in captured.out


def test_removing_a_decommissioned_tenants_file_is_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = _tenants(tmp_path)
    _edit(tenants / "acme.yaml", lifecycle="decommissioned", decommissionedOn="2026-01-05")
    out = tmp_path / "plan"
    assert _plan(tenants, out) == 0
    (tenants / "acme.yaml").unlink()

    assert _plan(tenants, out) == 0
    captured = capsys.readouterr()
    assert "refused" not in captured.err and "will refuse" not in captured.out
    # Its retained data leaves the state only, and the diff says so.
    assert "retained: leaves Pulumi's state, stays in the cloud" in captured.out


def test_a_protected_resource_replaced_is_refused_unless_unprotected_in_the_same_change() -> None:
    key: dict[str, Any] = {
        "urn": "urn:key",
        "type": "gcp:kms/cryptoKey:CryptoKey",
        "name": "acme-prod-key",
        "tenant": "acme",
        "protect": True,
        "inputs": {"name": "acme-prod", "keyRing": "ring-a", "rotationPeriod": "7776000s"},
    }
    moved = {**key, "inputs": {**key["inputs"], "keyRing": "ring-b"}}
    rotated = {**key, "inputs": {**key["inputs"], "rotationPeriod": "2592000s"}}

    found = refusals(diff_records([key], [moved]))
    assert [refusal.scope for refusal in found] == ["acme"]
    assert found[0].line(CLUSTER_SCOPE) == (
        "refused: tenant acme would replace 1 protected resource(s): acme-prod-key (CryptoKey) (changes keyRing); "
        "the engine refuses to delete a protected resource"
    )
    # An in-place change is no refusal; nor is unprotecting and replacing in one update
    # (pulumi/pulumi step_generator.go checks `new.Protect && old.Protect`).
    assert refusals(diff_records([key], [rotated])) == []
    assert refusals(diff_records([key], [{**moved, "protect": False}])) == []


def test_a_cluster_wide_protected_deletion_is_its_own_line() -> None:
    ring = {"urn": "urn:ring", "type": "gcp:kms/keyRing:KeyRing", "name": "ring", "tenant": None, "protect": True}
    markdown = render_markdown(PlanDiff(diff_records([ring], []), [], 1, 0))
    assert "- refused: cluster-wide would delete 1 protected resource(s): ring (KeyRing);" in markdown


def _operator_lab_back_to_namespaces(tenants: Path) -> None:
    _edit(tenants / "operator-lab.yaml", isolation="namespace")


def test_switching_back_from_a_virtual_cluster_is_refused_against_the_previous_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tenants = _tenants(tmp_path)
    out = tmp_path / "plan"
    assert _plan(tenants, out) == 0
    assert json.loads((out / "outputs.json").read_text())["tenants"]["operator-lab"]["virtualClusters"]
    _operator_lab_back_to_namespaces(tenants)
    capsys.readouterr()

    # No stack outputs at hand: the earlier plan in --out is the last deployment.
    assert _plan(tenants, out) == 2
    err = capsys.readouterr().err
    assert "operator-lab.yaml: isolation: switching dev back to 'namespace' deletes the virtual cluster" in err
    assert "switching prod back" in err
    # The same with the plan given as --diff base, into a new --out.
    assert _plan(tenants, tmp_path / "other", "--diff", str(out)) == 2
    assert "switching dev back to 'namespace'" in capsys.readouterr().err


def test_real_stack_outputs_come_before_the_previous_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = _tenants(tmp_path)
    out = tmp_path / "plan"
    assert _plan(tenants, out) == 0
    _operator_lab_back_to_namespaces(tenants)
    capsys.readouterr()
    # The engine answers with the stack's real outputs, where no virtual cluster was deployed: the
    # switch-back check passes, and only the protected HelmRelease (the backstop) is refused.
    with previous_outputs("dev", {"tenants": {"operator-lab": {"lifecycle": "active"}}}):
        assert _plan(tenants, out) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert "switching dev back" not in err
    assert err.startswith("refused: tenant operator-lab would delete 2 protected resource(s): ")
    assert "(HelmRelease)" in err


def test_without_a_previous_plan_there_is_nothing_to_switch_back_from(tmp_path: Path) -> None:
    tenants = _tenants(tmp_path)
    _operator_lab_back_to_namespaces(tenants)
    assert _plan(tenants, tmp_path / "plan") == 0


def _plan_step_lines() -> list[str]:
    """The head plan and diff commands of the pull request workflow's plan step."""
    workflow = load_workflow("pull-request.yml")
    script = "\n".join(str(step.get("run", "")) for step in workflow["jobs"]["plan"]["steps"])
    wanted = ('--out "$PLANS/head/', "-m tools.plan.diff")
    return [line.strip() for line in script.splitlines() if any(part in line for part in wanted)]


@pytest.mark.parametrize(("code", "fails", "marked"), [(0, False, False), (3, False, True), (2, True, False)])
def test_the_pull_request_workflow_goes_on_after_a_refusal_and_fails_last(
    tmp_path: Path, code: int, fails: bool, marked: bool
) -> None:
    lines = _plan_step_lines()
    assert len(lines) == 2 and '--diff "$PLANS/base/$stack"' in lines[0]
    stub = tmp_path / "python"
    stub.write_text(f"#!/bin/sh\nexit {code}\n", encoding="utf-8")
    stub.chmod(0o755)
    script = "\n".join([f"python={stub}", "stack=dev", f"PLANS={tmp_path}", *lines, "echo planned"])
    result = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (result.returncode != 0) == fails, result.stderr
    assert (tmp_path / "refused").exists() == marked
    last = load_workflow("pull-request.yml")["jobs"]["plan"]["steps"][-1]
    assert "[ -f refused ]" in last["run"] and "exit 3" in last["run"] and "if" not in last
