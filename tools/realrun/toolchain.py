"""The binaries of the real run, built from the pinned Go modules under realrun/ (docs/real-run.md).

Each binary comes from one module whose go.mod pins it (a `tool` line or a `require`), so a version
bump is a reviewed go.mod change. A build is skipped when a stamp beside the binary says it was
built from the same go.mod, go.sum, flags and Go version; and a binary already on PATH at the pinned
version is used as it is (a user with the Pulumi CLI builds no CLI). Go's own module and build
caches make a rebuild of an unchanged module cheap; the stamps make it free.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

# Each package of the run keeps its own list of binaries (docs/real-run.md); `Binary` and the
# Kubernetes version live in binary.py, which every list imports, so nothing here is imported back.
from tools.realrun.binary import KUBERNETES_VERSION as KUBERNETES_VERSION
from tools.realrun.binary import Binary as Binary
from tools.realrun.binary import kubernetes_ldflags as kubernetes_ldflags
from tools.realrun.binary import kubernetes_version_pattern as kubernetes_version_pattern
from tools.realrun.controllers.binaries import BINARIES
from tools.realrun.dataplane.binaries import binaries as dataplane_binaries
from tools.realrun.processes import entry_point

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / "realrun"
BIN = ROOT / ".realrun" / "bin"

# The Kubernetes provider module is served only as a pseudo-version of its v4.25.0 commit
# (github.com/pulumi/pulumi-kubernetes/provider/v4 v4.0.0-20260115033456-f47bc2d6f199); the binary
# reports this version. The Python SDK pin (requirements.txt) is newer: docs/real-run.md#skew.
KUBERNETES_PROVIDER_VERSION = "4.25.0"


class ToolchainError(RuntimeError):
    """What is missing to build the real run's binaries, said so a user can act on it."""


def go_env(*names: str) -> list[str]:
    out = _run(["go", "env", *names], cwd=MODULES)
    return out.splitlines()


def module_version(module: str, path: str) -> str:
    """The version of `path` that realrun/<module>/go.mod selects."""
    return _run(["go", "list", "-m", "-f", "{{.Version}}", path], cwd=MODULES / module).strip()


def module_dir(module: str, path: str) -> Path:
    """Where the version of `path` that realrun/<module>/go.mod selects is unpacked.

    `go mod download`, not `go list -m`: with an empty module cache (a fresh machine) `go list`
    prints no folder for a module nothing has built yet, and the provider's schema would be read
    from a relative path that does not exist."""
    out = _run(["go", "mod", "download", "-json", path], cwd=MODULES / module)
    folder = str(json.loads(out).get("Dir") or "")
    if not folder:
        raise ToolchainError(f"`go mod download {path}` in realrun/{module} gave no folder:\n{out.strip()[-2000:]}")
    return Path(folder)


# kwok's stages (what it does to nodes and pods, and when), as its repository ships them: nodes
# become Ready and keep a heartbeat; pods become Ready, complete, and go when deleted (no kubelet
# would finish a graceful delete, and namespaces could never empty).
KWOK_STAGES = (
    "node/fast/node-initialize.yaml",
    "node/heartbeat/node-heartbeat.yaml",
    "pod/fast/pod-ready.yaml",
    "pod/fast/pod-complete.yaml",
    "pod/fast/pod-delete.yaml",
)


def kwok_stages() -> list[Path]:
    """The stage files of the pinned kwok module (realrun/kwok/go.mod), from the module cache."""
    stages = module_dir("kwok", "sigs.k8s.io/kwok") / "kustomize/stage"
    return [stages / stage for stage in KWOK_STAGES]


def _stamp_provider_schema(binary: Binary) -> None:
    """The provider embeds its schema with the version set (realrun/provider/cmd/stamp-schema)."""
    source = (
        module_dir("provider", "github.com/pulumi/pulumi-kubernetes/provider/v4") / "cmd/pulumi-resource-kubernetes"
    )
    target = MODULES / "provider/cmd/pulumi-resource-kubernetes"
    _run(
        ["go", "run", "./cmd/stamp-schema", KUBERNETES_PROVIDER_VERSION, str(source), str(target)],
        cwd=MODULES / "provider",
    )


def binaries() -> list[Binary]:
    """Every binary the real run needs, in build order (the engine first: it is the longest)."""
    pulumi_version = "3.274.1"
    kube = kubernetes_ldflags()
    kube_minor = kubernetes_version_pattern()
    return [
        Binary(
            "pulumi",
            "pulumi",
            "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",
            (f"-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v{pulumi_version}",),
            ("version",),
            rf"^v{re.escape(pulumi_version)}$",
        ),
        # A module of its own: the provider builds against the pulumi/pkg it pins (v3.215.0), whose
        # codegen types differ from the CLI's v3.274.1 (one module would select one pkg for both).
        Binary(
            "pulumi-resource-kubernetes",
            "provider",
            "./cmd/pulumi-resource-kubernetes",
            (f"-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version={KUBERNETES_PROVIDER_VERSION}",),
            (),
            "",
            _stamp_provider_schema,
        ),
        Binary(
            "kube-apiserver", "kubernetes", "k8s.io/kubernetes/cmd/kube-apiserver", kube, version_pattern=kube_minor
        ),
        Binary(
            "kube-controller-manager",
            "kubernetes",
            "k8s.io/kubernetes/cmd/kube-controller-manager",
            kube,
            version_pattern=kube_minor,
        ),
        Binary(
            "kube-scheduler", "kubernetes", "k8s.io/kubernetes/cmd/kube-scheduler", kube, version_pattern=kube_minor
        ),
        # The e2e scripts (scripts/e2e/can-i.sh, admission.sh) the run replays use kubectl.
        Binary("kubectl", "kubernetes", "k8s.io/kubernetes/cmd/kubectl", kube, ("version", "--client"), kube_minor),
        Binary("etcd", "etcd", "go.etcd.io/etcd/server/v3", version_pattern=r"etcd Version: 3\.6\."),
        Binary("kwok", "kwok", "sigs.k8s.io/kwok/cmd/kwok", version_pattern=r"v0\.8\."),
        *_controllers(),
        *dataplane_binaries(),
    ]


