"""Cluster-wide GCP data parts, registered once per stack by the platform part: the key ring and
the service agents' use of it (one grant on the ring instead of two per tenant), shared Cloud SQL
instances, and the identity the ClusterSecretStore reads shared platform secrets with.
"""

from __future__ import annotations

from typing import Any

import pulumi_gcp as gcp

from components.clouds.base import Guard
from components.clouds.eso import SHARED_SECRETS_ACCOUNT, shared_secrets_account
from components.clouds.gcp.data import KEY_USER, SECRET_ACCESSOR, database_version, instance_settings
from components.model.clouds import GcpSettings
from components.model.data import DataSettings, SharedInstance


def platform(settings_gcp: GcpSettings, data: DataSettings, labels: dict[str, str], guard: Guard) -> dict[str, Any]:
    """Register the key ring, the service agents' use of it, and shared instances; return the
    values tenants need (exported by the platform stack, so tenant shards can use them too)."""
    ring = gcp.kms.KeyRing(
        "tenancy-keyring", name=settings_gcp.key_ring, location=settings_gcp.region, opts=guard.data()
    )
    # Cloud SQL and Secret Manager encrypt with tenant keys through their service agents; one grant
    # on the ring covers every tenant key in it (instead of two grants per tenant).
    for service, short in (("sqladmin.googleapis.com", "sql"), ("secretmanager.googleapis.com", "secrets")):
        agent = gcp.projects.ServiceIdentity(f"tenancy-{short}-agent", service=service, opts=guard.plain())
        gcp.kms.KeyRingIAMMember(
            f"tenancy-{short}-agent-keys",
            key_ring_id=ring.id,
            role=KEY_USER,
            member=agent.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=guard.plain(),
        )
    shared = {
        name: _shared_instance(name, instance, data, settings_gcp, labels, guard)
        for name, instance in sorted(data.shared_instances.items())
    }
    return {
        "keyRing": ring.id,
        "sharedInstances": {
            name: {
                "name": instance.name,
                "connectionName": instance.connection_name,
                "privateIp": instance.private_ip_address,
            }
            for name, instance in shared.items()
        },
    }


def _shared_instance(
    name: str,
    instance: SharedInstance,
    data: DataSettings,
    settings_gcp: GcpSettings,
    labels: dict[str, str],
    guard: Guard,
) -> gcp.sql.DatabaseInstance:
    # Google-managed encryption: a shared instance serves several tenants, so no tenant's key fits it.
    return gcp.sql.DatabaseInstance(
        f"shared-{name}",
        database_version=database_version(instance.engine, instance.version),
        region=settings_gcp.region,
        deletion_protection=True,
        settings=instance_settings(instance.engine, instance.size, instance.storage_gb, data, settings_gcp, labels),
        opts=guard.data(),
    )


def shared_store_provider(
    settings_gcp: GcpSettings, cluster_name: str, data: DataSettings, guard: Guard
) -> dict[str, Any]:
    """The platform identity the ClusterSecretStore reads shared secrets with: a GSA allowed to
    read exactly the shared secrets, bound to one Kubernetes ServiceAccount in ESO's namespace."""

    account = gcp.serviceaccount.Account(
        "shared-secrets-identity",
        account_id=SHARED_SECRETS_ACCOUNT,
        display_name="tenancy shared platform secrets",
        opts=guard.plain(),
    )
    gcp.serviceaccount.IAMBinding(
        "shared-secrets-workload-identity",
        service_account_id=account.name,
        role="roles/iam.workloadIdentityUser",
        members=[
            f"serviceAccount:{settings_gcp.project}.svc.id.goog"
            f"[{data.secrets_operator_namespace}/{SHARED_SECRETS_ACCOUNT}]"
        ],
        opts=guard.plain(),
    )
    member = account.email.apply(lambda email: f"serviceAccount:{email}")
    for name, shared in sorted(data.shared_secrets.items()):
        gcp.secretmanager.SecretIamMember(
            f"shared-secret-{name}-reader",
            secret_id=f"projects/{settings_gcp.project}/secrets/{shared.remote_key}",
            role=SECRET_ACCESSOR,
            member=member,
            opts=guard.plain(),
        )
    shared_secrets_account(
        data.secrets_operator_namespace,
        account.email.apply(lambda email: {"iam.gke.io/gcp-service-account": email}),
        guard,
    )
    return {
        "gcpsm": {
            "projectID": settings_gcp.project,
            "auth": {
                "workloadIdentity": {
                    "clusterLocation": settings_gcp.cluster_location or settings_gcp.region,
                    "clusterName": cluster_name,
                    "clusterProjectID": settings_gcp.project,
                    "serviceAccountRef": {"name": SHARED_SECRETS_ACCOUNT, "namespace": data.secrets_operator_namespace},
                }
            },
        }
    }
