"""Tenant data on AWS: per tenant environment a KMS key (rotation, alias) and an IAM role that only
that environment's `workload` ServiceAccount assumes (EKS Pod Identity, or IRSA by config); RDS
encrypted with the environment's key (or a database on a shared instance, `shared.py`), Secrets
Manager under it.

The role's policy names the environment's secret path (`tenancy/<tenant>/<environment>/*`) and its
own key, so one policy per environment covers every secret it will ever have, without a grant
per secret.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from components.clouds.aws import engine_rules, subnets
from components.clouds.aws.prerequisites import Prerequisites
from components.clouds.aws.rds import rds_instance
from components.clouds.aws.security_groups import EnvironmentGroups, security_group_policy
from components.clouds.aws.shared import SharedLogins
from components.clouds.aws.trust_rules import chained_actions
from components.clouds.base import (
    WORKLOAD_ACCOUNT,
    DatabaseEgress,
    DatabaseEndpoint,
    DatabaseLogin,
    DatabaseRequest,
    DeliveryTarget,
    Guard,
    PlatformValues,
    SecretRequest,
    TenantIdentity,
    deliver_credentials,
    endpoint_egress,
    generate_password,
)
from components.clouds.eso import SHARED_SECRETS_ACCOUNT, EsoDelivery, shared_secrets_account
from components.clouds.legacy_keys import instance_options, key_options, renamed_options
from components.model.settings.clouds import AwsSettings
from components.model.settings.data import DataSettings

_SECRET_READ = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]


def _policy(document: dict[str, Any]) -> str:
    return json.dumps(document, sort_keys=True)


def _trust(settings_aws: AwsSettings, cluster_name: str, namespaces: list[str], account: str) -> str:
    """Who may assume a role: the ServiceAccount `account` in exactly these namespaces.

    IRSA: the cluster's OIDC provider, for exactly the `system:serviceaccount:<ns>:<account>`
    subjects. Pod Identity: the EKS pod identity agent, only with the session tags EKS sets for
    this cluster, these namespaces and this account (a stray association of the role elsewhere
    gets nothing), plus the External Secrets controller's role (SecretStores assume tenant roles).
    """
    if settings_aws.identity_mode == "irsa":
        issuer = settings_aws.oidc_issuer or ""
        subjects = [f"system:serviceaccount:{namespace}:{account}" for namespace in namespaces]
        statements: list[dict[str, Any]] = [
            {
                "Effect": "Allow",
                "Principal": {"Federated": settings_aws.oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                # `sub` is single-valued: StringEquals with a list matches any of them.
                "Condition": {"StringEquals": {f"{issuer}:aud": "sts.amazonaws.com", f"{issuer}:sub": subjects}},
            }
        ]
    else:
        statements = [
            {
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {
                        "aws:RequestTag/eks-cluster-name": cluster_name,
                        "aws:RequestTag/kubernetes-namespace": namespaces,
                        "aws:RequestTag/kubernetes-service-account": account,
                    }
                },
            },
            {
                "Effect": "Allow",
                "Principal": {"AWS": settings_aws.secrets_controller_role_arn},
                # The controller's Pod Identity session tags are transitive: a chained AssumeRole
                # carries them, so it needs sts:TagSession too (trust_rules.py).
                "Action": chained_actions(settings_aws.identity_mode),
            },
        ]
    return _policy({"Version": "2012-10-17", "Statement": statements})


def trusted_controller(settings_aws: AwsSettings) -> str | None:
    """The External Secrets controller role tenant roles trust (Pod Identity only; IRSA trusts none)."""
    return settings_aws.secrets_controller_role_arn if settings_aws.identity_mode != "irsa" else None


def role_policy(region: str, tenant: str, environment: str, key_arn: str) -> dict[str, Any]:
    """What one tenant environment's role may do: read its environment's secrets (the path
    `tenancy/<tenant>/<environment>/*`; each `/` ends a name, so `acme` never matches `acme-eu` nor
    `dev` `dev-eu`) and decrypt with its environment's key, nothing else."""
    secrets_arn = f"arn:aws:secretsmanager:{region}:*:secret:tenancy/{tenant}/{environment}/*"
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": _SECRET_READ, "Resource": secrets_arn},
            {"Effect": "Allow", "Action": ["kms:Decrypt", "kms:DescribeKey"], "Resource": key_arn},
        ],
    }


