"""One runner per split stack, and the operator's CLI pinned like CI's (ADR 0032).

The Pulumi Kubernetes Operator and CI's deploy workflow share no lock: both running `up` on one
shard race on its state. `tenancy:shards.runner` in the base stack file says which one owns the
split; `tools.scale.shards write` writes the operator's Stack objects only for `operator`, and
`tools.ci.stacks` leaves operator-owned stacks out of CI's deployment waves.

The operator's workspace image defaults to `pulumi/pulumi:latest-nonroot` (its Workspace
defaulter, `SecurityProfileRestrictedDefaultImage`, pulumi/pulumi-kubernetes-operator v2): a CLI
that moves with every release. The Stacks name the image of the exact CLI version CI installs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.specifiers import SpecifierSet

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.pins import pins
from tools.ci.stacks import waves
from tools.plan.harness import PROJECT_ROOT
from tools.scale.operator_stack import pulumi_version, workspace_image
from tools.scale.shards import generated_files, main, stale_operator_manifest

REPO = "https://git.example.org/platform/tenancy.git"


def _base(root: Path, runner: str | None) -> None:
    document: dict[str, Any] = yaml.safe_load((PROJECT_ROOT / "Pulumi.prod.yaml").read_text())
    if runner is not None:
        document["config"]["tenancy:shards"] = {"runner": runner}
    (root / "Pulumi.prod.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")


def _write(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_workspace_image_is_the_cli_version_ci_pins(tmp_path: Path) -> None:
    version = pins(PROJECT_ROOT / "requirements.txt")["pulumi"]
    assert pulumi_version() == version
    assert workspace_image() == f"pulumi/pulumi:{version}-nonroot"
    # CI's default CLI (pulumi/actions `pulumi-version`) is the same version.
    workflow = (PROJECT_ROOT / ".github" / "workflows" / "pulumi-stack.yml").read_text()
    assert re.findall(r"pulumi-version: \$\{\{ vars.PULUMI_VERSION \|\| '([0-9.]+)' \}\}", workflow) == [version]
    # And the project's requiredPulumiVersion admits it.
    required = yaml.safe_load((PROJECT_ROOT / "Pulumi.yaml").read_text())["requiredPulumiVersion"]
    assert version in SpecifierSet(",".join(required.split()))
    _base(tmp_path, "operator")
    files = generated_files("prod", 2, "acme", REPO, root=tmp_path)
    stacks = [d for d in yaml.safe_load_all(files[tmp_path / "deploy/operator/prod.yaml"]) if d["kind"] == "Stack"]
    assert len(stacks) == 3
    for stack in stacks:
        workspace = stack["spec"]["workspaceTemplate"]["spec"]
        assert workspace["image"] == f"pulumi/pulumi:{version}-nonroot"
        assert workspace["securityProfile"] == "restricted"


def test_ci_owns_a_split_stack_by_default_and_the_operator_gets_no_stacks(tmp_path: Path) -> None:
    _base(tmp_path, None)
    files = generated_files("prod", 2, "acme", REPO, root=tmp_path)
    assert tmp_path / "deploy/operator/prod.yaml" not in files
    _write(files)
    assert json.loads((tmp_path / "deploy/shards/prod.json").read_text())["runner"] == "ci"
    result = waves(["prod"], tmp_path)
    assert [e["stack"] for e in result["first"]] == ["prod-platform"]
    assert [e["stack"] for e in result["shards"]] == ["prod-shard-0", "prod-shard-1"]


def test_an_operator_owned_split_stack_is_never_deployed_by_ci(tmp_path: Path) -> None:
    _base(tmp_path, "operator")
    files = generated_files("prod", 2, "acme", REPO, root=tmp_path)
    _write(files)
    assert json.loads((tmp_path / "deploy/shards/prod.json").read_text())["runner"] == "operator"
    result = waves(["dev", "prod"], tmp_path)
    assert result["first"] == [{"stack": "dev", "environment": "dev"}]
    assert result["shards"] == []
    # Previews and drift checks (read-only) still cover it.
    assert [e["stack"] for e in result["all"]] == ["dev", "prod-platform", "prod-shard-0", "prod-shard-1"]


def test_switching_back_to_ci_removes_the_operator_stacks(tmp_path: Path) -> None:
    _base(tmp_path, "operator")
    _write(generated_files("prod", 1, "acme", REPO, root=tmp_path))
    _base(tmp_path, "ci")
    assert stale_operator_manifest("prod", tmp_path) == tmp_path / "deploy/operator/prod.yaml"
    args = ["write", "--stack", "prod", "--count", "1", "--org", "acme", "--repo", REPO, "--root", str(tmp_path)]
    assert main([*args, "--check"]) == 1
    assert main(args) == 0
    assert not (tmp_path / "deploy/operator/prod.yaml").exists()
    assert main([*args, "--check"]) == 0


def test_a_runner_is_ci_or_operator(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings(
            {"tenancy:domainSuffix": "t.example.com", "tenancy:shards": '{"runner": "both"}'}, "Pulumi.x.yaml"
        )
    assert "tenancy:shards.runner" in str(raised.value)
    layout = tmp_path / "deploy/shards/prod.json"
    layout.parent.mkdir(parents=True)
    layout.write_text(json.dumps({"platform": "prod-platform", "shards": [], "runner": "both"}))
    with pytest.raises(ValueError, match="runner: expected 'ci' or 'operator'"):
        waves(["prod"], tmp_path)
