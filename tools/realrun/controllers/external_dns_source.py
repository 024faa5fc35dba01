"""The pinned external-dns module unpacked for its build, with the run's own provider factory.

Upstream's provider factory (provider/factory/provider.go) imports every DNS provider, and the Go module
proxy refuses the sources of two of their SDKs (github.com/civo/civogo v0.7.3, github.com/exoscale/
egoscale/v3 v3.1.50: "This module version is not available"), so upstream's main does not build here.
`go build -overlay` may not replace a file under GOMODCACHE, so the build uses a copy of the module:
the one that `go mod download` verified against go.sum, in `.realrun/src/`, where that single file is
realrun/external-dns/_overlay/provider/factory/provider.go (the in-memory provider only). Every other
package (flags, sources, registry, plan, controller, the chart) is upstream's as downloaded;
realrun/external-dns/go.mod replaces the module with the copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tools.realrun.binary import Binary

ROOT = Path(__file__).resolve().parents[3]
MODULE = "sigs.k8s.io/external-dns"
VERSION = "v0.23.0"
# external-dns v0.23.0's go.mod says `go 1.27.0`: its build and downloads run this toolchain, which
# the go command fetches from the module proxy (golang.org/toolchain) the first time.
GO_TOOLCHAIN = "go1.27.4"
OVERLAY = ROOT / "realrun/external-dns/_overlay"


def source_dir() -> Path:
    """Where the build's copy of the module is (go.mod's `replace` points here)."""
    return ROOT / ".realrun" / "src" / f"external-dns@{VERSION}"


def downloaded() -> Path:
    """The module as `go mod download` verified it (checksum database and the module's go.sum)."""
    env = {**os.environ, "GOTOOLCHAIN": GO_TOOLCHAIN}
    result = subprocess.run(
        ["go", "mod", "download", "-json", f"{MODULE}@{VERSION}"],
        cwd=ROOT / "realrun",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    folder = str(json.loads(result.stdout or "{}").get("Dir") or "") if result.returncode == 0 else ""
    if not folder:
        raise RuntimeError(f"`go mod download {MODULE}@{VERSION}` failed: {(result.stderr or result.stdout)[-2000:]}")
    return Path(folder)


def prepare(_binary: Binary) -> None:
    """The binary's `prepare` (toolchain.py runs it before `go build`)."""
    unpack()


def unpack() -> Path:
    """A fresh copy of the downloaded module with the overlay's files in place."""
    target = source_dir()
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(downloaded(), target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    for replacement in sorted(OVERLAY.rglob("*.go")):
        destination = target / replacement.relative_to(OVERLAY)
        if not destination.is_file():
            raise RuntimeError(f"{replacement} replaces nothing in {MODULE}@{VERSION}")
        shutil.copyfile(replacement, destination)
    return target
