"""Apps with the tenant's identity and databases, as the real program renders them on every cloud:
which pods run as the `workload` account (and only there mount a token), how chart pods get it
without confusing it with Flux's `deployer` impersonation, how database credentials reach image
and chart apps, and every bad reference refused before anything is registered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from components.model.core.errors import ConfigurationError
from components.model.tenant_file.data import DATABASE_KEYS
from tests.k8s_schema import validate_builtin, validate_custom
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, RecordingMonitor, new_monitor, run_program, stack_config

STACKS = ("dev", "prod", "prod-aws")
# Where each stack's tenants get a cloud identity (dev is a local cluster: none).
CLOUD_IDENTITY = {"dev": False, "prod": True, "prod-aws": True}
ORDERS_ENV = {
    "DB_ORDERS_HOST": "host",
    "DB_ORDERS_PORT": "port",
    "DB_ORDERS_DATABASE": "database",
    "DB_ORDERS_USERNAME": "username",
    "DB_ORDERS_PASSWORD": "password",
}


class _CapturingMocks(pulumi.runtime.Mocks):
    """The project's mocks, keeping every resource's inputs as the program produced them.

    The recorded plan redacts secrets as a whole; this is how a test sees which keys a
    credentials document really has (never written anywhere).
    """

    def __init__(self) -> None:
        self.inner = new_monitor().mocks
        self.inputs: dict[str, dict[str, Any]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        self.inputs[args.name] = dict(args.inputs)
        result: tuple[str | None, dict[str, Any]] = self.inner.new_resource(args)
        return result

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        result: tuple[dict[str, Any], list[tuple[str, str]] | None] = self.inner.call(args)
        return result


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[ProgramRun, _CapturingMocks]]:
    captured: dict[str, tuple[ProgramRun, _CapturingMocks]] = {}
    for stack in STACKS:
        mocks = _CapturingMocks()
        config, secret_keys = stack_config(stack)
        captured[stack] = (run_program(stack, config, secret_keys, monitor=RecordingMonitor(mocks)), mocks)
    return captured


def _one(run: ProgramRun, kind: str, namespace: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objects_of_kind(run, kind, namespace) if o["metadata"]["name"] == name]
    return found


def _workload_namespaces(run: ProgramRun) -> set[str]:
    return {
        o["metadata"]["namespace"]
        for o in objects_of_kind(run, "ServiceAccount")
        if o["metadata"]["name"] == "workload"
    }


def _patched_pod_specs(release: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Post-renderer patches of a HelmRelease: kind -> the pod spec each patch sets."""
    specs: dict[str, dict[str, Any]] = {}
    for renderer in release["spec"].get("postRenderers", []):
        for patch in renderer["kustomize"]["patches"]:
            body = yaml.safe_load(patch["patch"])
            spec = body["spec"]["jobTemplate"]["spec"] if body["kind"] == "CronJob" else body["spec"]
            specs[patch["target"]["kind"]] = spec["template"]["spec"]
    return specs


@pytest.mark.parametrize("stack", STACKS)
def test_image_pods_run_as_the_workload_identity_exactly_where_it_exists(
    runs: dict[str, tuple[ProgramRun, _CapturingMocks]], stack: str
) -> None:
    run, _ = runs[stack]
    with_identity = _workload_namespaces(run)
    assert bool(with_identity) == CLOUD_IDENTITY[stack]
    deployments = [o for o in objects_of_kind(run, "Deployment") if o["metadata"]["namespace"].startswith("tenant-")]
    assert deployments
    for deployment in deployments:
        pod = deployment["spec"]["template"]["spec"]
        has_identity = deployment["metadata"]["namespace"] in with_identity
        assert pod.get("serviceAccountName") == ("workload" if has_identity else None), deployment["metadata"]
        # The token is mounted for the identity only; without one the pod has no token at all.
        assert pod["automountServiceAccountToken"] is has_identity, deployment["metadata"]
    # Named cases, so the rule above cannot pass vacuously: acme has data, status-page has none.
    acme = _one(run, "Deployment", "tenant-acme-prod", "worker")["spec"]["template"]["spec"]
    assert acme.get("serviceAccountName") == ("workload" if CLOUD_IDENTITY[stack] else None)
    if stack != "dev":
        status = _one(run, "Deployment", "tenant-status-page-prod", "status")["spec"]["template"]["spec"]
        assert "serviceAccountName" not in status and status["automountServiceAccountToken"] is False


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_an_environment_without_data_has_no_identity_for_its_pods(tmp_path: Path, stack: str) -> None:
    tenant = tenant_document(
        "shop",
        secrets=[{"name": "api-key", "source": "generated", "environments": ["prod"]}],
        apps=[{"name": "api", "image": {"repository": "ghcr.io/shop/api", "tag": "1.0.0"}}],
    )
    run = plan(stack, write_tenants(tmp_path, tenant))
    assert _workload_namespaces(run) == {"tenant-shop-prod"}
    prod = _one(run, "Deployment", "tenant-shop-prod", "api")["spec"]["template"]["spec"]
    dev = _one(run, "Deployment", "tenant-shop-dev", "api")["spec"]["template"]["spec"]
    assert (prod.get("serviceAccountName"), prod["automountServiceAccountToken"]) == ("workload", True)
    assert (dev.get("serviceAccountName"), dev["automountServiceAccountToken"]) == (None, False)


