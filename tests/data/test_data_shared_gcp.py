"""`placement: shared` on GCP: tenant logins made in SQL through one provider per shared Cloud SQL
instance (a Cloud SQL API user would join `cloudsqlsuperuser` and reach every tenant's database),
the instance's admin login and its secret kept by the platform, and the AWS side unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import assert_no_plain_secret, plan, tenant_document, write_tenants
from tools.plan.harness import PROJECT_ROOT, SECRET_PLACEHOLDER, ProgramRun, RecordedResource, run_stack
from tools.scale.shards import generated_files

SHARED_PG = {"name": "orders", "engine": "postgres", "version": "16", "placement": "shared"}
SHARED_MYSQL = {"name": "legacy_billing", "engine": "mysql", "version": "8.0", "placement": "shared"}
# Pulumi.prod.yaml's pg16 plus a MySQL instance serving prod only.
GCP_SHARED = json.dumps(
    {
        "sharedInstances": {
            "pg16": {"engine": "postgres", "version": "16", "size": "large", "storageGb": 500},
            "mysql80": {"engine": "mysql", "version": "8.0", "storageGb": 100, "environments": ["prod"]},
        }
    }
)
TENANTS = (
    tenant_document("shop", databases=[SHARED_PG, {**SHARED_MYSQL, "environments": ["prod"]}]),
    tenant_document("mall", databases=[SHARED_PG]),
)


@pytest.fixture(scope="module")
def gcp_run(tmp_path_factory: pytest.TempPathFactory) -> ProgramRun:
    return plan("prod", write_tenants(tmp_path_factory.mktemp("gcp"), *TENANTS), data=GCP_SHARED)


def _named(run: ProgramRun, type_token: str, name: str) -> RecordedResource:
    matches = [r for r in run.of_type(type_token) if r.name == name]
    assert len(matches) == 1, (type_token, name, [r.name for r in run.of_type(type_token)])
    return matches[0]


def test_gcp_shared_databases_use_no_cloud_sql_api_user(gcp_run: ProgramRun) -> None:
    # The only Cloud SQL API users are the platform's admin logins, one per shared instance.
    users = gcp_run.of_type("gcp:sql/user:User")
    assert sorted(u.name for u in users) == ["shared-mysql80-admin-user", "shared-pg16-admin-user"]
    for user in users:
        assert gcp_run.tenant_of(user) is None and user.protect
        assert user.inputs["name"] == "tenancy_admin" and user.inputs["type"] == "BUILT_IN"
        assert user.inputs["password"] == SECRET_PLACEHOLDER
        assert user.inputs["deletionPolicy"] == "ABANDON"
    assert gcp_run.of_type("gcp:sql/database:Database") == []


def test_gcp_one_sql_provider_per_shared_instance_at_its_private_ip(gcp_run: ProgramRun) -> None:
    (postgres,) = gcp_run.of_type("pulumi:providers:postgresql")
    (mysql,) = gcp_run.of_type("pulumi:providers:mysql")
    assert (postgres.name, mysql.name) == ("shared-pg16-postgresql", "shared-mysql80-mysql")
    exported = gcp_run.outputs["platform"]["data"]["sharedInstances"]
    assert gcp_run.tenant_of(postgres) is None
    assert postgres.inputs["host"] == exported["pg16"]["privateIp"] != exported["mysql80"]["privateIp"]
    assert postgres.inputs["username"] == "tenancy_admin" and postgres.inputs["password"] == SECRET_PLACEHOLDER
    assert postgres.inputs["superuser"] in (False, "false") and postgres.inputs["sslmode"] == "require"
    assert mysql.inputs["endpoint"] == f"{exported['mysql80']['privateIp']}:3306"
    sql = [r for r in gcp_run.resources if r.type.startswith(("postgresql:", "mysql:"))]
    assert {gcp_run.tenant_of(r) for r in sql} == {"shop", "mall"}
    for resource in sql:
        expected = postgres if resource.type.startswith("postgresql:") else mysql
        assert resource.provider is not None and resource.provider.startswith(expected.urn), resource.name


def test_gcp_each_postgres_login_owns_its_database_and_public_may_not_connect(gcp_run: ProgramRun) -> None:
    roles = {r.name: r for r in gcp_run.of_type("postgresql:index/role:Role")}
    assert set(roles) == {f"{t}-{e}-db-orders-role" for t in ("shop", "mall") for e in ("dev", "prod")}
    for name, role in roles.items():
        prefix = name.removesuffix("-role")
        database = _named(gcp_run, "postgresql:index/database:Database", f"{prefix}-database")
        grant = _named(gcp_run, "postgresql:index/grant:Grant", f"{prefix}-revoke-public")
        assert role.protect and database.protect and grant.protect
        # A role made in SQL: no `roles`, so no cloudsqlsuperuser membership.
        assert role.inputs["login"] is True and "roles" not in role.inputs
        assert database.inputs["owner"] == role.inputs["name"]
        assert grant.inputs == {
            "database": database.inputs["name"],
            "role": "public",
            "objectType": "database",
            "privileges": [],
        }
    assert len({r.inputs["name"] for r in roles.values()}) == 4


def test_gcp_mysql_login_has_privileges_on_its_database_only(gcp_run: ProgramRun) -> None:
    user = _named(gcp_run, "mysql:index/user:User", "shop-prod-db-legacy-billing-user")
    database = _named(gcp_run, "mysql:index/database:Database", "shop-prod-db-legacy-billing-database")
    grant = _named(gcp_run, "mysql:index/grant:Grant", "shop-prod-db-legacy-billing-grant")
    assert database.inputs["name"] == "shop-prod-legacy_billing"
    assert grant.inputs == {
        "user": user.inputs["user"],
        "host": "%",
        "database": database.inputs["name"],
        "privileges": ["ALL PRIVILEGES"],
    }
    assert [r.name for r in gcp_run.of_type("mysql:index/grant:Grant")] == [grant.name]


def test_gcp_admin_credentials_stay_with_the_platform_and_are_read_by_version(gcp_run: ProgramRun) -> None:
    secret = _named(gcp_run, "gcp:secretmanager/secret:Secret", "shared-pg16-admin")
    assert secret.protect and gcp_run.tenant_of(secret) is None
    assert secret.inputs["secretId"] == "tenancy_platform_db_pg16_admin"
    version = _named(gcp_run, "gcp:secretmanager/secretVersion:SecretVersion", "shared-pg16-admin-version")
    assert version.inputs["secretData"] == SECRET_PLACEHOLDER
    read = _named(gcp_run, "gcp:secretmanager/secretVersion:SecretVersion", "shared-pg16-admin-read")
    assert read.read
    shared = gcp_run.outputs["platform"]["data"]["sharedInstances"]["pg16"]
    assert shared["adminSecretVersion"] == "shared-pg16-admin-version-id"
    assert SECRET_PLACEHOLDER not in json.dumps(gcp_run.outputs["platform"])
    # No tenant identity may read it: every secret reader binding names a tenant's own secret.
    readers = gcp_run.of_type("gcp:secretmanager/secretIamMember:SecretIamMember")
    assert all("admin" not in str(r.inputs["secretId"]) for r in readers)


def test_gcp_shared_credentials_point_at_the_instance(gcp_run: ProgramRun) -> None:
    summary = gcp_run.outputs["tenants"]["shop"]["data"]["databases"]["prod"]["orders"]
    exported = gcp_run.outputs["platform"]["data"]["sharedInstances"]["pg16"]
    assert summary["instance"] == exported["connectionName"]
    assert summary["host"] == exported["privateIp"] and summary["database"] == "shop-prod-orders"


def test_gcp_no_shared_credential_in_plain_text(gcp_run: ProgramRun, tmp_path: Path) -> None:
    assert_no_plain_secret(gcp_run, tmp_path)


def test_gcp_decommissioned_shared_database_is_released_not_dropped(tmp_path: Path) -> None:
    tenant = tenant_document("shop", lifecycle="decommissioned", databases=[SHARED_PG])
    run = plan("prod", write_tenants(tmp_path, tenant), data=GCP_SHARED)
    sql = [r for r in run.resources if r.type.startswith("postgresql:index")]
    assert len(sql) == 6
    assert all(r.retain_on_delete and not r.protect for r in sql)


def test_gcp_tenant_shards_reach_shared_instances_through_the_platform_output(tmp_path: Path) -> None:
    root = tmp_path / "split"
    root.mkdir()
    config = (PROJECT_ROOT / "Pulumi.prod.yaml").read_text()
    (root / "Pulumi.prod.yaml").write_text(config, encoding="utf-8")
    for path, text in generated_files("prod", 2, "acme-platform", "https://git.example.org/t.git", root=root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    overrides = {
        "tenancy:tenantsDir": str(write_tenants(tmp_path / "tenants", *TENANTS)),
        "tenancy:data": GCP_SHARED,
    }
    platform = run_stack("prod-platform", overrides, root=root)
    shards = [run_stack(f"prod-shard-{index}", overrides, root=root) for index in range(2)]

    assert sorted(r.name for r in platform.of_type("gcp:sql/user:User")) == [
        "shared-mysql80-admin-user",
        "shared-pg16-admin-user",
    ]
    assert platform.of_type("pulumi:providers:postgresql") == []
    assert SECRET_PLACEHOLDER not in json.dumps(platform.outputs)
    users = [shard for shard in shards if shard.of_type("tenancy:index:Tenant")]
    assert users
    for shard in users:
        # The admin login and its secret are the platform's alone.
        assert shard.of_type("gcp:sql/user:User") == []
        assert [r.name for r in shard.of_type("gcp:secretmanager/secret:Secret") if "admin" in r.name] == []
        (provider,) = shard.of_type("pulumi:providers:postgresql")
        assert provider.inputs["password"] == SECRET_PLACEHOLDER
        # The admin password is read back by the secret version id the platform output names.
        assert "shared-pg16-admin-read" in {r.name for r in shard.resources if r.read}
        assert {shard.tenant_of(r) for r in shard.of_type("postgresql:index/role:Role")} <= {"shop", "mall"}
