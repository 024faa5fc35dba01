"""The cloud registry: every cloud implements the one protocol, and shared code never asks which
cloud it has (the design's seam: adding a cloud touches components/clouds/ and the settings enum)."""

from __future__ import annotations

import ast
import typing

import pytest

from components.clouds.protocol import Cloud
from components.clouds.registry import CLOUDS, cloud_for
from components.model.catalog.stack_config import parse_settings
from components.model.settings.stack import StackSettings
from tools.plan.harness import PROJECT_ROOT

COMPONENTS = PROJECT_ROOT / "components"
# The settings model reads its own `cloud` field to require the account section named after it
# (`tenancy:gcp` when cloud is gcp); it names no cloud and decides nothing for one.
_ALLOWED = {COMPONENTS / "model" / "settings" / "stack.py"}
# Each cloud with the smallest settings that select it.
_SECTIONS = {
    "local": {},
    "gcp": {
        "tenancy:gcp": '{"project": "acme-platform", "region": "europe-west1"}',
        "tenancy:policy": '{"platformIdentities": {"users": ["ci@acme-platform.iam.gserviceaccount.com"]}}',
    },
    "aws": {
        "tenancy:aws": '{"region": "eu-west-1"}',
        "tenancy:policy": '{"platformIdentities": {"groups": ["tenancy-platform"]}}',
    },
}


def _settings(cloud: str) -> StackSettings:
    config = {"tenancy:domainSuffix": "tenants.example.com", "tenancy:cloud": cloud, **_SECTIONS[cloud]}
    return parse_settings(config, "Pulumi.test.yaml")


def test_the_registry_knows_exactly_the_clouds_the_settings_accept() -> None:
    accepted = set(typing.get_args(StackSettings.model_fields["cloud"].annotation))
    assert set(CLOUDS) == accepted == set(_SECTIONS)


@pytest.mark.parametrize("name", sorted(CLOUDS))
def test_every_cloud_implements_the_protocol(name: str) -> None:
    cloud = cloud_for(_settings(name))
    assert isinstance(cloud, Cloud)
    assert cloud.name == name
    capabilities = cloud.capabilities
    # Every engine a tenant file may ask for has versions, and shared engines are engines it runs.
    assert set(capabilities.engine_versions) == {"postgres", "mysql"}
    assert all(capabilities.engine_versions.values())
    assert capabilities.shared_engines <= set(capabilities.engine_versions)
    assert capabilities.placements <= {"dedicated", "shared"}


def test_cloud_settings_problems_come_from_the_cloud() -> None:
    # Without a network (gcp) or per-environment DB subnets (aws) no database can be placed; local needs nothing.
    assert cloud_for(_settings("local")).database_problems() == []
    assert ["tenancy:gcp.network" in p for p in cloud_for(_settings("gcp")).database_problems()] == [True]
    aws = cloud_for(_settings("aws")).database_problems()
    keys = ["tenancy:aws.databaseSubnets", "tenancy:aws.vpcId", "tenancy:aws.podSecurityGroupIds"]
    assert [[key in p for key in keys] for p in aws] == [
        [True, False, False],
        [False, True, False],
        [False, False, True],
    ]


def cloud_branches(source: str) -> list[int]:
    """Lines of `source` that test which cloud they run on: a comparison with a cloud's name, or
    any read of a `.cloud` attribute (settings.cloud, backend.cloud)."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            names = [o.value for o in operands if isinstance(o, ast.Constant)]
            names += [
                e.value
                for o in operands
                if isinstance(o, ast.Tuple | ast.List | ast.Set)
                for e in o.elts
                if isinstance(e, ast.Constant)
            ]
            if set(names) & set(CLOUDS):
                lines.append(node.lineno)
        if isinstance(node, ast.Attribute) and node.attr == "cloud":
            lines.append(node.lineno)
    return sorted(set(lines))


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('if settings.cloud == "aws":\n    pass\n', [1]),
        ('x = 1\nok = "local" != kind\n', [2]),
        ('if name in ("gcp", "aws"):\n    pass\n', [1]),
        ("delivered = backend.cloud\n", [1]),
        ('cloud = cloud_for(settings)\nname = "gcp-pool"\n', []),
    ],
)
def test_the_branch_detector_finds_branches(source: str, found: list[int]) -> None:
    assert cloud_branches(source) == found


def test_no_code_outside_clouds_branches_on_the_cloud() -> None:
    offenders = [
        f"{path.relative_to(PROJECT_ROOT)}:{line}"
        for path in sorted(COMPONENTS.rglob("*.py"))
        if COMPONENTS / "clouds" not in path.parents and path not in _ALLOWED
        for line in cloud_branches(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "ask the cloud (components/clouds/protocol.py) instead"
