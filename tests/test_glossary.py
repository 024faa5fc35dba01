"""The glossary, the virtual-cluster access recipe and the offboarding timeline say what the code does.

Each claim these pages make about names, keys and defaults is read here from the code or the stack
files, so renaming a Secret, a key or a default fails a test instead of leaving a stale page.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.settings.data import DataSettings
from components.vcluster.rbac import access_rules
from components.vcluster.values import CONTROL_PLANE_PORT, KUBECONFIG_KEY, KUBECONFIG_SECRET, RELEASE_NAME, server_url
from tests.support import tenant_document, write_tenants
from tools.plan.harness import PROJECT_ROOT, stack_config

DOCS = PROJECT_ROOT / "docs"


def _text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_the_new_pages_are_in_the_index() -> None:
    index = _text("README.md")
    for page in ("glossary.md", "virtual-clusters.md", "operations.md"):
        assert f"]({page})" in index, page


def test_the_glossary_defines_its_terms() -> None:
    glossary = _text("glossary.md")
    terms = [
        "Stack",
        "Environment",
        "Override",
        "Isolation",
        "Shard",
        "Platform stack",
        "Lifecycle states",
        "Placement",
        "Read-only environment",
        "Retention period",
    ]
    for term in terms:
        assert re.search(rf"^\*\*{re.escape(term)}\.?\*\*", glossary, re.MULTILINE), term


def test_every_stack_of_the_repository_hosts_the_dev_and_the_prod_environment() -> None:
    # The glossary's "dev is both": the dev stack runs tenant-<name>-dev and tenant-<name>-prod.
    stacks = sorted(path.name.split(".")[1] for path in PROJECT_ROOT.glob("Pulumi.*.yaml"))
    assert stacks == ["dev", "prod", "prod-aws"]
    glossary = _text("glossary.md")
    for stack in stacks:
        config = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))["config"]
        assert config["tenancy:environments"] == ["dev", "prod"], stack
        assert f"`{stack}`" in glossary


def test_isolation_is_keyed_by_environment_and_overrides_by_stack(tmp_path: Path) -> None:
    config, _ = stack_config("dev")
    settings = parse_settings(config, "Pulumi.dev.yaml")
    directory = write_tenants(
        tmp_path / "tenants",
        tenant_document("by-env", isolation={"dev": "virtual-cluster"}),
        tenant_document("by-stack", overrides={"dev": {"isolation": "virtual-cluster"}}),
    )
    seen: dict[tuple[str, str, str], str] = {}
    for stack in ("dev", "prod"):
        for entry in load_catalog(directory, settings, stack, cloud=cloud_for(settings)).tenants:
            for environment in ("dev", "prod"):
                seen[(entry.spec.name, stack, environment)] = entry.spec.isolation_in(environment)
    assert seen == {
        # `isolation: {dev: ...}`: the dev environment, in every stack.
        ("by-env", "dev", "dev"): "virtual-cluster",
        ("by-env", "dev", "prod"): "namespace",
        ("by-env", "prod", "dev"): "virtual-cluster",
        ("by-env", "prod", "prod"): "namespace",
        # `overrides: {dev: ...}`: both environments, in the dev stack only.
        ("by-stack", "dev", "dev"): "virtual-cluster",
        ("by-stack", "dev", "prod"): "virtual-cluster",
        ("by-stack", "prod", "dev"): "namespace",
        ("by-stack", "prod", "prod"): "namespace",
    }


def test_the_virtual_cluster_recipe_names_what_the_code_renders() -> None:
    page = _text("virtual-clusters.md")
    recipe = page.split("### Get a kubeconfig for a virtual cluster", 1)[1].split("\n## ", 1)[0]
    assert f"`{KUBECONFIG_SECRET}`" in recipe and f"`{KUBECONFIG_KEY}`" in recipe
    assert f"get secret {KUBECONFIG_SECRET} -o jsonpath='{{.data.{KUBECONFIG_KEY}}}'" in recipe
    assert f"`{server_url('tenant-<name>-<env>')}`" in recipe
    pod = f"{RELEASE_NAME}-0"
    assert f"port-forward pod/{pod} {CONTROL_PLANE_PORT}:{CONTROL_PLANE_PORT}" in recipe
    assert f"--server https://localhost:{CONTROL_PLANE_PORT}" in recipe
    # What the recipe does is exactly what the access role grants: the Secret and the pod, by name.
    granted = {(str(rule["resources"]), str(rule.get("resource_names"))) for rule in access_rules()}
    assert granted == {(str(["secrets"]), str([KUBECONFIG_SECRET])), (str(["pods/portforward"]), str([pod]))}


def test_the_offboarding_timeline_states_the_default_retention() -> None:
    operations = _text("operations.md")
    section = operations.split("## Offboarding a tenant", 1)[1].split("\n## ", 1)[0]
    default = DataSettings().retention_days
    assert f"`tenancy:data.retentionDays`\n(default {default})" in section
    assert "stays, with `lifecycle: decommissioned` and `decommissionedOn`" in section
    # The order: decommission, wait the retention period, list and export, remove the file, delete.
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| when")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| day 0",
        "| day 1 to N-1",
        "| day N or later",
        "| then",
        "| then",
    ]
    assert "delete the tenant file" in rows[3] and "delete commands" in rows[4]
