"""Cluster-wide GCP data parts, registered once per stack by the platform part: the key ring and
the service agents' use of it (one grant on the ring instead of two per tenant), shared Cloud SQL
instances with their admin logins, and the identity the ClusterSecretStore reads shared platform
secrets with.

A shared instance's admin login is a built-in Cloud SQL user with a `pulumi_random` password: it
is the login the SQL providers of sql_logins.py create each tenant's role and database with (users
created through the Cloud SQL API join `cloudsqlsuperuser`, so tenants never get one; ADR 0015).
Its credentials live in Secret Manager under the platform's name, which no tenant's name can take
(`platform` is a reserved tenant name) and no tenant identity may read; stacks read them back by
the version id the platform exports, so the export carries no secret.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.clouds.base import Guard, generate_password
from components.clouds.eso import SHARED_SECRETS_ACCOUNT, shared_secrets_account
from components.clouds.gcp.data import KEY_USER, SECRET_ACCESSOR, database_version, instance_settings
from components.clouds.gcp.disk_size import deployed, disk, disk_options
from components.clouds.gcp.name_rules import cloud_sql_instance_name
from components.clouds.legacy_keys import last_outputs
from components.clouds.sql_logins import ADMIN_USER, admin_document
from components.model.settings.clouds import GcpSettings
from components.model.settings.data import DataSettings, SharedInstance


def platform(settings_gcp: GcpSettings, data: DataSettings, labels: dict[str, str], guard: Guard) -> dict[str, Any]:
    """Register the key ring, the service agents' use of it, and shared instances; return the
    values tenants need (exported by the platform stack, so tenant shards can use them too)."""
    # Kept like the grants on it (a ring is never deleted in the cloud anyway, key_ring.py).
    ring = gcp.kms.KeyRing(
        "tenancy-keyring", name=settings_gcp.key_ring, location=settings_gcp.region, opts=guard.data_access()
    )
    # Cloud SQL and Secret Manager encrypt with tenant keys through their service agents; one grant
    # on the ring covers every tenant key in it (instead of two grants per tenant).
    grants: list[gcp.kms.KeyRingIAMMember] = []
    for service, short in (("sqladmin.googleapis.com", "sql"), ("secretmanager.googleapis.com", "secrets")):
        # Never destroyed in the cloud ("destroyed ... a no-op", pulumi_gcp projects/service_identity.py).
        agent = gcp.projects.ServiceIdentity(f"tenancy-{short}-agent", service=service, opts=guard.data_access())
        grant = gcp.kms.KeyRingIAMMember(
            f"tenancy-{short}-agent-keys",
            key_ring_id=ring.id,
            role=KEY_USER,
            member=agent.email.apply(lambda email: f"serviceAccount:{email}"),
            # Every tenant's instances and secrets under the ring are readable only while this
            # grant stands: kept whatever happens to it in the program (Guard.data_access).
            opts=guard.data_access(),
        )
        grants.append(grant)
    # What the stack deployed last: the shared instances' names and sizes (disk_size.py).
    previous = (
        last_outputs("a raised storageGb waits for the next run that can read them") if data.shared_instances else {}
    )
    shared = {
        name: _shared_instance(
            name,
            instance,
            data,
            settings_gcp,
            labels,
            guard,
            deployed(previous, "platform", "data", "sharedInstances", name),
        )
        for name, instance in sorted(data.shared_instances.items())
    }
    return {
        # The ring once its service agents may use its keys: every tenant key is made in it, so
        # each instance and secret under a tenant key waits for the grants (else the first `up`
        # races them: "insufficient permission to use KMS key"; tools/plan/engine_rules.py).
        "keyRing": pulumi.Output.all(ring.id, *(grant.id for grant in grants)).apply(lambda ids: ids[0]),
        "sharedInstances": {
            name: {
                "name": instance.name,
                "connectionName": instance.connection_name,
                "privateIp": instance.private_ip_address,
                "adminSecretVersion": _admin(
                    name, data.shared_instances[name].engine, instance, settings_gcp, data, labels, guard
                ),
                # What it was asked for, so the next run knows a raise (disk_size.py).
                "storageGb": data.shared_instances[name].storage_gb,
            }
            for name, instance in shared.items()
        },
    }


def admin_secret_id(instance: str) -> str:
    """The Secret Manager id of a shared instance's admin credentials (outside every tenant's names:
    those are `tenancy_<tenant>_...` and `platform` is no tenant's name)."""
    return f"tenancy_platform_db_{instance}_admin"


