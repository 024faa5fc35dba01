"""The platform's key ring is its own: never the ring that holds the stack's state key.

Cloud KMS key rings can never be deleted, so a name once taken in a project and location stays
taken (pulumi-gcp 10.2.0, `pulumi_gcp/kms/key_ring.py`: "KeyRings cannot be deleted from Google
Cloud Platform. Destroying a provider-managed KeyRing will remove it from state but will not delete
the resource from the project"; https://cloud.google.com/kms/docs/delete-kms-resources deletes keys
and key versions only). Keys inherit the grants of their ring
(https://cloud.google.com/kms/docs/object-hierarchy, "Key ring"). The stack's secrets provider key
(`secretsprovider: gcpkms://projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>` in
`Pulumi.<stack>.yaml`, docs/ci.md) lives in a ring created before `pulumi stack init`; a program
that creates a ring of the same name fails with 409 ALREADY_EXISTS on its first `up`, and grants on
that ring would reach the state key too. `tenancy:gcp.keyRing` must therefore name another ring
(docs/adr/0016-own-key-ring.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from components.model.core.errors import Problem
from components.model.core.yaml_text import load_yaml
from components.model.settings.clouds import GcpSettings

# The gcpkms secrets provider URL, as `pulumi stack init --secrets-provider` writes it
# (https://www.pulumi.com/docs/iac/concepts/secrets/#cloud-key-management-service-kms).
_GCPKMS = re.compile(r"^gcpkms://projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/keyRings/(?P<ring>[^/?]+)/")


def state_key_ring(secrets_provider: str | None) -> tuple[str, str, str] | None:
    """(project, location, ring) of a `gcpkms://` secrets provider; None for any other provider."""
    match = _GCPKMS.match(secrets_provider or "")
    if match is None:
        return None
    return match["project"], match["location"], match["ring"]


def secrets_provider(stack_file: Path) -> str | None:
    """The `secretsprovider` a stack file names, or None (no file, passphrase, service backend)."""
    if not stack_file.is_file():
        return None
    document = load_yaml(stack_file.read_text(encoding="utf-8")) or {}
    value = document.get("secretsprovider") if isinstance(document, dict) else None
    return value if isinstance(value, str) else None


def key_ring_problems(gcp: GcpSettings, source: str) -> list[Problem]:
    """`tenancy:gcp.keyRing` naming the ring of the stack's own secrets provider: refused. `source`
    is the stack file (`Pulumi.<stack>.yaml`, relative to the project directory the program runs in)."""
    state = state_key_ring(secrets_provider(Path(source)))
    if state is None or state != (gcp.project, gcp.region, gcp.key_ring):
        return []
    return [
        Problem(
            source,
            "tenancy:gcp.keyRing",
            f"{gcp.key_ring!r} is the key ring of this stack's secrets provider (secretsprovider); the program "
            "creates its own ring for tenant keys, and a key ring can never be deleted or created twice, so the "
            "first `up` would fail with 409 and grants on the ring would reach the state key: name another ring "
            "(docs/adr/0016-own-key-ring.md)",
        )
    ]
