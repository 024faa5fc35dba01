"""One binary of the real run and the pinned Kubernetes version its builds stamp in (toolchain.py
builds them; each package of the run lists its own)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

KUBERNETES_VERSION = "v1.36.3"


@dataclass(frozen=True)
class Binary:
    """One binary of the real run: where it is built from and how a matching one is recognised."""

    name: str
    module: str  # folder under realrun/
    package: str  # Go package path (or ./cmd/... inside the module)
    ldflags: tuple[str, ...] = ()
    # Arguments that print the version of a binary found on PATH, and the pattern it must match.
    version_args: tuple[str, ...] = ("--version",)
    version_pattern: str = ""
    prepare: Callable[[Binary], None] | None = field(default=None, compare=False)
    # Environment of the build, e.g. CGO_ENABLED=0 for a binary that runs alone in an image.
    env: tuple[tuple[str, str], ...] = ()


def kubernetes_ldflags() -> tuple[str, ...]:
    """Without these the binaries report v0.0.0-master, and clients that read /version (the
    Kubernetes provider among them) would judge the server by a version it is not."""
    major, minor, _ = KUBERNETES_VERSION.lstrip("v").split(".")
    base = "k8s.io/component-base/version"
    return (
        f"-X {base}.gitVersion={KUBERNETES_VERSION}",
        f"-X {base}.gitMajor={major}",
        f"-X {base}.gitMinor={minor}",
        f"-X {base}.gitTreeState=clean",
    )


def kubernetes_version_pattern() -> str:
    """What a Kubernetes binary of the pinned minor prints in its version."""
    return re.escape(".".join(KUBERNETES_VERSION.split(".")[:2]))
