"""Tenant files: each validation rule has a failing input whose message is checked, and a bad
catalog registers nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog, merge_override
from components.model.catalog.stack_config import parse_settings
from components.model.checks.domain_claims import domains_overlap
from components.model.core.errors import ConfigurationError
from components.model.settings.stack import StackSettings
from tests.support import EXAMPLE_TENANTS, tenant_document, write_tenants
from tools.plan.harness import new_monitor, run_program, stack_config

SETTINGS = parse_settings(
    {
        "tenancy:domainSuffix": "tenants.example.com",
        "tenancy:nodePools": '{"shared": {"kind": "existing", "costCode": "shared"}}',
    },
    "Pulumi.test.yaml",
)


def load(directory: Path, settings: StackSettings = SETTINGS, stack: str = "dev") -> list[str]:
    """The tenant names loaded, or raise."""
    return load_catalog(directory, settings, stack, cloud=cloud_for(settings), root=directory.parent).names()


def problems_for(tmp_path: Path, *documents: dict[str, Any], raw: dict[str, str] | None = None) -> list[str]:
    directory = write_tenants(tmp_path / "tenants", *documents, raw=raw)
    with pytest.raises(ConfigurationError) as raised:
        load(directory)
    return [str(p) for p in raised.value.problems]


def test_example_tenants_load_for_each_stack() -> None:
    for stack, expected in {
        "dev": ["acme", "genomics-lab", "operator-lab", "status-page"],
        "prod": ["acme", "genomics-lab", "northwind", "operator-lab", "status-page"],
    }.items():
        config, _ = stack_config(stack)
        settings = parse_settings(config, f"Pulumi.{stack}.yaml")
        catalog = load_catalog(EXAMPLE_TENANTS, settings, stack, cloud=cloud_for(settings))
        assert catalog.names() == expected


def test_minimal_tenant_gets_defaults(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme"))
    catalog = load_catalog(directory, SETTINGS, "dev", cloud=cloud_for(SETTINGS))
    spec = catalog.tenants[0].spec
    assert spec.environments == ["dev", "prod"]
    assert spec.lifecycle == "active"
    assert catalog.tenants[0].source.endswith("acme.yaml")


def test_malformed_yaml(tmp_path: Path) -> None:
    found = problems_for(tmp_path, raw={"broken.yaml": "name: broken\naccess: [admin\n"})
    assert len(found) == 1
    assert found[0].startswith("tenants/broken.yaml: line 3, column 1: malformed YAML")


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    found = problems_for(tmp_path, raw={"dup.yaml": "name: dup\nname: other\n"})
    assert found[0].startswith("tenants/dup.yaml: line 2, column 1: malformed YAML: duplicate key 'name'")


def test_file_must_be_a_mapping(tmp_path: Path) -> None:
    assert problems_for(tmp_path, raw={"list.yaml": "- a\n- b\n"}) == [
        "tenants/list.yaml: (file): a tenant file must be a YAML mapping"
    ]


def test_unknown_field(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", nodepool="shared"))
    (problem,) = found
    assert problem.startswith("tenants/acme.yaml: nodepool: unknown field 'nodepool'; did you mean 'nodePool'? (")


def test_nested_unknown_field(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", access={"admins": ["x"]}))
    (problem,) = found
    assert problem.startswith("tenants/acme.yaml: access.admins: unknown field 'admins'; did you mean 'admin'? (")


def test_quantity_that_is_not_a_quantity(tmp_path: Path) -> None:
    document = tenant_document("acme", quota={"custom": {"requests": {"cpu": "four"}}})
    found = problems_for(tmp_path, document)
    assert found == [
        "tenants/acme.yaml: quota.custom.requests.cpu: Value error, 'four' is not a Kubernetes quantity "
        "(for example 500m, 2, 512Mi, 4Gi)"
    ]


def test_requests_above_limits(tmp_path: Path) -> None:
    document = tenant_document("acme", quota={"custom": {"requests": {"cpu": "4"}, "limits": {"cpu": "2"}}})
    found = problems_for(tmp_path, document)
    assert found == ["tenants/acme.yaml: quota.custom: Value error, requests.cpu (4) is above limits.cpu (2)"]


def test_quota_needs_exactly_one_of_tier_or_custom(tmp_path: Path) -> None:
    document = tenant_document("acme", quota={"tier": "small", "custom": {"objects": {"pods": 3}}})
    found = problems_for(tmp_path, document)
    assert found == [
        "tenants/acme.yaml: quota: Value error, set exactly one of tier (a name from quotaTiers) "
        "or custom (explicit amounts)"
    ]


def test_unknown_quota_tier(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", quota={"tier": "huge"}))
    assert found == [
        "tenants/acme.yaml: quota.tier: 'huge' is not a quota tier of this stack (defined: large, medium, small)"
    ]


def test_name_not_a_dns_label(tmp_path: Path) -> None:
    found = problems_for(tmp_path, raw={"Acme.yaml": "name: Acme\ndisplayName: A\ncontact: a@b.org\ncostCenter: x\n"})
    assert "tenants/Acme.yaml: name: Value error, 'Acme' is not a DNS label" in found[0]


def test_name_too_long_for_namespaces(tmp_path: Path) -> None:
    name = "a" * 50  # tenant-<50>-prod = 62 fits, tenant-<50>-staging = 65 does not
    found = problems_for(tmp_path, tenant_document(name, environments=["dev", "staging"]))
    assert any(
        p.startswith(
            f"tenants/{name}.yaml: name: '{name}' is too long: namespace 'tenant-{name}-staging' "
            "would exceed 63 characters (at most 48 for these environments)"
        )
        for p in found
    ), found


def test_file_name_must_match_tenant_name(tmp_path: Path) -> None:
    found = problems_for(tmp_path, raw={"acme.yaml": "name: beta\ndisplayName: B\ncontact: a@b.org\ncostCenter: x\n"})
    assert found == ["tenants/acme.yaml: name: 'beta' must match the file name 'acme'"]


def test_duplicate_tenant_name(tmp_path: Path) -> None:
    text = "name: acme\ndisplayName: A\ncontact: a@b.org\ncostCenter: x\n"
    found = problems_for(tmp_path, raw={"acme.yaml": text, "acme.yml": text})
    assert "tenants/acme.yml: name: tenant 'acme' is already defined in tenants/acme.yaml" in found


def test_unknown_node_pool(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", nodePool="gpu"))
    assert found == ["tenants/acme.yaml: nodePool: 'gpu' is not a node pool of this stack (defined: shared)"]


def test_environment_the_stack_does_not_host(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", environments=["dev", "qa"]))
    assert found == ["tenants/acme.yaml: environments: qa not hosted by this stack (environments: dev, prod)"]


def test_two_tenants_claiming_the_same_domain(tmp_path: Path) -> None:
    found = problems_for(
        tmp_path,
        tenant_document("acme", domains=["shop.acme.example"]),
        tenant_document("beta", domains=["shop.acme.example"]),
    )
    assert found == [
        "tenants/beta.yaml: domains: 'shop.acme.example' overlaps 'shop.acme.example' of tenant 'acme' "
        "(tenants/acme.yaml)"
    ]


def test_wildcard_claim_overlapping_another_tenant(tmp_path: Path) -> None:
    found = problems_for(
        tmp_path,
        tenant_document("acme", domains=["shop.acme.example"]),
        tenant_document("beta", domains=["*.acme.example"]),
    )
    assert found == [
        "tenants/beta.yaml: domains: '*.acme.example' overlaps 'shop.acme.example' of tenant 'acme' (tenants/acme.yaml)"
    ]


def test_claiming_another_tenants_default_domain(tmp_path: Path) -> None:
    found = problems_for(
        tmp_path, tenant_document("acme"), tenant_document("beta", domains=["api.acme.tenants.example.com"])
    )
    assert (
        "tenants/beta.yaml: domains.0: 'api.acme.tenants.example.com' is under the platform suffix "
        "'tenants.example.com' but outside the tenant's own 'beta.tenants.example.com'" in found
    )
    assert any("overlaps '*.acme.tenants.example.com' of tenant 'acme'" in p for p in found)


def test_suffix_trick_names_do_not_overlap() -> None:
    assert not domains_overlap("evilacme.tenants.example.com", "acme.tenants.example.com")
    assert not domains_overlap("evilacme.tenants.example.com", "*.acme.tenants.example.com")
    assert domains_overlap("a.acme.tenants.example.com", "*.acme.tenants.example.com")
    assert domains_overlap("*.b.acme.example", "*.acme.example")


def test_bad_domain_format(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", domains=["Shop.Acme.Example"]))
    assert "tenants/acme.yaml: domains.0: Value error, 'Shop.Acme.Example' is not a lowercase DNS name" in found[0]


def test_section_naming_an_environment_the_tenant_lacks(tmp_path: Path) -> None:
    document = tenant_document(
        "acme", environments=["prod"], secrets=[{"name": "k", "source": "generated", "environments": ["dev"]}]
    )
    assert problems_for(tmp_path, document) == [
        "tenants/acme.yaml: secrets.0.environments: environments the tenant does not have: dev"
    ]


def test_overrides_apply_to_their_stack_only(tmp_path: Path) -> None:
    document = tenant_document("acme", displayName="ACME", overrides={"dev": {"displayName": "ACME (dev)"}})
    directory = write_tenants(tmp_path / "tenants", document)
    assert (
        load_catalog(directory, SETTINGS, "dev", cloud=cloud_for(SETTINGS)).tenants[0].spec.display_name == "ACME (dev)"
    )
    assert load_catalog(directory, SETTINGS, "prod", cloud=cloud_for(SETTINGS)).tenants[0].spec.display_name == "ACME"


def test_override_errors_show_in_every_stack(tmp_path: Path) -> None:
    document = tenant_document("acme", overrides={"dev": {"quota": {"custom": {"limits": {"memory": "lots"}}}}})
    directory = write_tenants(tmp_path / "tenants", document)
    with pytest.raises(ConfigurationError) as raised:
        load(directory, stack="prod")
    assert [str(p) for p in raised.value.problems] == [
        "tenants/acme.yaml: overrides.dev -> quota.custom.limits.memory: Value error, 'lots' is not a Kubernetes "
        "quantity (for example 500m, 2, 512Mi, 4Gi)"
    ]


def test_identity_fields_cannot_be_overridden(tmp_path: Path) -> None:
    found = problems_for(tmp_path, tenant_document("acme", overrides={"prod": {"name": "other"}}))
    assert found == ["tenants/acme.yaml: overrides.prod.name: cannot be overridden per stack"]


def test_named_lists_merge_by_name() -> None:
    base: dict[str, Any] = {
        "apps": [{"name": "web", "chart": {"version": "1.0.0", "name": "w"}}, {"name": "api", "x": 1}]
    }
    merged = merge_override(base, {"apps": [{"name": "web", "chart": {"version": "1.1.0"}}]})
    assert merged == {"apps": [{"name": "web", "chart": {"version": "1.1.0", "name": "w"}}, {"name": "api", "x": 1}]}
    assert base["apps"][0]["chart"]["version"] == "1.0.0"  # the base document is not modified


def test_tenant_limited_to_other_stacks_is_absent(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", stacks=["prod"]), tenant_document("beta"))
    assert load(directory, stack="dev") == ["beta"]
    assert load(directory, stack="prod") == ["acme", "beta"]


def test_every_problem_of_every_file_is_reported_at_once(tmp_path: Path) -> None:
    found = problems_for(
        tmp_path,
        tenant_document("acme", nodePool="gpu", quota={"custom": {"requests": {"cpu": "four"}}}),
        tenant_document("beta", unknownField=1),
        raw={"gamma.yaml": "name: [\n"},
    )
    files = {p.split(":")[0] for p in found}
    assert files == {"tenants/acme.yaml", "tenants/beta.yaml", "tenants/gamma.yaml"}


def test_a_bad_catalog_registers_nothing(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme"), tenant_document("beta", nodePool="gpu"))
    config, secret_keys = stack_config("dev", {"tenancy:tenantsDir": str(directory)})
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program("dev", config, secret_keys, monitor=monitor)
    assert "nodePool: 'gpu' is not a node pool of this stack" in str(raised.value)
    assert monitor.recorded == []


def test_bad_stack_config_registers_nothing() -> None:
    config, secret_keys = stack_config("dev", {"tenancy:cloud": "azure"})
    monitor = new_monitor()
    with pytest.raises(ConfigurationError):
        run_program("dev", config, secret_keys, monitor=monitor)
    assert monitor.recorded == []
