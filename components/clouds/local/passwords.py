"""Passwords on the local cloud, made without a provider plugin (docs/adr/0040-local-passwords-without-a-provider.md).

On GCP and AWS a password is a `pulumi_random` resource. The local cloud keeps every password in
a Kubernetes Secret only, so it needs no resource of its own: the program draws the value from the
operating system's CSPRNG (`secrets`), hands it over as a Pulumi secret (encrypted in the state,
never printed), and the Secret that holds it ignores later changes to that key. The first `up`
writes the value; every later run draws a new one that the engine discards, so the live password is
never rotated behind a database's back. What this buys: the local stack runs with the Kubernetes
provider alone, which is what the real run (docs/real-run.md) can build here.

The password goes into the Secret's `data` (base64), never `stringData`: the Kubernetes provider's
Check folds `stringData` into `data` in the inputs it records, so an `ignore_changes` path under
`stringData` finds no old value to keep and the engine sees a new password on every run; and any
change to a Secret's data replaces the Secret, which protection refuses. The real run found this
(the second `up` failed to replace `acme-prod-secret-session-key-secret`).
"""

from __future__ import annotations

import base64
import secrets
import string
from collections.abc import Mapping

import pulumi

# No special characters, as `generate_password` on the clouds: survives URIs, env files and shells.
_ALPHABET = string.ascii_letters + string.digits


def program_password(length: int) -> pulumi.Output[str]:
    """A fresh random password as a Pulumi secret (see the module docstring for why it is stable)."""
    return pulumi.Output.secret("".join(secrets.choice(_ALPHABET) for _ in range(length)))


def secret_data(values: Mapping[str, pulumi.Input[str]]) -> dict[str, pulumi.Output[str]]:
    """`data` entries for a Secret: each value base64-encoded, still a Pulumi secret."""
    return {
        key: pulumi.Output.from_input(value).apply(lambda text: base64.b64encode(text.encode()).decode())
        for key, value in values.items()
    }


def written_once(*keys: str) -> list[str]:
    """`ignore_changes` paths for the `data` keys that hold a program password."""
    return [f'data["{key}"]' for key in keys]
