"""Each tenant environment's cloud identity reaches only that environment's secrets, keys and
databases, computed from every IAM grant of the rendered `prod` (GCP) and `prod-aws` plans
(tests/clouds/identity_reach.py); and the attack: an ExternalSecret in tenant-acme-dev naming a
prod secret passes RBAC and admission but reads nothing, because the dev store's identity has no
grant on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.admission.layers import ACME_ADMIN, ACME_DEV, ACME_PROD, cluster
from tests.clouds.identity_reach import (
    OUTSIDE,
    Identity,
    aws_identities,
    aws_store_identity,
    gcp_identities,
    gcp_store_identity,
    unmodelled,
)
from tests.k8s_schema import validate_custom
from tests.support import EXAMPLE_TENANTS, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, stack_config

_PLANS: dict[str, ProgramRun] = {}
# What a tenant environment's identity reaches besides probes. On GCP no key: only the Cloud SQL and
# Secret Manager service agents use it (least privilege, issue 24); a secret accessor reads
# CMEK-protected secrets without a Cloud KMS role (https://cloud.google.com/secret-manager/docs/cmek).
TENANT_KINDS = {"prod": {"secret", "database"}, "prod-aws": {"key", "secret", "database"}}


def _run(stack: str) -> ProgramRun:
    if stack not in _PLANS:
        _PLANS[stack] = plan(stack, EXAMPLE_TENANTS)
    return _PLANS[stack]


def test_no_gcp_tenant_identity_holds_a_kms_role() -> None:
    run = _run("prod")
    tenant_accounts = {a.name.removesuffix("-identity") for a in run.of_type("gcp:serviceaccount/account:Account")} - {
        "shared-secrets"
    }
    assert tenant_accounts  # acme-dev, acme-prod, ...
    for grant in run.of_type("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember") + run.of_type(
        "gcp:kms/keyRingIAMMember:KeyRingIAMMember"
    ):
        # Only the service agents of Cloud SQL and Secret Manager (platform.py) hold key roles.
        assert grant.name in {"tenancy-sql-agent-keys", "tenancy-secrets-agent-keys"}, grant.name
        assert "@gcp-sa-" in grant.inputs["member"], grant.inputs


def _controller(stack: str) -> str | None:
    config, _ = stack_config(stack)
    value: str | None = json.loads(config.get("tenancy:aws", "{}")).get("secretsControllerRoleArn")
    return value


def _identities(run: ProgramRun) -> dict[str, Identity]:
    return gcp_identities(run) if run.stack == "prod" else aws_identities(run, _controller(run.stack))


def _namespace_owner(run: ProgramRun) -> dict[str, tuple[str, str]]:
    return {
        n["metadata"]["name"]: (
            n["metadata"]["labels"]["tenancy.io/tenant"],
            n["metadata"]["labels"]["tenancy.io/environment"],
        )
        for n in objects_of_kind(run, "Namespace")
        if "tenancy.io/tenant" in n["metadata"].get("labels", {})
    }


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_every_iam_grant_is_modelled(stack: str) -> None:
    assert unmodelled(_run(stack)) == set()


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_each_environment_identity_reaches_only_its_environment(stack: str) -> None:
    run = _run(stack)
    owners = _namespace_owner(run)
    used_from: set[str] = set()
    for identity in _identities(run).values():
        tenant_namespaces = identity.namespaces & owners.keys()
        if not tenant_namespaces:
            # Platform identities (shared secrets) are used from no tenant namespace and reach no
            # tenant's own data.
            assert all(asset.tenant in ("platform", OUTSIDE) for asset in identity.reaches), identity
            continue
        used_from |= tenant_namespaces
        # Used from exactly one tenant namespace, and from nothing else.
        assert identity.namespaces == tenant_namespaces and len(tenant_namespaces) == 1, identity
        [namespace] = tenant_namespaces
        tenant, environment = owners[namespace]
        assert identity.reaches, identity
        strangers = {a for a in identity.reaches if (a.tenant, a.environment) != (tenant, environment)}
        assert strangers == set(), (identity.principal, strangers)
        # It reaches every secret of its environment; on AWS its key too (Secrets Manager decrypts
        # with the caller's `kms:Decrypt`), on GCP no key (the service agents use it, data.py).
        assert {a.kind for a in identity.reaches} >= TENANT_KINDS[stack] - {"database"}
    # Every namespace with a SecretStore has an identity of its own (acme and more, dev and prod).
    stores = {s["metadata"]["namespace"] for s in objects_of_kind(run, "SecretStore")}
    assert {ACME_DEV, ACME_PROD} <= stores <= used_from


@pytest.mark.parametrize("stack", ["prod", "prod-aws"])
def test_acme_dev_reaches_nothing_of_prod_and_prod_nothing_of_dev(stack: str) -> None:
    run = _run(stack)
    by_namespace = {ns: i for i in _identities(run).values() for ns in i.namespaces}
    dev, prod = by_namespace[ACME_DEV], by_namespace[ACME_PROD]
    assert dev is not prod
    for identity, other in ((dev, "prod"), (prod, "dev")):
        assert not {a for a in identity.reaches if a.environment == other}, identity.principal
        kinds = {a.kind for a in identity.reaches} - {"probe"}
        assert kinds == TENANT_KINDS[stack], (identity.principal, kinds)


def _attack_secret(stack: str, key: str) -> dict[str, object]:
    remote: dict[str, object] = {"key": key}
    return {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "stolen", "namespace": ACME_DEV},
        "spec": {
            "secretStoreRef": {"name": "tenancy-secrets", "kind": "SecretStore"},
            "target": {"name": "stolen"},
            "dataFrom": [{"extract": remote}],
        },
    }


@pytest.mark.parametrize(
    ("stack", "prod_key", "dev_key"),
    [
        ("prod", "tenancy_acme_prod_db_orders", "tenancy_acme_dev_db_orders"),
        ("prod-aws", "tenancy/acme/prod/db/orders", "tenancy/acme/dev/db/orders"),
    ],
)
def test_dev_external_secret_naming_a_prod_key_reads_nothing(stack: str, prod_key: str, dev_key: str) -> None:
    run = _run(stack)
    layers = cluster(run)
    stolen, own = _attack_secret(stack, prod_key), _attack_secret(stack, dev_key)
    for external_secret in (stolen, own):
        validate_custom(external_secret)
        # RBAC and admission admit both: a tenant admin may write ExternalSecrets to its own store.
        outcome = layers.attempt(
            ACME_ADMIN, "CREATE", "external-secrets.io/v1/externalsecrets", external_secret, ACME_DEV
        )
        assert outcome.stopped_by is None, outcome.decision.denials
    # What ESO then gets from the cloud: the dev store reads as the dev identity only.
    store = (
        gcp_store_identity(run, ACME_DEV) if stack == "prod" else aws_store_identity(run, ACME_DEV, _controller(stack))
    )
    assert store is not None
    readable = {asset.name for asset in store.reaches if asset.kind == "secret"}
    assert dev_key in readable
    assert prod_key not in readable
    # The prod key itself is readable by the prod store: the attack fails on the grant, not a typo.
    prod_store = (
        gcp_store_identity(run, ACME_PROD)
        if stack == "prod"
        else aws_store_identity(run, ACME_PROD, _controller(stack))
    )
    assert prod_store is not None and prod_key in {a.name for a in prod_store.reaches}


def test_irsa_dev_account_annotated_with_the_prod_role_is_not_trusted(tmp_path: Path) -> None:
    aws = json.loads(stack_config("prod-aws")[0]["tenancy:aws"])
    aws.update(
        identityMode="irsa",
        oidcProviderArn="arn:aws:iam::111122223333:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABC",
        oidcIssuer="oidc.eks.eu-west-1.amazonaws.com/id/ABC",
    )
    tenants = write_tenants(tmp_path, tenant_document("shop", secrets=[{"name": "api-key", "source": "generated"}]))
    run = plan("prod-aws", tenants, aws=json.dumps(aws))
    identities = aws_identities(run, None)
    # Every account name tried in every namespace: only the environment's own `workload` gets in.
    shop = {arn.rsplit("/", 1)[1]: i.namespaces for arn, i in identities.items() if "/shop-" in arn}
    assert shop == {"shop-dev-identity": {"tenant-shop-dev"}, "shop-prod-identity": {"tenant-shop-prod"}}


def test_local_environment_identities_are_its_namespace_accounts() -> None:
    """The local analogue: no cloud principal; each environment's Secrets and databases live in its
    own namespace, so what its identities (its ServiceAccounts, its people) read is decided by
    RBAC per namespace. Nothing in dev reads prod's Secrets, and prod's own accounts do."""
    from tests.rbac import Authorizer, Subject
    from tests.support import kubernetes_objects

    run = plan("dev", EXAMPLE_TENANTS)
    authz = Authorizer(kubernetes_objects(run))
    assert objects_of_kind(run, "Secret", ACME_PROD)
    dev_identities = [ACME_ADMIN] + [
        Subject("ServiceAccount", name, ACME_DEV) for name in ("workload", "deployer", "default")
    ]
    for who in dev_identities:
        for verb in ("get", "list", "watch"):
            assert not authz.allowed(who, verb, "secrets", ACME_PROD), (who, verb)
    assert authz.allowed(Subject("ServiceAccount", "deployer", ACME_PROD), "get", "secrets", ACME_PROD)
