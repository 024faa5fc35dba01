"""Passwords on the local cloud, made without a provider plugin (docs/adr/0040-local-passwords-without-a-provider.md).

On GCP and AWS a password is a `pulumi_random` resource. The local cloud keeps every password in
a Kubernetes Secret only, so it needs no resource of its own: the program draws the value from the
operating system's CSPRNG (`secrets`), hands it over as a Pulumi secret (encrypted in the state,
never printed), and the Secret that holds it ignores later changes to that key. The first `up`
writes the value; every later run draws a new one that the engine discards, so the live password is
never rotated behind a database's back. What this buys: the local stack runs with the Kubernetes
provider alone, which is what the real run (docs/real-run.md) can build here.
"""

from __future__ import annotations

import secrets
import string

import pulumi

# No special characters, as `generate_password` on the clouds: survives URIs, env files and shells.
_ALPHABET = string.ascii_letters + string.digits


def program_password(length: int) -> pulumi.Output[str]:
    """A fresh random password as a Pulumi secret (see the module docstring for why it is stable)."""
    return pulumi.Output.secret("".join(secrets.choice(_ALPHABET) for _ in range(length)))


def written_once(*keys: str) -> list[str]:
    """`ignore_changes` paths for the `stringData` keys that hold a program password."""
    return [f'stringData["{key}"]' for key in keys]
