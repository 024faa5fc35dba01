"""The offline plan command, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support import tenant_document, write_tenants
from tools.plan.harness import PROJECT_ROOT
from tools.plan.run import main


def test_plan_writes_manifests_and_resources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan"
    assert main(["--stack", "dev", "--out", str(out), "--counts"]) == 0
    printed = capsys.readouterr().out
    assert "by type:" in printed and "kubernetes:core/v1:Namespace" in printed and "per tenant" in printed
    # A first plan has no changed tenants to list one by one.
    assert "acme (changed)" not in printed
    namespace = yaml.safe_load((out / "manifests" / "acme" / "namespace-tenant-acme-dev.yaml").read_text())
    assert namespace["kind"] == "Namespace" and namespace["metadata"]["name"] == "tenant-acme-dev"
    records = json.loads((out / "resources.json").read_text())
    tenant = next(r for r in records if r["type"] == "tenancy:index:Tenant" and r["name"] == "acme")
    assert tenant["tenant"] == "acme"
    assert {"urn", "type", "name", "parent", "inputs", "protect", "retainOnDelete", "deletedWith"} <= set(tenant)
    outputs = json.loads((out / "outputs.json").read_text())
    assert outputs["tenants"]["acme"]["namespaces"]["dev"] == "tenant-acme-dev"


def test_plan_replaces_an_older_plan(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    (out / "manifests" / "stale").mkdir(parents=True)
    (out / "resources.json").write_text("[]\n")
    assert main(["--stack", "dev", "--out", str(out)]) == 0
    assert not (out / "manifests" / "stale").exists()
    # The earlier plan is kept beside it, for the diff since the last plan (tests/tools/test_plan_dirs.py).
    assert (tmp_path / "plan.previous" / "manifests" / "stale").is_dir()


def test_invalid_input_exits_2_lists_every_problem_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_tenants(
        tmp_path / "tenants",
        tenant_document("acme", nodePool="gpu"),
        tenant_document("beta", quota={"custom": {"limits": {"cpu": "four"}}}),
    )
    out = tmp_path / "plan"
    code = main(["--stack", "dev", "--tenants-dir", str(directory), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2
    assert "2 problems in the tenancy configuration" in captured.err
    assert "acme.yaml: nodePool: 'gpu' is not a node pool of this stack" in captured.err
    assert "beta.yaml: quota.custom.limits.cpu" in captured.err
    assert captured.out == ""
    assert not out.exists()


def test_set_overrides_a_config_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme"))
    out = tmp_path / "plan"
    assert (
        main(
            [
                "--stack",
                "dev",
                "--tenants-dir",
                str(directory),
                "--set",
                "tenancy:environments=[dev]",
                "--set",
                "tenancy:readOnlyEnvironments=[]",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    # acme asks for dev and prod by default; with only dev hosted that is an error naming the field
    assert "environments: prod not hosted by this stack" in capsys.readouterr().err


def test_bad_set_value_is_a_config_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--stack", "dev", "--set", "tenancy:kubernetesVersion=1.20"]) == 2
    # The stack file is fine: the problem is charged to the override that caused it.
    assert "--set tenancy:kubernetesVersion: tenancy:kubernetesVersion" in capsys.readouterr().err


def test_unknown_stack(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--stack", "nope"]) == 2
    assert "no settings file for stack 'nope'" in capsys.readouterr().err


def test_the_summary_stays_the_same_length_as_tenants_grow() -> None:
    from tests.tools.test_plan_linear import _synthetic_run
    from tools.plan.run import MAX_TENANTS_SHOWN, summary

    small, large = summary(_synthetic_run(50)), summary(_synthetic_run(400))
    assert len(small.splitlines()) == len(large.splitlines())
    # Counts per tenant only for the changed ones, and past MAX_TENANTS_SHOWN their names only.
    text = summary(_synthetic_run(400), changed=["t7", "_cluster"])
    assert "t7 (changed): 6 resources" in text and "t8 (changed)" not in text and "_cluster (changed)" not in text
    many = summary(_synthetic_run(400), changed=[f"t{i}" for i in range(100)])
    assert many.count("(changed)") == MAX_TENANTS_SHOWN and "and 80 more changed tenants: " in many


def test_a_second_plan_lists_only_the_changed_tenant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tenants = write_tenants(tmp_path / "tenants", tenant_document("alpha"), tenant_document("beta"))
    out = tmp_path / "plan"
    assert main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out)]) == 0
    write_tenants(tenants, tenant_document("beta", quota={"tier": "medium"}))
    capsys.readouterr()
    assert main(["--stack", "dev", "--tenants-dir", str(tenants), "--out", str(out), "--counts"]) == 0
    printed = capsys.readouterr().out
    assert "beta (changed):" in printed and "alpha (changed)" not in printed


def test_without_counts_the_plan_is_one_line_and_where_it_went(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan"
    assert main(["--stack", "dev", "--out", str(out)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert lines[0].startswith("stack dev: ") and " resources: " in lines[0]
    assert lines[1].startswith("wrote ") and lines[1].endswith(f" files to {out}")
    assert len(lines) == 2


def test_relative_paths_from_a_project_subfolder_are_refused_naming_the_root(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(PROJECT_ROOT / "tenants")
    assert main(["--stack", "dev", "--out", "build/plan/dev"]) == 2
    assert capsys.readouterr().err == (
        f"tenancy plan: run it from the project root {PROJECT_ROOT} (this is tenants/): --out build/plan/dev "
        f"would land in tenants/, a second plan tree with no earlier plan to diff against; cd {PROJECT_ROOT}, "
        "or give absolute paths\n"
    )
    assert not (PROJECT_ROOT / "tenants" / "build").exists()
