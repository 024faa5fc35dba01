"""Inputs whose meaning would change silently are refused, naming file and field and the way out:
a CPU quota in cores where millicores were meant, an environment order other than the stack's,
tenant files in subfolders, a stack file without `tenancy:cloud`; YAML merge keys are read as YAML
means them (issue 45)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.model.test_catalog import SETTINGS, load, problems_for
from tests.support import tenant_document, write_tenants
from tools.plan.harness import PROJECT_ROOT, stack_config


def _custom(cpu: str, limit: str) -> dict[str, object]:
    return {"custom": {"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": limit, "memory": "2Gi"}}}


def test_a_cpu_quota_above_the_largest_tier_is_refused_in_cores_with_the_millicore_hint(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", quota=_custom("500", "600")))
    assert (
        "tenants/acme.yaml: quota.custom.requests.cpu: '500' is 500 CPU cores, more than this stack's largest "
        "quota tier gives (large: 32 CPU cores); for millicores write '500m' (0.5 CPU cores); a tenant that needs "
        "more gets a tier of its own in tenancy:quotaTiers (Pulumi.test.yaml)"
    ) in found
    assert any(p.startswith("tenants/acme.yaml: quota.custom.limits.cpu: '600' is 600 CPU cores") for p in found)


def test_a_cpu_quota_within_the_largest_tier_is_accepted(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", quota=_custom("500m", "32")))
    assert load(directory) == ["acme"]


def test_an_environment_order_other_than_the_stacks_is_refused_naming_the_serving_environment(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", environments=["prod", "dev"]))
    assert found == [
        "tenants/acme.yaml: environments: [prod, dev] is not in the order of this stack's tenancy:environments "
        "(dev, prod): the last one listed serves the tenant's own name and domains, so environment dev would "
        "serve them instead of environment prod; write [dev, prod]"
    ]


def test_a_tenant_file_in_a_subfolder_is_refused_saying_where_tenant_files_go(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme"))
    (directory / "finance").mkdir()
    (directory / "finance" / "ledger.yaml").write_text(yaml.safe_dump(tenant_document("ledger")), encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        load(directory)
    assert [str(p) for p in raised.value.problems] == [
        "tenants/finance/ledger.yaml: (file): tenant files in subfolders are not read; tenant files go directly "
        "in tenants/, one <name>.yaml each: move it to tenants/ledger.yaml"
    ]


def test_yaml_merge_keys_are_read_as_yaml_means_them(tmp_path: Path) -> None:
    text = (
        "name: acme\ndisplayName: ACME\ncontact: a@example.org\ncostCenter: c\n"
        "databases:\n  - &orders {name: orders, engine: postgres, version: '16', size: small}\n"
        "  - <<: *orders\n    name: invoices\n"
    )
    directory = write_tenants(tmp_path / "tenants", raw={"acme.yaml": text})
    catalog = load_catalog(directory, SETTINGS, "dev", cloud=cloud_for(SETTINGS))
    databases = catalog.tenants[0].spec.databases
    assert [(d.name, d.engine, d.version) for d in databases] == [
        ("orders", "postgres", "16"),
        ("invoices", "postgres", "16"),
    ]
    # A key written twice is still refused, merge keys or not.
    found = problems_for(tmp_path / "dup", raw={"dup.yaml": "name: dup\n<<: {a: 1}\nname: other\n"})
    assert "duplicate key 'name'" in found[0]


def test_a_stack_file_without_tenancy_cloud_names_the_missing_key_first() -> None:
    config = yaml.safe_load((PROJECT_ROOT / "Pulumi.prod.yaml").read_text(encoding="utf-8"))["config"]
    del config["tenancy:cloud"]
    settings = parse_settings(config, "Pulumi.prod.yaml")
    with pytest.raises(ConfigurationError) as raised:
        load_catalog(PROJECT_ROOT / "tenants", settings, "prod", cloud=cloud_for(settings), root=PROJECT_ROOT)
    problems = [str(p) for p in raised.value.problems]
    assert problems[0] == (
        "Pulumi.prod.yaml: tenancy:cloud: not set, so the stack is read as cloud 'local' (a kind cluster); its "
        "other keys are for gcp: set tenancy:cloud to local, gcp or aws (the problems after this one may follow "
        "from it)"
    )
    assert len(problems) > 1  # the follow-on problems are still listed, after it


def test_a_stack_file_reads_yaml_merge_keys(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.x.yaml").write_text(
        "config:\n"
        "  tenancy:domainSuffix: tenants.example.com\n"
        "  tenancy:nodePools:\n"
        "    shared: &pool {kind: existing, costCode: shared}\n"
        "    research:\n      <<: *pool\n      costCode: research\n",
        encoding="utf-8",
    )
    config, _ = stack_config("x", root=tmp_path)
    pools = parse_settings(config, "Pulumi.x.yaml").node_pools
    assert {name: (pool.kind, pool.cost_code) for name, pool in pools.items()} == {
        "shared": ("existing", "shared"),
        "research": ("existing", "research"),
    }
