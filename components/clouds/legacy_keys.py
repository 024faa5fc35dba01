"""Carrying a stack deployed before per-environment keys over without replacing what holds data.

Such a stack has, per tenant, one key (`<tenant>-key`) that encrypts every environment's
instances and secrets, and one identity. `tenancy:data.legacyKeys` names the environment that
takes the old key over: its key resource is the old one under a new name (a Pulumi alias, so the
engine moves it in its state and the cloud object stays), and on GCP it keeps the old CryptoKey
name, which cannot change. Dedicated instances of the other environments listed there keep the
old key (their key cannot change in place on Cloud SQL or RDS) until they are moved
(docs/runbooks/per-environment-keys.md). Identities and bindings hold no data: the old ones go,
new per-environment ones come.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.model.data import DataSettings


def legacy_key_resource(tenant: str) -> str:
    """The Pulumi name the tenant's one key had before keys were per environment."""
    return f"{tenant}-key"


def legacy_gcp_key_name(tenant: str) -> str:
    """The CryptoKey name the tenant's one key had; a CryptoKey is never renamed or deleted."""
    return f"tenant-{tenant}"


def adopts_legacy_key(data: DataSettings, tenant: str, environment: str) -> bool:
    """True for the environment that takes the tenant's old key over."""
    legacy = data.legacy_key(tenant)
    return legacy is not None and legacy.environment == environment


def key_options(data: DataSettings, tenant: str, environment: str) -> dict[str, Any]:
    """Resource options for an environment's key: the adopting one is the old key, moved."""
    if not adopts_legacy_key(data, tenant, environment):
        return {}
    return {"aliases": [pulumi.Alias(name=legacy_key_resource(tenant))]}


def instance_options(
    data: DataSettings, tenant: str, environment: str, database: str, key_property: str
) -> dict[str, Any]:
    """Resource options for a dedicated instance: one still on the old key ignores the key input,
    so the engine keeps the key it has instead of replacing the instance (refused: protected)."""
    if not data.keeps_legacy_key(tenant, environment, database):
        return {}
    return {"ignore_changes": [key_property]}


def renamed_options(data: DataSettings, tenant: str, old_name: str) -> dict[str, Any]:
    """Resource options for a resource of a legacy tenant that existed under another name and
    must be updated, not created beside the old one (an EKS association is unique per account)."""
    if data.legacy_key(tenant) is None:
        return {}
    return {"aliases": [pulumi.Alias(name=old_name)]}
