"""The defects a first real `up` would have hit, each pinned where it was (issue 24): found by the
engine rules, fixed in the program, and asserted here by name so the fix cannot go unnoticed."""

from __future__ import annotations

from tests.engine.conftest import Mixes
from tests.engine.mixes import records
from tools.plan.engine_rules import PlanGraph
from tools.plan.harness import ProgramRun, RecordedResource


def _named(run: ProgramRun, name: str) -> RecordedResource:
    (resource,) = [r for r in run.resources if r.name == name]
    return resource


def _provider(run: ProgramRun, package: str) -> str:
    (provider,) = [r.urn for r in run.resources if r.type == f"pulumi:providers:{package}"]
    return provider


def test_gcp_shared_admin_secret_read_goes_through_the_stacks_gcp_provider(mix_plans: Mixes) -> None:
    # Before: `SecretVersion.get` got empty options, so the engine would use the default gcp
    # provider, which Pulumi.prod.yaml disables: the read was refused.
    for lifecycle in ("active", "suspended", "decommissioned"):
        run = mix_plans[("prod", lifecycle)]
        read = _named(run, "shared-pg16-admin-read")
        assert read.read and read.provider_urn == _provider(run, "gcp"), lifecycle


def test_aws_shared_admin_secret_read_goes_through_the_stacks_aws_provider(mix_plans: Mixes) -> None:
    run = mix_plans[("prod-aws", "active")]
    for name in ("shared-pg16-admin-read", "shared-mysql84-admin-read"):
        assert _named(run, name).provider_urn == _provider(run, "aws")


def test_cloud_sql_instances_and_cmek_secrets_wait_for_the_service_agent_grants(prod_plan: ProgramRun) -> None:
    # Before: they raced the ring grants on a first `up` ("insufficient permission to use KMS key").
    graph = PlanGraph(records(prod_plan))
    grants = {name: _named(prod_plan, name).urn for name in ("tenancy-sql-agent-keys", "tenancy-secrets-agent-keys")}
    instances = prod_plan.of_type("gcp:sql/databaseInstance:DatabaseInstance")
    encrypted = [r for r in instances if r.inputs.get("encryptionKeyName")]
    secrets = [
        r
        for r in prod_plan.of_type("gcp:secretmanager/secret:Secret")
        if "customerManagedEncryption" in str(r.inputs.get("replication"))
    ]
    assert encrypted and secrets
    for instance in encrypted:
        assert grants["tenancy-sql-agent-keys"] in graph.waits_for(instance.urn), instance.name
    for secret in secrets:
        assert grants["tenancy-secrets-agent-keys"] in graph.waits_for(secret.urn), secret.name


def test_decommissioned_aws_tenant_retains_the_security_groups_of_its_retained_instances(mix_plans: Mixes) -> None:
    # Before: the RDS instances were retained, their environment's group was not; removing the
    # tenant file then deleted the group under a live instance (DependencyViolation).
    run = mix_plans[("prod-aws", "decommissioned")]
    by_urn = run.by_urn()
    instances = [r for r in run.of_type("aws:rds/instance:Instance") if run.tenant_of(r) == "acme"]
    assert instances and all(r.retain_on_delete for r in instances)
    for instance in instances:
        groups = [by_urn[urn] for urn in instance.dependencies if "SecurityGroup" in urn]
        assert groups, instance.name
        assert all(group.retain_on_delete and not group.protect for group in groups), instance.name


def test_active_aws_security_groups_are_neither_retained_nor_protected(prod_aws_plan: ProgramRun) -> None:
    # The group holds no data: only a released tenant keeps it.
    groups = [g for g in prod_aws_plan.of_type("aws:ec2/securityGroup:SecurityGroup") if prod_aws_plan.tenant_of(g)]
    assert groups and not any(g.retain_on_delete or g.protect for g in groups)


def test_local_shared_database_objects_wait_for_the_shared_namespace_and_instance(mix_plans: Mixes) -> None:
    # Before: a tenant's MariaDB Database, User, Grant and login Secret went into the platform's
    # shared namespace without waiting for it (both created in the same first `up`).
    run = mix_plans[("dev", "active")]
    graph = PlanGraph(records(run))
    namespace = _named(run, "shared-databases-namespace").urn
    instance = _named(run, "shared-maria").urn
    objects = [r for r in run.resources if run.tenant_of(r) == "sharedco" and r.name.startswith("sharedco-")]
    inside = [r for r in objects if r.inputs.get("metadata", {}).get("namespace") == "tenancy-databases"]
    assert {r.type.rpartition(":")[2] for r in inside} == {"Secret", "Database", "User", "Grant"}
    for resource in inside:
        assert namespace in graph.waits_for(resource.urn), resource.name
        if resource.type.startswith("kubernetes:k8s.mariadb.com"):
            assert instance in graph.waits_for(resource.urn), resource.name
