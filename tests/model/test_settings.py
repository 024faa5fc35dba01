"""The stack settings model: defaults, the example stacks, and every kind of bad value."""

from __future__ import annotations

import pytest

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tools.plan.harness import stack_config

BASE = {"tenancy:domainSuffix": "tenants.example.com"}


def problems(config: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({**BASE, **config}, "Pulumi.test.yaml")
    return [str(p) for p in raised.value.problems]


def test_defaults_are_a_local_cluster_with_three_tiers() -> None:
    settings = parse_settings(BASE, "Pulumi.test.yaml")
    assert settings.cloud == "local"
    assert settings.environments == ["dev", "prod"]
    assert settings.read_only_environments == ["prod"]
    assert set(settings.quota_tiers) == {"small", "medium", "large"}
    assert settings.protection.protect_data is True


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_example_stack_files_are_valid(stack: str) -> None:
    config, _ = stack_config(stack)
    settings = parse_settings(config, f"Pulumi.{stack}.yaml")
    assert settings.domain_suffix


def test_structured_values_arrive_as_json_and_versions_stay_strings() -> None:
    settings = parse_settings(
        {
            **BASE,
            "tenancy:kubernetesVersion": "1.30",
            "tenancy:environments": '["dev"]',
            "tenancy:readOnlyEnvironments": "[]",
        },
        "Pulumi.test.yaml",
    )
    assert settings.kubernetes_version == "1.30"
    assert settings.environments == ["dev"]


def test_unknown_key_is_an_error_naming_it() -> None:
    (problem,) = problems({"tenancy:domainSufix": "x.example.com"})
    assert problem.startswith(
        "Pulumi.test.yaml: tenancy:domainSufix: unknown field 'domainSufix'; did you mean 'domainSuffix'? (allowed"
    )


def test_missing_domain_suffix() -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({}, "Pulumi.test.yaml")
    assert [str(p) for p in raised.value.problems] == ["Pulumi.test.yaml: tenancy:domainSuffix: Field required"]


@pytest.mark.parametrize(
    ("key", "value", "field", "message"),
    [
        ("cloud", "azure", "tenancy:cloud", "Input should be 'local', 'gcp' or 'aws'"),
        ("kubernetesVersion", "1.29", "tenancy:kubernetesVersion", "must be a Kubernetes minor version such as"),
        ("domainSuffix", "Not A Domain", "tenancy:domainSuffix", "is not a lowercase DNS name"),
        ("environments", '["dev", "dev"]', "tenancy:environments", "duplicate entries: dev"),
        (
            "readOnlyEnvironments",
            '["staging"]',
            "tenancy:readOnlyEnvironments",
            "names staging, which tenancy:environments (dev, prod) does not list",
        ),
        ("defaultQuotaTier", "huge", "tenancy", "defaultQuotaTier 'huge' is not one of quotaTiers"),
        ("cloud", "gcp", "tenancy", "cloud is gcp but its account section tenancy:gcp is missing"),
        ("cloud", "aws", "tenancy", "cloud is aws but its account section tenancy:aws is missing"),
        (
            "quotaTiers",
            '{"tiny": {"requests": {"cpu": "four"}}}',
            "tenancy:quotaTiers.tiny.requests.cpu",
            "'four' is not a Kubernetes quantity",
        ),
        ("platformNamespaces", '[{"name": "Ingress"}]', "tenancy:platformNamespaces.0.name", "is not a DNS label"),
        (
            "nodePools",
            '{"gpu": {"kind": "gke", "costCode": "ml", "minNodes": 5, "maxNodes": 2}}',
            "tenancy:nodePools.gpu",
            "minNodes (5) is above maxNodes (2)",
        ),
    ],
)
def test_bad_values_name_the_key(key: str, value: str, field: str, message: str) -> None:
    found = problems({f"tenancy:{key}": value})
    assert any(p.startswith(f"Pulumi.test.yaml: {field}") and message in p for p in found), found


def test_every_problem_is_reported_at_once() -> None:
    found = problems({"tenancy:cloud": "azure", "tenancy:kubernetesVersion": "2.0", "tenancy:bogus": "1"})
    assert len(found) == 3


def test_keys_of_other_namespaces_are_ignored() -> None:
    settings = parse_settings({**BASE, "kubernetes:context": "kind-tenancy"}, "Pulumi.test.yaml")
    assert settings.cluster.context is None