def test_the_workload_account_carries_the_cloud_identity(runs: dict[str, tuple[ProgramRun, _CapturingMocks]]) -> None:
    gcp, _ = runs["prod"]
    account = _one(gcp, "ServiceAccount", "tenant-acme-prod", "workload")
    principal = gcp.outputs["tenants"]["acme"]["data"]["identity"]["principal"]["prod"]
    assert account["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": principal}
    aws, _ = runs["prod-aws"]
    associations = [r.inputs for r in aws.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")]
    assert {"namespace": "tenant-acme-prod", "serviceAccount": "workload"}.items() <= next(
        a for a in associations if a["namespace"] == "tenant-acme-prod"
    ).items()


@pytest.mark.parametrize("stack", STACKS)
def test_chart_pods_get_the_identity_while_the_release_is_applied_as_the_deployer(
    runs: dict[str, tuple[ProgramRun, _CapturingMocks]], stack: str
) -> None:
    run, _ = runs[stack]
    with_identity = _workload_namespaces(run)
    # Chart apps only: the virtual clusters' own releases run no tenant pods on the host.
    releases = [r for r in objects_of_kind(run, "HelmRelease") if r["metadata"]["name"] != "vcluster"]
    assert releases
    for release in releases:
        # Impersonation for applying the chart: always the deployer, never the pod identity.
        assert release["spec"]["serviceAccountName"] == "deployer"
        pods = _patched_pod_specs(release)
        expected = "workload" if release["metadata"]["namespace"] in with_identity else None
        assert {kind: spec.get("serviceAccountName") for kind, spec in pods.items()} == dict.fromkeys(
            ("Deployment", "StatefulSet", "Job", "CronJob"), expected
        )
        validate_custom(release)
    # GitOps repositories choose their own accounts: their patches place pods, nothing more.
    for kustomization in objects_of_kind(run, "Kustomization"):
        for patch in kustomization["spec"].get("patches", []):
            assert "serviceAccountName" not in patch["patch"]


def test_a_chart_without_a_pool_gets_the_identity_patch_alone(tmp_path: Path) -> None:
    tenant = tenant_document(
        "shop",
        secrets=[{"name": "api-key", "source": "generated"}],
        apps=[
            {"name": "web", "chart": {"repository": "https://charts.example.org", "name": "web", "version": "1.0.0"}}
        ],
    )
    run = plan("prod", write_tenants(tmp_path, tenant))
    pods = _patched_pod_specs(_one(run, "HelmRelease", "tenant-shop-prod", "web"))
    assert pods["Deployment"] == {"serviceAccountName": "workload"}
    assert set(pods) == {"Deployment", "StatefulSet", "Job", "CronJob"}


@pytest.mark.parametrize("stack", STACKS)
def test_image_apps_get_database_credentials_as_environment_variables(
    runs: dict[str, tuple[ProgramRun, _CapturingMocks]], stack: str
) -> None:
    run, mocks = runs[stack]
    for env in ("dev", "prod"):
        worker = _one(run, "Deployment", f"tenant-acme-{env}", "worker")
        validate_builtin(worker, "1.34")
        (container,) = worker["spec"]["template"]["spec"]["containers"]
        refs = {v["name"]: v["valueFrom"]["secretKeyRef"] for v in container["env"]}
        assert refs == {name: {"name": "db-orders", "key": key} for name, key in ORDERS_ENV.items()}
    # The keys the app reads are keys the credentials document really has, on this cloud.
    document = _credentials_document(mocks, "acme-prod-db-orders")
    assert set(DATABASE_KEYS) <= set(document)
    # And the Secret they name is the one delivered into the namespace.
    delivered = {o["metadata"]["name"] for o in objects_of_kind(run, "Secret", "tenant-acme-prod")}
    delivered |= {o["spec"]["target"]["name"] for o in objects_of_kind(run, "ExternalSecret", "tenant-acme-prod")}
    assert "db-orders" in delivered


def _credentials_document(mocks: _CapturingMocks, prefix: str) -> dict[str, Any]:
    """The credentials of one database as the program wrote them (local Secret or cloud secret)."""

    def plain(value: Any) -> Any:
        # A secret input arrives wrapped with its value under "value".
        return value["value"] if isinstance(value, dict) and "value" in value else value

    local = mocks.inputs.get(f"{prefix}-credentials")
    if local is not None and "stringData" in local:
        # The password goes through `data`, base64 (components/clouds/local/passwords.py).
        data = {key: plain(value) for key, value in dict(plain(local.get("data") or {})).items()}
        return {**dict(plain(local["stringData"])), **data}
    version = mocks.inputs[f"{prefix}-credentials-version"]
    text = plain(version.get("secretData", version.get("secretString")))
    return dict(json.loads(text))


@pytest.mark.parametrize("stack", STACKS)
def test_chart_apps_get_database_credentials_through_values_from(
    runs: dict[str, tuple[ProgramRun, _CapturingMocks]], stack: str
) -> None:
    run, _ = runs[stack]
    release = _one(run, "HelmRelease", "tenant-acme-prod", "web")
    assert release["spec"]["valuesFrom"] == [
        {"kind": "Secret", "name": "db-orders", "valuesKey": key, "targetPath": path}
        for key, path in [
            ("host", "database.host"),
            ("port", "database.port"),
            ("database", "database.name"),
            ("username", "database.user"),
            ("password", "database.password"),
        ]
    ]
    # The HelmRelease carries references only, never a credential.
    assert "mock-secret-value" not in json.dumps(release)


def test_chart_apps_without_value_paths_get_every_key_under_tenancy_databases(tmp_path: Path) -> None:
    tenant = tenant_document(
        "shop",
        databases=[{"name": "orders", "engine": "postgres", "version": "16"}],
        apps=[
            {
                "name": "web",
                "chart": {"repository": "https://charts.example.org", "name": "web", "version": "1.0.0"},
                "databases": ["orders"],
            }
        ],
    )
    run = plan("dev", write_tenants(tmp_path, tenant))
    release = _one(run, "HelmRelease", "tenant-shop-dev", "web")
    assert [(v["valuesKey"], v["targetPath"]) for v in release["spec"]["valuesFrom"]] == [
        (key, f"tenancy.databases.orders.{key}") for key in DATABASE_KEYS
    ]
    validate_custom(release)


def test_an_app_limited_to_the_databases_environments_may_use_it(tmp_path: Path) -> None:
    tenant = tenant_document(
        "shop",
        databases=[{"name": "billing", "engine": "mysql", "version": "8.0", "environments": ["prod"]}],
        apps=[
            {
                "name": "invoicer",
                "image": {"repository": "ghcr.io/shop/invoicer", "tag": "1.0.0"},
                "databases": ["billing"],
                "environments": ["prod"],
            }
        ],
    )
    run = plan("dev", write_tenants(tmp_path, tenant))
    (container,) = _one(run, "Deployment", "tenant-shop-prod", "invoicer")["spec"]["template"]["spec"]["containers"]
    assert [v["name"] for v in container["env"]] == [f"DB_BILLING_{key.upper()}" for key in DATABASE_KEYS]
    assert {v["valueFrom"]["secretKeyRef"]["name"] for v in container["env"]} == {"db-billing"}
    assert objects_of_kind(run, "Deployment", "tenant-shop-dev") == []


def test_pods_with_the_identity_are_created_after_their_account(
    runs: dict[str, tuple[ProgramRun, _CapturingMocks]],
) -> None:
    run, _ = runs["prod"]
    (account,) = [
        r
        for r in run.of_type("kubernetes:core/v1:ServiceAccount")
        if r.inputs["metadata"]["name"] == "workload" and r.inputs["metadata"]["namespace"] == "tenant-acme-prod"
    ]
    (worker,) = [r for r in run.of_type("kubernetes:apps/v1:Deployment") if r.name == "acme-prod-app-worker"]
    assert account.urn in worker.dependencies


_IMAGE = {"repository": "ghcr.io/shop/api", "tag": "1.0.0"}
_CHART = {"repository": "https://charts.example.org", "name": "api", "version": "1.0.0"}
_DATABASES = [
    {"name": "orders", "engine": "postgres", "version": "16"},
    {"name": "billing", "engine": "mysql", "version": "8.0", "environments": ["prod"]},
]


def _refused(tmp_path: Path, app: dict[str, Any]) -> list[str]:
    tenant = tenant_document("shop", databases=_DATABASES, apps=[{"name": "other", "image": _IMAGE}, app])
    directory = write_tenants(tmp_path / "tenants", tenant)
    monitor = new_monitor()
    config, secrets = stack_config("dev", {"tenancy:tenantsDir": str(directory)})
    with pytest.raises(ConfigurationError) as raised:
        run_program("dev", config, secrets, monitor=monitor)
    assert monitor.recorded == []
    return [str(p) for p in raised.value.problems]


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        (
            {"name": "api", "image": _IMAGE, "databases": ["payments"]},
            "apps.1.databases.0: 'payments' is not one of the tenant's databases (defined: billing, orders)",
        ),
        (
            {"name": "api", "image": _IMAGE, "databases": ["orders", "billing"]},
            "apps.1.databases.1: database 'billing' does not exist in dev where the app runs (it is in prod)",
        ),
        (
            {"name": "api", "chart": _CHART, "databases": ["billing"], "environments": ["dev"]},
            "apps.1.databases.0: database 'billing' does not exist in dev where the app runs",
        ),
        (
            {"name": "api", "image": _IMAGE, "databases": [{"name": "orders", "values": {"host": "db.host"}}]},
            "apps.1.databases.0.values: value paths apply to chart apps",
        ),
        (
            {"name": "api", "image": _IMAGE, "env": {"DB_ORDERS_HOST": "localhost"}, "databases": ["orders"]},
            "apps.1.databases.0: sets DB_ORDERS_HOST, which the app's env sets too",
        ),
        (
            {
                "name": "api",
                "chart": _CHART,
                "values": {"db": {"password": "hunter2"}},
                "databases": [{"name": "orders", "values": {"password": "db.password"}}],
            },
            "apps.1.databases.0.values.password: 'db.password' is also set in the app's values",
        ),
        (
            {
                "name": "api",
                "chart": _CHART,
                "values": {"tenancy": "off"},
                "databases": ["orders"],
            },
            "apps.1.databases.0: 'tenancy.databases.orders.host' is also set in the app's values",
        ),
        (
            {
                "name": "api",
                "chart": _CHART,
                "databases": [{"name": "orders", "values": {"host": "db", "port": "db.port"}}],
            },
            "apps.1.databases.0.values.port: 'db.port' overlaps 'db', the target of orders.host",
        ),
        (
            {"name": "api", "chart": _CHART, "databases": [{"name": "orders", "values": {"host": "db..host"}}]},
            "apps.1.databases.0.values.host: must be a Helm value path such as 'db.hosts[0].name'",
        ),
        (
            {"name": "api", "chart": _CHART, "databases": [{"name": "orders", "values": {"endpoint": "db.host"}}]},
            "apps.1.databases.0.values.endpoint.[key]: Input should be 'host', 'port', 'database', 'username' or",
        ),
        (
            {"name": "api", "image": _IMAGE, "databases": ["orders", {"name": "orders"}]},
            "apps.1.databases: Value error, names must be unique; repeated: orders",
        ),
        (
            {"name": "api", "image": _IMAGE, "databases": ["Orders"]},
            "apps.1.databases.0.name: must be a database name: a lowercase letter, then",
        ),
    ],
)
def test_bad_database_references_are_refused_and_register_nothing(
    tmp_path: Path, app: dict[str, Any], expected: str
) -> None:
    problems = _refused(tmp_path, app)
    # File and field: `<dir>/shop.yaml: apps.1.databases.0: ...`.
    assert any(p.partition("/shop.yaml: ")[2].startswith(expected) for p in problems), problems