class AwsData:
    """RDS, Secrets Manager, KMS and IAM roles for one stack on AWS."""

    data_in_namespaces = False

    def __init__(
        self,
        settings_aws: AwsSettings,
        cluster_name: str,
        data: DataSettings,
        platform: PlatformValues,
        opts: pulumi.ResourceOptions,
    ) -> None:
        self._aws = settings_aws
        self._cluster = cluster_name
        self._data = data
        self._shared = SharedLogins(data, platform, opts)
        self._groups = EnvironmentGroups(settings_aws)
        # DB subnet groups and the trusted controller role: read once per stack before use.
        self._prerequisites = Prerequisites("", opts)
        self.delivery = EsoDelivery(data.refresh_interval, data.shared_secrets, self.secret_store_provider)

    def generated_value(self, name: str, length: int, guard: Guard) -> pulumi.Output[str]:
        return generate_password(name, length, guard)

    def remote_secret_name(self, tenant: str, environment: str, secret: str) -> str:
        # Secrets Manager names may contain `/`: one path per tenant and environment.
        return f"tenancy/{tenant}/{environment}/{secret}"

    def database_egress(self, endpoints: Sequence[DatabaseEndpoint]) -> DatabaseEgress:
        # RDS endpoints are DNS names a NetworkPolicy cannot name: each endpoint carries the CIDRs
        # of the DB subnets it lives in, its environment's own (subnets.py, docs/adr/0017); several
        # instances share them, so each CIDR is opened once.
        egress = endpoint_egress(endpoints)
        return DatabaseEgress(cidrs=list(dict.fromkeys(egress.cidrs)), ports=egress.ports, namespaces=egress.namespaces)

    def database_access(self, target: DeliveryTarget, endpoints: Sequence[DatabaseEndpoint]) -> None:
        # The second lock (docs/adr/0017): the namespace's database clients join its databases'
        # security groups.
        groups = list(dict.fromkeys(group for endpoint in endpoints for group in endpoint.security_groups))
        if groups:
            security_group_policy(target, groups, self._aws)

    def identity(
        self, tenant: str, environment: str, namespace: str | None, labels: dict[str, str], guard: Guard
    ) -> TenantIdentity:
        prefix = f"{tenant}-{environment}"
        # The environment's key; a deleted key stays recoverable for 30 days (the longest AWS allows).
        key = aws.kms.Key(
            f"{prefix}-key",
            description=f"tenancy tenant {tenant} environment {environment}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=labels,
            # A stack deployed before keys were per environment: the old key, moved (legacy_keys.py).
            opts=guard.data(**key_options(self._data, tenant, environment)),
        )
        # A readable name for the key in the console and in policies. It names the retained data too,
        # so it is kept with the key once released (docs/operations.md, released_names.py: a re-used
        # name is refused while it exists; the offboarding deletes it with the key).
        aws.kms.Alias(
            f"{prefix}-key-alias",
            name=f"alias/tenancy/{tenant}/{environment}",
            target_key_id=key.key_id,
            opts=guard.used_by_data(),
        )
        if guard.release or namespace is None:
            return TenantIdentity(principal=None, key=key.arn)
        role = aws.iam.Role(
            f"{prefix}-identity",
            # AWS appends a unique suffix; the prefix only has to be readable (at most 38 characters,
            # where an autonamed `<tenant>-<env>-identity-<random>` could pass IAM's 64).
            name_prefix=f"t-{prefix}"[:37] + "-",
            description=f"tenancy tenant {tenant} environment {environment}: its secrets and key, nothing else",
            assume_role_policy=_trust(self._aws, self._cluster, [namespace], WORKLOAD_ACCOUNT),
            tags=labels,
            # The controller role the trust policy names must exist (prerequisites.py).
            opts=guard.plain(depends_on=self._prerequisites.role(trusted_controller(self._aws))),
        )
        aws.iam.RolePolicy(
            f"{prefix}-identity-policy",
            role=role.id,
            policy=key.arn.apply(lambda key_arn: _policy(role_policy(self._aws.region, tenant, environment, key_arn))),
            opts=guard.plain(),
        )
        annotations: pulumi.Output[dict[str, str]] | dict[str, str] = {}
        if self._aws.identity_mode == "irsa":
            annotations = role.arn.apply(lambda arn: {"eks.amazonaws.com/role-arn": arn})
        else:
            # Pod Identity: the namespace's `workload` account, bound to the environment's role.
            aws.eks.PodIdentityAssociation(
                f"{prefix}-pod-identity",
                cluster_name=self._cluster,
                namespace=namespace,
                service_account=WORKLOAD_ACCOUNT,
                role_arn=role.arn,
                tags=labels,
                # EKS allows one association per namespace and account: the old one is updated.
                opts=guard.plain(**renamed_options(self._data, tenant, f"{tenant}-{namespace}-pod-identity")),
            )
        return TenantIdentity(principal=role.arn, key=key.arn, account_annotations=annotations)

    def database(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> DatabaseEndpoint:
        if request.placement == "shared":
            instance = self._data.shared_instance(request.engine, request.version, request.environment)
            if instance is None:  # catalog.py refuses such a tenant before anything is registered
                raise LookupError(f"no shared {request.engine} {request.version} instance for {request.environment}")
            login = self._shared.login(
                instance, request, guard, subnets.shared(self._aws, self._data.shared_instances[instance])
            )
        else:
            # The environment's own subnets, and its group: only its own pods reach the instance.
            placement = subnets.dedicated(self._aws, request.environment)
            group = self._groups.group(request.tenant, request.environment, request.labels, guard.used_by_data())
            # Cut to the engine's limit (MySQL: 16 characters, engine_rules.py).
            username = engine_rules.master_username(request.engine, request.name)
            password = generate_password(f"{request.prefix}-password", 32, guard)
            rds = rds_instance(
                f"{request.prefix}-instance",
                engine=request.engine,
                version=request.version,
                size=request.size,
                storage_gb=request.storage_gb,
                db_name=request.name,
                username=username,
                password=password,
                # Encrypted at rest with the environment's key.
                kms_key=identity.key,
                security_groups=[group],
                final_snapshot=f"{request.prefix}-final",
                settings_aws=self._aws,
                subnet_group=placement.subnet_group,
                data=self._data,
                tags=request.labels,
                # One still on the tenant's old key keeps it until moved (legacy_keys.py).
                opts=guard.data(
                    depends_on=self._prerequisites.subnet_group(placement.subnet_group),
                    **instance_options(self._data, request.tenant, request.environment, request.name, "kmsKeyId"),
                ),
            )
            # RDS endpoints are DNS names; the egress policy opens the environment's subnets instead.
            login = DatabaseLogin(
                username=username,
                password=password,
                host=rds.address,
                database=request.name,
                instance=rds.identifier,
                egress_cidrs=list(placement.cidrs),
                security_groups=[group],
            )
        remote = f"tenancy/{request.tenant}/{request.environment}/db/{request.name}"
        return deliver_credentials(self, request, identity, guard, login, remote)

    def store_secret(self, request: SecretRequest, identity: TenantIdentity, guard: Guard) -> str:
        secret = aws.secretsmanager.Secret(
            f"{request.prefix}-secret",
            name=request.remote_name,
            kms_key_id=identity.key,
            # Deleting the secret schedules it; it can be restored within the window.
            recovery_window_in_days=self._data.secret_recovery_days,
            tags=request.labels,
            opts=guard.data(),
        )
        if request.value is not None:
            aws.secretsmanager.SecretVersion(
                f"{request.prefix}-version",
                secret_id=secret.id,
                secret_string=request.value,
                opts=guard.data(),
            )
        return request.remote_name

    def secret_store_provider(self, namespace: str, identity: TenantIdentity) -> dict[str, Any]:
        provider: dict[str, Any] = {"service": "SecretsManager", "region": self._aws.region}
        if self._aws.identity_mode == "irsa":
            provider["auth"] = {"jwt": {"serviceAccountRef": {"name": WORKLOAD_ACCOUNT}}}
        else:
            # ESO's controller (Pod Identity) assumes the tenant's role for this store only.
            provider["role"] = identity.principal
        return {"aws": provider}


def shared_store_provider(
    settings_aws: AwsSettings, cluster_name: str, data: DataSettings, labels: dict[str, str], guard: Guard
) -> dict[str, Any]:
    """The platform role the ClusterSecretStore reads shared secrets with: exactly those secrets."""

    trusted = Prerequisites("platform-", guard.plain()).role(trusted_controller(settings_aws))
    role = aws.iam.Role(
        "shared-secrets-identity",
        description="tenancy: read the shared platform secrets",
        assume_role_policy=_trust(
            settings_aws, cluster_name, [data.secrets_operator_namespace], SHARED_SECRETS_ACCOUNT
        ),
        tags=labels,
        opts=guard.plain(depends_on=trusted),
    )
    resources = [
        f"arn:aws:secretsmanager:{settings_aws.region}:*:secret:{shared.remote_key}-*"
        for _, shared in sorted(data.shared_secrets.items())
    ]
    aws.iam.RolePolicy(
        "shared-secrets-policy",
        role=role.id,
        policy=_policy(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": _SECRET_READ, "Resource": resources}]}
        ),
        opts=guard.plain(),
    )
    provider: dict[str, Any] = {"service": "SecretsManager", "region": settings_aws.region}
    if settings_aws.identity_mode == "irsa":
        shared_secrets_account(
            data.secrets_operator_namespace,
            role.arn.apply(lambda arn: {"eks.amazonaws.com/role-arn": arn}),
            guard,
        )
        provider["auth"] = {
            "jwt": {"serviceAccountRef": {"name": SHARED_SECRETS_ACCOUNT, "namespace": data.secrets_operator_namespace}}
        }
    else:
        provider["role"] = role.arn
    return {"aws": provider}