def _admin(
    name: str,
    engine: str,
    instance: gcp.sql.DatabaseInstance,
    settings_gcp: GcpSettings,
    data: DataSettings,
    labels: dict[str, str],
    guard: Guard,
) -> pulumi.Output[str]:
    """The instance's admin login and its credentials in Secret Manager; returns the version's id."""
    password = generate_password(f"shared-{name}-admin-password", 32, guard)
    # BUILT_IN: a password login the SQL providers can use; ABANDON: never dropped from the instance.
    gcp.sql.User(
        f"shared-{name}-admin-user",
        name=ADMIN_USER,
        instance=instance.name,
        type="BUILT_IN",
        password=password,
        deletion_policy="ABANDON",
        opts=guard.data(),
    )
    secret = gcp.secretmanager.Secret(
        f"shared-{name}-admin",
        secret_id=admin_secret_id(name),
        labels=labels,
        # Google-managed encryption, like the instance it opens: no tenant's key fits either.
        replication={"user_managed": {"replicas": [{"location": settings_gcp.region}]}},
        deletion_protection=True,
        version_destroy_ttl=f"{data.secret_recovery_days * 86400}s",
        opts=guard.data(),
    )
    version = gcp.secretmanager.SecretVersion(
        f"shared-{name}-admin-version",
        secret=secret.id,
        secret_data=admin_document(engine, instance.private_ip_address, password, instance.connection_name),
        # Replaced versions are disabled, not destroyed: break-glass keeps the old password.
        deletion_policy="DISABLE",
        opts=guard.data(),
    )
    return version.id


def _shared_instance(
    name: str,
    instance: SharedInstance,
    data: DataSettings,
    settings_gcp: GcpSettings,
    labels: dict[str, str],
    guard: Guard,
    deployed_entry: dict[str, Any],
) -> gcp.sql.DatabaseInstance:
    disk_spec = disk(
        instance.storage_gb,
        data.storage_growth_factor,
        deployed_entry,
        settings_gcp.project,
        guard.plain(),
        always_read=True,
    )
    # Google-managed encryption: a shared instance serves several tenants, so no tenant's key fits it.
    return gcp.sql.DatabaseInstance(
        f"shared-{name}",
        # None: Pulumi's auto-name; past Cloud SQL's limit, a shortened one (name_rules.py).
        name=cloud_sql_instance_name(f"shared-{name}", settings_gcp.project),
        database_version=database_version(instance.engine, instance.version),
        region=settings_gcp.region,
        deletion_protection=True,
        settings=instance_settings(instance.engine, instance.size, disk_spec, data, settings_gcp, labels),
        # Cloud SQL grows the disk itself, unless the stack raised it (disk_size.py).
        opts=guard.data(**disk_options({}, disk_spec)),
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
        # The secret is the platform team's, made out of band with its value (docs/runbooks/gke.md,
        # "Shared secrets"): nothing here creates it. Reading it first turns a missing one into a
        # preview error naming it, instead of a 404 from the grant in the middle of the first `up`.
        secret_id = f"projects/{settings_gcp.project}/secrets/{shared.remote_key}"
        existing = gcp.secretmanager.Secret.get(f"shared-secret-{name}", secret_id, opts=guard.plain())
        gcp.secretmanager.SecretIamMember(
            f"shared-secret-{name}-reader",
            secret_id=secret_id,
            role=SECRET_ACCESSOR,
            member=member,
            opts=guard.plain(depends_on=[existing]),
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
