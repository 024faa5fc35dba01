"""Tenant data on AWS: a KMS key per tenant (rotation, alias), RDS encrypted with it, Secrets
Manager under it, and an IAM role the tenant's pods assume (EKS Pod Identity, or IRSA by config).

The role's policy names the tenant's secret path (`tenancy/<tenant>/*`, the `/` ends the tenant
name so `acme` never matches `acme-eu`) and its own key, so one policy per tenant covers every
secret it will ever have, without a grant per secret.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

from components.cloud_settings import AwsSettings
from components.clouds import (
    ENGINE_PORTS,
    WORKLOAD_ACCOUNT,
    DatabaseEndpoint,
    DatabaseRequest,
    Guard,
    SecretRequest,
    TenantIdentity,
    generate_password,
)
from components.data_settings import DataSettings

_CLASSES = {"small": "db.t4g.small", "medium": "db.m7g.large", "large": "db.m7g.xlarge"}
_SECRET_READ = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
SHARED_SECRETS_ACCOUNT = "tenancy-shared-secrets"


def _policy(document: dict[str, Any]) -> str:
    return json.dumps(document, sort_keys=True)


def _trust(settings_aws: AwsSettings, subjects: list[str]) -> str:
    """Who may assume a role: pods of the given service accounts, and ESO's controller.

    Pod Identity: the EKS pod identity agent, plus the External Secrets controller's role (its
    SecretStores assume tenant roles). IRSA: the cluster's OIDC provider for exactly these
    `system:serviceaccount:<ns>:<name>` subjects.
    """
    if settings_aws.identity_mode == "irsa":
        issuer = settings_aws.oidc_issuer or ""
        statements: list[dict[str, Any]] = [
            {
                "Effect": "Allow",
                "Principal": {"Federated": settings_aws.oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {f"{issuer}:aud": "sts.amazonaws.com"},
                    "ForAnyValue:StringEquals": {f"{issuer}:sub": subjects},
                },
            }
        ]
    else:
        statements = [
            {
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            },
            {
                "Effect": "Allow",
                "Principal": {"AWS": settings_aws.secrets_controller_role_arn},
                "Action": "sts:AssumeRole",
            },
        ]
    return _policy({"Version": "2012-10-17", "Statement": statements})


class AwsData:
    """RDS, Secrets Manager, KMS and IAM roles for one stack on AWS."""

    cloud = "aws"

    def __init__(self, settings_aws: AwsSettings, cluster_name: str, data: DataSettings) -> None:
        self._aws = settings_aws
        self._cluster = cluster_name
        self._data = data

    def identity(self, tenant: str, namespaces: list[str], labels: dict[str, str], guard: Guard) -> TenantIdentity:
        # The tenant's key; a deleted key stays recoverable for 30 days (the longest AWS allows).
        key = aws.kms.Key(
            f"{tenant}-key",
            description=f"tenancy tenant {tenant}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=labels,
            opts=guard.data(),
        )
        if guard.release:
            return TenantIdentity(principal=None, key=key.arn)
        # A readable name for the key in the console and in policies.
        aws.kms.Alias(
            f"{tenant}-key-alias", name=f"alias/tenancy/{tenant}", target_key_id=key.key_id, opts=guard.plain()
        )
        subjects = [f"system:serviceaccount:{namespace}:{WORKLOAD_ACCOUNT}" for namespace in namespaces]
        role = aws.iam.Role(
            f"{tenant}-identity",
            description=f"tenancy tenant {tenant}: its own secrets and key, nothing else",
            assume_role_policy=_trust(self._aws, subjects),
            tags=labels,
            opts=guard.plain(),
        )
        secrets_arn = f"arn:aws:secretsmanager:{self._aws.region}:*:secret:tenancy/{tenant}/*"
        aws.iam.RolePolicy(
            f"{tenant}-identity-policy",
            role=role.id,
            policy=key.arn.apply(
                lambda key_arn: _policy(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {"Effect": "Allow", "Action": _SECRET_READ, "Resource": secrets_arn},
                            {"Effect": "Allow", "Action": ["kms:Decrypt", "kms:DescribeKey"], "Resource": key_arn},
                        ],
                    }
                )
            ),
            opts=guard.plain(),
        )
        annotations: pulumi.Output[dict[str, str]] | dict[str, str] = {}
        if self._aws.identity_mode == "irsa":
            annotations = role.arn.apply(lambda arn: {"eks.amazonaws.com/role-arn": arn})
        else:
            # Pod Identity: one association per namespace binds its `workload` account to the role.
            for namespace in namespaces:
                aws.eks.PodIdentityAssociation(
                    f"{tenant}-{namespace}-pod-identity",
                    cluster_name=self._cluster,
                    namespace=namespace,
                    service_account=WORKLOAD_ACCOUNT,
                    role_arn=role.arn,
                    tags=labels,
                    opts=guard.plain(),
                )
        return TenantIdentity(principal=role.arn, key=key.arn, account_annotations=annotations)

    def database(self, request: DatabaseRequest, identity: TenantIdentity, guard: Guard) -> DatabaseEndpoint:
        # MySQL user names are limited to 16 characters.
        username = request.name[:16] if request.engine == "mysql" else request.name
        password = generate_password(f"{request.prefix}-password", 32, guard)
        instance = aws.rds.Instance(
            f"{request.prefix}-instance",
            engine=request.engine,
            engine_version=request.version,
            instance_class=_CLASSES[request.size],
            allocated_storage=request.storage_gb,
            max_allocated_storage=request.storage_gb * 4,
            db_name=request.name,
            username=username,
            password=password,
            # Encrypted at rest with the tenant's key.
            storage_encrypted=True,
            kms_key_id=identity.key,
            db_subnet_group_name=self._aws.db_subnet_group,
            vpc_security_group_ids=self._aws.db_security_group_ids,
            publicly_accessible=False,
            multi_az=request.size == "large",
            # Guards: the API refuses to delete it, a final snapshot is taken if it ever is, and
            # automated backups outlive the instance.
            deletion_protection=True,
            skip_final_snapshot=False,
            final_snapshot_identifier=f"{request.prefix}-final",
            backup_retention_period=self._data.backup_retention_days,
            delete_automated_backups=False,
            copy_tags_to_snapshot=True,
            tags=request.labels,
            opts=guard.data(),
        )
        port = ENGINE_PORTS[request.engine]
        credentials = pulumi.Output.json_dumps(
            {
                "username": username,
                "password": password,
                "host": instance.address,
                "port": str(port),
                "database": request.name,
            }
        )
        remote = f"tenancy/{request.tenant}/{request.environment}/db/{request.name}"
        self.store_secret(
            SecretRequest(
                tenant=request.tenant,
                environment=request.environment,
                namespace=request.namespace,
                name=remote,
                remote_name=remote,
                value=pulumi.Output.secret(credentials),
                labels=request.labels,
                prefix=f"{request.prefix}-credentials",
                namespace_resource=request.namespace_resource,
            ),
            identity,
            guard,
        )
        return DatabaseEndpoint(
            host=instance.address,
            port=port,
            database=request.name,
            username=username,
            credentials=remote,
            # RDS endpoints are DNS names; data.py opens the configured database subnets instead.
            egress_cidrs=[],
            instance=instance.identifier,
        )

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

    def secret_store_provider(self, namespace: str, identity: TenantIdentity) -> dict[str, Any] | None:
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
    import pulumi_kubernetes as k8s

    from components.labels import platform_labels

    subject = f"system:serviceaccount:{data.secrets_operator_namespace}:{SHARED_SECRETS_ACCOUNT}"
    role = aws.iam.Role(
        "shared-secrets-identity",
        description="tenancy: read the shared platform secrets",
        assume_role_policy=_trust(settings_aws, [subject]),
        tags=labels,
        opts=guard.plain(),
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
        k8s.core.v1.ServiceAccount(
            "shared-secrets-account",
            metadata={
                "name": SHARED_SECRETS_ACCOUNT,
                "namespace": data.secrets_operator_namespace,
                "labels": platform_labels(),
                "annotations": role.arn.apply(lambda arn: {"eks.amazonaws.com/role-arn": arn}),
            },
            opts=guard.plain(),
        )
        provider["auth"] = {
            "jwt": {"serviceAccountRef": {"name": SHARED_SECRETS_ACCOUNT, "namespace": data.secrets_operator_namespace}}
        }
    else:
        provider["role"] = role.arn
    return {"aws": provider}
