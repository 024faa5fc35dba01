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

from collections.abc import Sequence
from typing import Any

import pulumi
from pulumi.runtime import settings as runtime_settings

from components.model.checks.legacy_keys import RUNBOOK
from components.model.core.errors import Problem
from components.model.settings.data import DataSettings
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec
from components.vcluster.previous import read_last_outputs


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


def one_identity_tenants(outputs: Any) -> set[str]:
    """Tenants whose last deployment exported one identity for all their environments
    (`tenants.<name>.data.identity.principal` a string; per environment it is a map)."""
    tenants = outputs.get("tenants") if isinstance(outputs, dict) else None
    if not isinstance(tenants, dict):
        return set()
    found: set[str] = set()
    for name, summary in tenants.items():
        data = summary.get("data") if isinstance(summary, dict) else None
        identity = data.get("identity") if isinstance(data, dict) else None
        if isinstance(identity, dict) and isinstance(identity.get("principal"), str):
            found.add(name)
    return found


def last_outputs(purpose: str = "old keys rely on protection") -> Any:
    """This stack's last deployed outputs; {} outside a program run or when the engine cannot say
    (a warning then says what `purpose` falls back to)."""
    if runtime_settings.get_monitor() is None:
        return {}
    try:
        return read_last_outputs()
    except Exception as error:
        pulumi.log.warn(f"could not read this stack's last outputs ({error}); {purpose}")
        return {}


def unlisted_problems(specs: Sequence[TenantSpec], settings: StackSettings, previous: Any = None) -> list[Problem]:
    """Tenants deployed with one key and identity that `tenancy:data.legacyKeys` does not name.

    Without an entry their protected key would be deleted and their instances replaced; the engine
    refuses that with advice to unprotect, which would lose the key. This says what to do instead.
    """
    outputs = last_outputs() if previous is None else previous
    names = {spec.name for spec in specs}
    missing = sorted((one_identity_tenants(outputs) & names) - set(settings.data.legacy_keys))
    return [
        Problem(
            settings.source,
            f"tenancy:data.legacyKeys.{tenant}",
            f"tenant {tenant} was deployed with one key and identity for all its environments; its key is "
            "protected and encrypts its data, so say which environment takes it over: "
            "tenancy key-migration --state <pulumi stack export> --stack <this stack> prints the "
            f"entries ({RUNBOOK})",
        )
        for tenant in missing
    ]
