"""AWS names at the model's limits and edge characters (components/clouds/aws/name_rules.py):
every name the program gives an AWS resource is one AWS accepts, for tenant, environment and
database names as long as the model allows and with the characters that produce `--` or a
trailing `-`; names that were already valid stay exactly as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.clouds.aws import name_rules
from components.clouds.aws.name_rules import AUTONAME_SUFFIX, RULES, fit, problems, rds_identifier
from tests.support import plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

LONG_TENANT = "t" + "a" * 62  # 63: the DNS label limit
LONG_ENVIRONMENT = "e" + "b" * 62
LONG_DATABASE = "d" + "c" * 30  # 31: the model's database name limit
# The namespace `tenant-<tenant>-<environment>` is a DNS label: with `prod`, 51 is the longest tenant.
MODEL_TENANT = "t" + "a" * 50
TENANTS = ["a", "a--b", "a-b", LONG_TENANT, "a--" + "b" * 59]
ENVIRONMENTS = ["dev", "prod", "a--b", LONG_ENVIRONMENT]
DATABASES = ["x", "x__y", "x_", "x_1", LONG_DATABASE, "x" + "_" * 30]


def _prefix(tenant: str, environment: str, database: str) -> str:
    # components/data/databases.py: `<tenant>-<env>-db-<database with _ as ->`.
    return f"{tenant}-{environment}-db-{database.replace('_', '-')}"


def _identifier(resource_name: str) -> str:
    explicit = rds_identifier(resource_name)
    return explicit if explicit is not None else f"{resource_name}{'x' * AUTONAME_SUFFIX}"


def test_every_rule_cites_its_source() -> None:
    for rule in RULES.values():
        assert rule.source.startswith("https://docs.aws.amazon.com/"), rule


@pytest.mark.parametrize(
    ("kind", "name", "refused"),
    [
        ("rds-instance", "a" * 63, False),
        ("rds-instance", "a" * 64, True),
        ("rds-instance", "a--b", True),
        ("rds-instance", "ab-", True),
        ("rds-instance", "1ab", True),
        ("rds-instance", "a_b", True),
        ("iam-role", "r" * 64, False),
        ("iam-role", "r" * 65, True),
        ("kms-alias", "alias/aws/x", True),
        ("kms-alias", "alias/tenancy/a--b/dev", False),
        ("secretsmanager-secret", "tenancy/a/dev/db/x_y", False),
        ("security-group", "sg-anything", True),
        ("rds-subnet-group", "default", True),
    ],
)
def test_rules_refuse_what_aws_refuses(kind: str, name: str, refused: bool) -> None:
    assert bool(problems(kind, name)) is refused


@pytest.mark.parametrize("tenant", TENANTS)
@pytest.mark.parametrize("environment", ENVIRONMENTS)
@pytest.mark.parametrize("database", DATABASES)
def test_rds_names_are_valid_at_the_limits(tenant: str, environment: str, database: str) -> None:
    prefix = _prefix(tenant, environment, database)
    assert problems("rds-instance", _identifier(f"{prefix}-instance")) == []
    assert problems("rds-final-snapshot", fit("rds-final-snapshot", f"{prefix}-final")) == []
    assert problems("rds-parameter-group", fit("rds-parameter-group", f"{prefix}-instance-mysql8-0")) == []
    # The names of the rest of an environment's data.
    assert problems("kms-alias", f"alias/tenancy/{tenant}/{environment}") == []
    assert problems("secretsmanager-secret", f"tenancy/{tenant}/{environment}/db/{database}") == []
    assert problems("security-group", f"{tenant}-{environment}-databases-{'x' * 7}") == []
    assert problems("iam-role", f"t-{tenant}-{environment}"[:37] + "-" + "x" * 26) == []


def test_fitted_names_never_collide() -> None:
    names = {_prefix(t, e, d) for t in TENANTS for e in ENVIRONMENTS for d in DATABASES}
    assert len({_identifier(f"{name}-instance") for name in names}) == len(names)


def test_valid_names_are_never_renamed() -> None:
    # Every instance created so far carries Pulumi's autoname: no explicit identifier replaces it.
    assert rds_identifier("acme-prod-db-orders-instance") is None
    assert rds_identifier("a" * (63 - AUTONAME_SUFFIX)) is None
    assert rds_identifier("a" * (64 - AUTONAME_SUFFIX)) is not None
    assert fit("rds-final-snapshot", "acme-prod-db-orders-final") == "acme-prod-db-orders-final"


def test_fitting_is_deterministic() -> None:
    name = _prefix(LONG_TENANT, LONG_ENVIRONMENT, LONG_DATABASE) + "-instance"
    assert name_rules.fit("rds-instance", name) == name_rules.fit("rds-instance", name)
    assert len(name_rules.fit("rds-instance", name)) <= 63


@pytest.fixture(scope="module")
def edge_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    databases = [
        {"name": "x__y", "engine": "mysql", "version": "8.4"},
        {"name": "x_", "engine": "postgres", "version": "16"},
        {"name": LONG_DATABASE, "engine": "mysql", "version": "8.4"},
    ]
    tenants = [
        tenant_document("a--b", databases=databases, secrets=[{"name": "api-key", "source": "generated"}]),
        tenant_document(MODEL_TENANT, costCenter="cc-long", databases=databases),
    ]
    directory: Path = tmp_path_factory.mktemp("edge-tenants")
    return plan("prod-aws", write_tenants(directory, *tenants))


def test_the_plan_names_only_what_aws_accepts(edge_run: ProgramRun) -> None:
    instances = edge_run.of_type("aws:rds/instance:Instance")
    assert len(instances) >= 12
    for instance in instances:
        identifier = instance.inputs.get("identifier") or f"{instance.name}{'x' * AUTONAME_SUFFIX}"
        assert problems("rds-instance", identifier) == [], instance.name
        assert problems("rds-final-snapshot", instance.inputs["finalSnapshotIdentifier"]) == [], instance.name
        assert len(instance.inputs["username"]) <= (16 if instance.inputs["engine"] == "mysql" else 63)
    for group in edge_run.of_type("aws:rds/parameterGroup:ParameterGroup"):
        assert problems("rds-parameter-group", group.inputs["name"]) == [], group.name
    for secret in edge_run.of_type("aws:secretsmanager/secret:Secret"):
        assert problems("secretsmanager-secret", secret.inputs["name"]) == [], secret.name
    for alias in edge_run.of_type("aws:kms/alias:Alias"):
        assert problems("kms-alias", alias.inputs["name"]) == [], alias.name
    for role in edge_run.of_type("aws:iam/role:Role"):
        prefix = role.inputs.get("namePrefix")
        if prefix is not None:
            assert len(prefix) <= 38 and problems("iam-role", prefix + "x" * 26) == [], role.name
