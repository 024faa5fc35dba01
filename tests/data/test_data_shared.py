"""`placement: shared`: shared RDS instances on AWS through the engines' SQL providers, and shared
MariaDB on a local cluster through the MariaDB operator's objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from tests.k8s_schema import validate_custom
from tests.support import (
    assert_no_plain_secret,
    kubernetes_objects,
    objects_of_kind,
    plan,
    tenant_document,
    write_tenants,
)
from tools.plan.harness import (
    PROJECT_ROOT,
    SECRET_PLACEHOLDER,
    ProgramRun,
    RecordedResource,
    new_monitor,
    run_program,
    run_stack,
    stack_config,
)
from tools.scale.shards import generated_files

SHARED_PG = {"name": "orders", "engine": "postgres", "version": "16", "placement": "shared"}
SHARED_MYSQL = {"name": "legacy_billing", "engine": "mysql", "version": "8.4", "placement": "shared"}
# Pulumi.prod-aws.yaml: pg16 serves every environment, mysql84 only prod.
AWS_TENANTS = (
    tenant_document("shop", databases=[SHARED_PG, {**SHARED_MYSQL, "environments": ["prod"]}]),
    tenant_document("mall", databases=[SHARED_PG]),
)
LOCAL_SHARED = json.dumps({"sharedInstances": {"maria": {"engine": "mysql", "version": "8.0", "storageGb": 40}}})
LOCAL_MYSQL = {"name": "legacy_billing", "engine": "mysql", "version": "8.0", "placement": "shared"}


@pytest.fixture(scope="module")
def aws_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return plan("prod-aws", write_tenants(tmp_path_factory.mktemp("aws"), *AWS_TENANTS))


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    tenants = write_tenants(tmp_path_factory.mktemp("local"), tenant_document("shop", databases=[LOCAL_MYSQL]))
    return plan("dev", tenants, data=LOCAL_SHARED)


def _named(run: ProgramRun, type_token: str, name: str) -> RecordedResource:
    matches = [r for r in run.of_type(type_token) if r.name == name]
    assert len(matches) == 1, (type_token, name, [r.name for r in run.of_type(type_token)])
    return matches[0]


def _refused(stack: str, directory: Path, **config: str) -> str:
    """The error of a run that must fail before registering anything."""
    overrides = {"tenancy:tenantsDir": str(directory), **{f"tenancy:{k}": v for k, v in config.items()}}
    settings, secret_keys = stack_config(stack, overrides)
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program(stack, settings, secret_keys, monitor=monitor)
    assert monitor.recorded == []
    return str(raised.value)


# --- AWS -------------------------------------------------------------------------------------


def test_aws_shared_instances_are_registered_once_with_the_guards_of_dedicated_ones(aws_run: ProgramRun) -> None:
    instances = {r.name: r for r in aws_run.of_type("aws:rds/instance:Instance")}
    # Only the platform's: no tenant database asked for a dedicated one.
    assert set(instances) == {"shared-pg16", "shared-mysql84"}
    key = _named(aws_run, "aws:kms/key:Key", "tenancy-platform-key")
    assert key.protect and key.inputs["enableKeyRotation"] is True
    platform_key_arn = "arn:aws:kms:eu-west-1:111122223333:key/tenancy-platform-key"
    for name, instance in instances.items():
        inputs = instance.inputs
        assert instance.protect and aws_run.tenant_of(instance) is None
        assert inputs["deletionProtection"] is True
        assert inputs["skipFinalSnapshot"] is False
        assert inputs["finalSnapshotIdentifier"] == f"tenancy-{name}-final"
        assert inputs["storageEncrypted"] is True and inputs["kmsKeyId"] == platform_key_arn
        assert inputs["backupRetentionPeriod"] == 14 and inputs["deleteAutomatedBackups"] is False
        assert inputs["publiclyAccessible"] is False
        assert inputs["password"] == SECRET_PLACEHOLDER
    assert instances["shared-pg16"].inputs["instanceClass"] == "db.m7g.xlarge"
    assert instances["shared-pg16"].inputs["multiAz"] is True


def test_aws_admin_password_is_kept_under_the_platform_key_and_read_by_version(aws_run: ProgramRun) -> None:
    secret = _named(aws_run, "aws:secretsmanager/secret:Secret", "shared-pg16-admin")
    assert secret.protect
    assert secret.inputs["name"] == "tenancy/platform/db/pg16/admin"
    assert secret.inputs["kmsKeyId"] == "arn:aws:kms:eu-west-1:111122223333:key/tenancy-platform-key"
    version = _named(aws_run, "aws:secretsmanager/secretVersion:SecretVersion", "shared-pg16-admin-version")
    assert version.inputs["secretString"] == SECRET_PLACEHOLDER
    read = _named(aws_run, "aws:secretsmanager/secretVersion:SecretVersion", "shared-pg16-admin-read")
    assert read.read
    # The platform output names the version, never the password.
    shared = aws_run.outputs["platform"]["data"]["sharedInstances"]["pg16"]
    assert shared["adminSecretVersion"] == "shared-pg16-admin-version-id"
    assert SECRET_PLACEHOLDER not in json.dumps(aws_run.outputs["platform"])


def test_aws_one_sql_provider_per_shared_instance_whatever_the_tenants(aws_run: ProgramRun) -> None:
    postgres = aws_run.of_type("pulumi:providers:postgresql")
    mysql = aws_run.of_type("pulumi:providers:mysql")
    assert [p.name for p in postgres] == ["shared-pg16-postgresql"]
    assert [p.name for p in mysql] == ["shared-mysql84-mysql"]
    provider = postgres[0]
    assert aws_run.tenant_of(provider) is None
    assert provider.inputs["password"] == SECRET_PLACEHOLDER
    assert provider.inputs["username"] == "tenancy_admin"
    assert provider.inputs["host"] == "shared-pg16.abcdefghij.eu-west-1.rds.amazonaws.com"
    assert provider.inputs["superuser"] in (False, "false")
    assert provider.inputs["sslmode"] == "require"
    assert mysql[0].inputs["endpoint"] == "shared-mysql84.abcdefghij.eu-west-1.rds.amazonaws.com:3306"
    # Every SQL object of both tenants goes through that one provider per instance.
    sql = [r for r in aws_run.resources if r.type.startswith(("postgresql:", "mysql:"))]
    assert {aws_run.tenant_of(r) for r in sql} == {"shop", "mall"}
    for resource in sql:
        expected = provider if resource.type.startswith("postgresql:") else mysql[0]
        assert resource.provider is not None and resource.provider.startswith(expected.urn), resource.name


def test_aws_each_tenant_database_gets_its_own_login_that_owns_it(aws_run: ProgramRun) -> None:
    roles = {r.name: r for r in aws_run.of_type("postgresql:index/role:Role")}
    databases = {r.name: r for r in aws_run.of_type("postgresql:index/database:Database")}
    grants = {r.name: r for r in aws_run.of_type("postgresql:index/grant:Grant")}
    assert set(roles) == {f"{t}-{e}-db-orders-role" for t in ("shop", "mall") for e in ("dev", "prod")}
    names = set()
    for prefix in (name.removesuffix("-role") for name in roles):
        role, database, grant = (
            roles[f"{prefix}-role"],
            databases[f"{prefix}-database"],
            grants[f"{prefix}-revoke-public"],
        )
        assert role.inputs["login"] is True and role.inputs["password"] == SECRET_PLACEHOLDER
        assert role.protect and database.protect and grant.protect
        assert database.inputs["owner"] == role.inputs["name"]
        tenant, environment = prefix.split("-")[:2]
        assert database.inputs["name"] == f"{tenant}-{environment}-orders"
        # PUBLIC may not even connect: only the owner reaches the database.
        assert grant.inputs == {
            "database": database.inputs["name"],
            "role": "public",
            "objectType": "database",
            "privileges": [],
        }
        names.add(role.inputs["name"])
    assert len(names) == 4
    user = _named(aws_run, "mysql:index/user:User", "shop-prod-db-legacy-billing-user")
    grant = _named(aws_run, "mysql:index/grant:Grant", "shop-prod-db-legacy-billing-grant")
    database = _named(aws_run, "mysql:index/database:Database", "shop-prod-db-legacy-billing-database")
    assert user.inputs["plaintextPassword"] == SECRET_PLACEHOLDER and len(user.inputs["user"]) <= 16
    assert grant.inputs == {
        "user": user.inputs["user"],
        "host": "%",
        "database": database.inputs["name"],
        "privileges": ["ALL PRIVILEGES"],
    }
    # mysql84 serves prod only, and shop asked for it in prod only.
    assert [r.name for r in aws_run.of_type("mysql:index/database:Database")] == [database.name]


def test_aws_shared_credentials_land_under_the_tenant_key_and_arrive_as_db_secret(aws_run: ProgramRun) -> None:
    secret = _named(aws_run, "aws:secretsmanager/secret:Secret", "shop-prod-db-orders-credentials-secret")
    assert secret.inputs["name"] == "tenancy/shop/prod/db/orders"
    assert secret.inputs["kmsKeyId"] == "arn:aws:kms:eu-west-1:111122223333:key/shop-prod-key"
    version = _named(
        aws_run, "aws:secretsmanager/secretVersion:SecretVersion", "shop-prod-db-orders-credentials-version"
    )
    assert version.inputs["secretString"] == SECRET_PLACEHOLDER
    delivery = [
        o
        for o in objects_of_kind(aws_run, "ExternalSecret", "tenant-shop-prod")
        if o["metadata"]["name"] == "db-orders"
    ]
    assert len(delivery) == 1
    assert delivery[0]["spec"]["dataFrom"] == [{"extract": {"key": "tenancy/shop/prod/db/orders"}}]
    summary = aws_run.outputs["tenants"]["shop"]["data"]["databases"]["prod"]["orders"]
    assert summary["instance"] == "shared-pg16"
    assert summary["database"] == "shop-prod-orders"
    assert summary["credentialsSecret"] == "db-orders"
    # Egress to the database subnets on both engines' ports.
    policy = [
        o for o in objects_of_kind(aws_run, "NetworkPolicy", "tenant-shop-prod") if "databases" in o["metadata"]["name"]
    ]
    assert policy[0]["spec"]["egress"][0]["ports"] == [
        {"protocol": "TCP", "port": 3306},
        {"protocol": "TCP", "port": 5432},
    ]


def test_aws_no_shared_credential_in_plain_text(aws_run: ProgramRun, tmp_path: Path) -> None:
    assert_no_plain_secret(aws_run, tmp_path)


def test_aws_decommissioned_shared_database_is_released_not_dropped(tmp_path: Path) -> None:
    tenant = tenant_document("shop", lifecycle="decommissioned", databases=[SHARED_PG])
    run = plan("prod-aws", write_tenants(tmp_path, tenant))
    sql = [r for r in run.resources if r.type.startswith("postgresql:index")]
    assert len(sql) == 6
    assert all(r.retain_on_delete and not r.protect for r in sql)
    # Still through the instance's provider, which stays as long as anything uses it.
    assert len(run.of_type("pulumi:providers:postgresql")) == 1


def test_aws_stack_without_shared_databases_runs_no_sql_provider(tmp_path: Path) -> None:
    run = plan(
        "prod-aws", write_tenants(tmp_path, tenant_document("shop", databases=[{**SHARED_PG, "placement": None}]))
    )
    assert not [r for r in run.resources if r.type.startswith("pulumi:providers:postgres")]
    assert [r.name for r in run.of_type("aws:rds/instance:Instance")] == [
        "shared-mysql84",
        "shared-pg16",
        "shop-dev-db-orders-instance",
        "shop-prod-db-orders-instance",
    ]


def test_aws_shared_database_without_a_serving_instance_is_refused(tmp_path: Path) -> None:
    tenant = tenant_document("shop", databases=[{**SHARED_MYSQL, "version": "8.0"}])
    message = _refused("prod-aws", write_tenants(tmp_path, tenant))
    assert "databases.0.placement: no shared mysql 8.0 instance serves environment 'dev'" in message
    assert "environment 'prod'" in message


def test_aws_stack_default_shared_is_named_as_the_source_of_the_placement(tmp_path: Path) -> None:
    tenant = tenant_document("shop", databases=[{"name": "a", "engine": "mysql", "version": "8.0"}])
    message = _refused("prod-aws", write_tenants(tmp_path, tenant), data=json.dumps({"placement": "shared"}))
    assert "(the stack default tenancy:data.placement)" in message


@pytest.mark.parametrize(
    ("instance", "where", "text"),
    [
        ({"engine": "mysql", "version": "5.7"}, "sharedInstances.old.version", "mysql 5.7 is not available on aws"),
        (
            {"engine": "postgres", "version": "16", "environments": ["qa"]},
            "sharedInstances.old.environments",
            "qa not hosted by this stack",
        ),
    ],
)
def test_aws_bad_shared_instance_names_the_stack_key(
    instance: dict[str, Any], where: str, text: str, tmp_path: Path
) -> None:
    message = _refused(
        "prod-aws",
        write_tenants(tmp_path, tenant_document("shop")),
        data=json.dumps({"sharedInstances": {"old": instance}}),
    )
    assert f"Pulumi.prod-aws.yaml: tenancy:data.{where}: {text}" in message


# --- local -----------------------------------------------------------------------------------


def test_local_shared_mariadb_runs_in_the_platform_namespace(local_run: ProgramRun) -> None:
    namespace = _named(local_run, "kubernetes:core/v1:Namespace", "shared-databases-namespace")
    assert namespace.protect and namespace.inputs["metadata"]["name"] == "tenancy-databases"
    mariadb = _named(local_run, "kubernetes:k8s.mariadb.com/v1alpha1:MariaDB", "shared-maria")
    assert mariadb.protect and local_run.tenant_of(mariadb) is None
    assert mariadb.inputs["metadata"] == {
        "name": "shared-maria",
        "namespace": "tenancy-databases",
        "labels": {"app.kubernetes.io/managed-by": "tenancy"},
        # `up` waits for the operator's Ready condition (components/model/core/await_rules.py).
        "annotations": {"pulumi.com/waitFor": "condition=Ready"},
    }
    assert mariadb.inputs["spec"]["rootPasswordSecretKeyRef"] == {"name": "shared-maria-root", "key": "password"}
    assert mariadb.inputs["spec"]["storage"] == {"size": "40Gi"}
    root = _named(local_run, "kubernetes:core/v1:Secret", "shared-maria-root")
    assert root.inputs["data"] == {"password": SECRET_PLACEHOLDER} and root.protect


def test_local_shared_database_user_and_grant_stay_out_of_the_tenant_namespace(local_run: ProgramRun) -> None:
    kinds = ("Database", "User", "Grant")
    objects = {
        kind: _named(
            local_run, f"kubernetes:k8s.mariadb.com/v1alpha1:{kind}", f"shop-prod-db-legacy-billing-{kind.lower()}"
        )
        for kind in kinds
    }
    reference = {"name": "shared-maria", "namespace": "tenancy-databases"}
    for resource in objects.values():
        assert resource.inputs["metadata"]["namespace"] == "tenancy-databases"
        assert resource.inputs["metadata"]["name"] == "shop-prod-legacy-billing"
        assert resource.inputs["spec"]["mariaDbRef"] == reference
        assert resource.inputs["spec"]["cleanupPolicy"] == "Skip"
        assert resource.protect and local_run.tenant_of(resource) == "shop"
    database, user, grant = (objects[kind].inputs["spec"] for kind in kinds)
    assert database["name"] == "shop-prod-legacy_billing"
    assert grant["database"] == database["name"] and grant["username"] == user["name"]
    assert grant["privileges"] == ["ALL PRIVILEGES"] and grant["table"] == "*"
    assert user["passwordSecretKeyRef"] == {"name": "shop-prod-legacy-billing-login", "key": "password"}
    # No dedicated MariaDB for the tenant.
    assert [r.name for r in local_run.of_type("kubernetes:k8s.mariadb.com/v1alpha1:MariaDB")] == ["shared-maria"]


def test_local_shared_credentials_secret_points_at_the_shared_instance(local_run: ProgramRun) -> None:
    secret = _named(local_run, "kubernetes:core/v1:Secret", "shop-prod-db-legacy-billing-credentials")
    assert secret.inputs["metadata"]["namespace"] == "tenant-shop-prod"
    assert secret.inputs["metadata"]["name"] == "db-legacy-billing"
    # The password a secret (through `data`, written once); where to connect in plain `stringData`.
    assert secret.inputs["data"] == {"password": SECRET_PLACEHOLDER}
    assert {"host", "username"} <= set(secret.inputs["stringData"])
    summary = local_run.outputs["tenants"]["shop"]["data"]["databases"]["prod"]["legacy_billing"]
    assert summary["host"] == "shared-maria.tenancy-databases.svc"
    assert summary["database"] == "shop-prod-legacy_billing"
    # The isolation policy denies egress out of the namespace; this opens exactly the shared one.
    policy = [
        o
        for o in objects_of_kind(local_run, "NetworkPolicy", "tenant-shop-prod")
        if o["metadata"]["name"] == "tenancy-databases"
    ]
    assert policy[0]["spec"]["egress"] == [
        {
            "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "tenancy-databases"}}}],
            "ports": [{"protocol": "TCP", "port": 3306}],
        }
    ]


def test_local_shared_objects_pass_their_crds(local_run: ProgramRun) -> None:
    mariadb = [o for o in kubernetes_objects(local_run) if o["apiVersion"].startswith("k8s.mariadb.com/")]
    assert {o["kind"] for o in mariadb} == {"MariaDB", "Database", "User", "Grant"}
    for obj in mariadb:
        validate_custom(obj)


def test_local_no_shared_credential_in_plain_text(local_run: ProgramRun, tmp_path: Path) -> None:
    assert_no_plain_secret(local_run, tmp_path)


def test_local_shared_postgres_is_refused_with_the_way_out(tmp_path: Path) -> None:
    tenant = tenant_document("shop", databases=[SHARED_PG])
    message = _refused("dev", write_tenants(tmp_path, tenant), data=LOCAL_SHARED)
    assert "databases.0.placement: placement 'shared' is not available for postgres on local" in message
    assert "use placement dedicated" in message


def test_local_shared_postgres_instance_is_refused_naming_the_stack_key(tmp_path: Path) -> None:
    data = json.dumps({"sharedInstances": {"pg": {"engine": "postgres", "version": "16"}}})
    message = _refused("dev", write_tenants(tmp_path, tenant_document("shop")), data=data)
    assert (
        "Pulumi.dev.yaml: tenancy:data.sharedInstances.pg.engine: shared postgres instances are not available on local"
        in message
    )


def test_local_shared_mysql_without_an_instance_is_refused(tmp_path: Path) -> None:
    message = _refused("dev", write_tenants(tmp_path, tenant_document("shop", databases=[LOCAL_MYSQL])))
    assert "databases.0.placement: no shared mysql 8.0 instance serves environment 'dev'" in message


def test_aws_tenant_shards_reach_shared_instances_through_the_platform_output(tmp_path: Path) -> None:
    root = tmp_path / "split"
    root.mkdir()
    (root / "Pulumi.prod-aws.yaml").write_text((PROJECT_ROOT / "Pulumi.prod-aws.yaml").read_text(), encoding="utf-8")
    for path, text in generated_files(
        "prod-aws", 2, "acme-platform", "https://git.example.org/t.git", root=root
    ).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    tenants = {"tenancy:tenantsDir": str(write_tenants(tmp_path / "tenants", *AWS_TENANTS))}
    platform = run_stack("prod-aws-platform", tenants, root=root)
    shards = [run_stack(f"prod-aws-shard-{index}", tenants, root=root) for index in range(2)]

    assert [r.name for r in platform.of_type("aws:rds/instance:Instance")] == ["shared-mysql84", "shared-pg16"]
    assert platform.of_type("pulumi:providers:postgresql") == []
    users = [shard for shard in shards if shard.of_type("tenancy:index:Tenant")]
    assert users
    for shard in users:
        assert shard.of_type("aws:rds/instance:Instance") == []
        (provider,) = shard.of_type("pulumi:providers:postgresql")
        assert provider.inputs["host"] == "shared-pg16.abcdefghij.eu-west-1.rds.amazonaws.com"
        assert provider.inputs["password"] == SECRET_PLACEHOLDER
        # The admin password is read back by the secret version id the platform output names.
        assert "shared-pg16-admin-read" in {r.name for r in shard.resources if r.read}
        for tenant, summary in shard.outputs["tenants"].items():
            # The platform output carries no secret, so what a shard reads from it stays readable.
            assert summary["data"]["databases"]["dev"]["orders"]["instance"] == "shared-pg16", tenant


def test_local_decommissioned_shared_database_is_released_not_dropped(tmp_path: Path) -> None:
    tenant = tenant_document("shop", lifecycle="decommissioned", databases=[LOCAL_MYSQL])
    run = plan("dev", write_tenants(tmp_path, tenant), data=LOCAL_SHARED)
    objects = [r for r in run.resources if r.type.startswith("kubernetes:k8s.mariadb.com") and run.tenant_of(r)]
    assert sorted(r.name.rsplit("-", 1)[1] for r in objects) == [
        "database",
        "database",
        "grant",
        "grant",
        "user",
        "user",
    ]
    assert all(r.retain_on_delete and not r.protect for r in objects)
    # The platform's instance is untouched by a tenant leaving.
    assert _named(run, "kubernetes:k8s.mariadb.com/v1alpha1:MariaDB", "shared-maria").protect