def _controllers() -> list[Binary]:
    """The platform's controllers and what renders their charts (tools/realrun/controllers/binaries.py)."""
    return list(BINARIES)


def _stamp(binary: Binary, go_version: str) -> str:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((MODULES / binary.module / name).read_bytes())
    digest.update("\0".join([binary.package, *binary.ldflags, go_version]).encode())
    if binary.env:  # only when set: the stamps of the other binaries stay as they were
        digest.update("\0".join(f"{k}={v}" for k, v in binary.env).encode())
    # A module with a main of our own (the provider, cert-manager) or files that replace upstream's
    # (external-dns's `_overlay`): that source is part of the build.
    for folder in ("cmd", "_overlay"):
        if (MODULES / binary.module / folder).is_dir():
            for main in sorted((MODULES / binary.module / folder).rglob("*.go")):
                digest.update(main.read_bytes())
    return digest.hexdigest()


def on_path(binary: Binary) -> Path | None:
    """A binary of the same name on PATH (outside our own folder) at the pinned version, if any."""
    if not binary.version_pattern:
        return None
    found = shutil.which(
        binary.name, path=os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != BIN)
    )
    if found is None:
        return None
    try:
        out = subprocess.run([found, *binary.version_args], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(found) if re.search(binary.version_pattern, out, re.MULTILINE) else None


def require_go() -> str:
    """The Go version, or a ToolchainError naming what is missing."""
    if shutil.which("go") is None:
        raise ToolchainError(
            "the real run builds the Pulumi CLI, the Kubernetes provider and the control plane from the Go "
            "modules under realrun/ and needs Go 1.26 or later on PATH (https://go.dev/doc/install); the "
            "offline suite (make test) does not need it"
        )
    return _run(["go", "env", "GOVERSION"], cwd=MODULES).strip()


def build(names: Sequence[str] | None = None, *, log: Callable[[str], None] = print) -> dict[str, Path]:
    """Build (or reuse) every binary; returns where each one is. Raises ToolchainError."""
    go_version = require_go()
    BIN.mkdir(parents=True, exist_ok=True)
    located: dict[str, Path] = {}
    for binary in binaries():
        if names and binary.name not in names:
            continue
        existing = on_path(binary)
        if existing is not None:
            log(f"toolchain: {binary.name}: using {existing} (on PATH at the pinned version)")
            located[binary.name] = existing
            continue
        target = BIN / binary.name
        stamp_file = BIN / f".{binary.name}.stamp"
        stamp = _stamp(binary, go_version)
        if target.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            log(f"toolchain: {binary.name}: up to date ({target.relative_to(ROOT)})")
            located[binary.name] = target
            continue
        log(f"toolchain: {binary.name}: building {binary.package} (realrun/{binary.module}/go.mod)")
        if binary.prepare is not None:
            binary.prepare(binary)
        command = ["go", "build", "-o", str(target)]
        if binary.ldflags:
            command += ["-ldflags", " ".join(binary.ldflags)]
        _run([*command, binary.package], cwd=MODULES / binary.module, stream=True, env=dict(binary.env))
        stamp_file.write_text(stamp)
        located[binary.name] = target
    return located


def _run(command: list[str], *, cwd: Path, stream: bool = False, env: dict[str, str] | None = None) -> str:
    try:
        result = subprocess.run(
            command,
            cwd=cwd,
            text=True,
            capture_output=not stream,
            check=False,
            env={**os.environ, **env} if env else None,
        )
    except FileNotFoundError as error:
        raise ToolchainError(f"{command[0]} is not installed: {error}") from error
    if result.returncode != 0:
        detail = "" if stream else (result.stderr or result.stdout).strip()[-2000:]
        hint = ""
        if "proxy" in detail or "dial tcp" in detail or "403" in detail:
            hint = " (the Go module proxy is not reachable or does not serve a pinned version: set GOPROXY)"
        raise ToolchainError(f"`{' '.join(command)}` failed in {cwd.relative_to(ROOT)}{hint}\n{detail}")
    return result.stdout if not stream else ""


def main(argv: list[str] | None = None) -> int:
    """`tenancy realrun-tools [NAME...]`: build what is missing and say where each binary is."""
    import argparse

    names = [binary.name for binary in binaries()]
    parser = argparse.ArgumentParser(
        prog="tenancy realrun-tools",
        description="Build (or find on PATH at the pinned version) the binaries of the real run from the Go "
        "modules under realrun/, into .realrun/bin; an unchanged pin is not rebuilt (docs/real-run.md).",
    )
    parser.add_argument(
        "names", nargs="*", choices=[[], *names], metavar="NAME", help=f"only these: {', '.join(names)}"
    )
    args = parser.parse_args(argv)

    def build_and_say() -> int:
        try:
            located = build(args.names or None)
        except ToolchainError as error:
            print(f"realrun: {error}", file=sys.stderr)
            return 1
        for name, path in located.items():
            print(f"{name}\t{path}")
        return 0

    # The Go builds it starts are stopped like the run's processes when it is interrupted.
    return entry_point(build_and_say)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
