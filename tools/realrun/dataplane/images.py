"""The probes' images, made here from the binaries the run builds, and served on loopback.

Two images, each one static binary in one layer, packed as `docker save` tarballs: agnhost (the
probes) and pause (the pod sandbox, `gcc -static` from the Kubernetes module's build/pause). They
are imported into the first node's containerd (`ctr -n k8s.io images import`) and pushed from there
to a registry on 127.0.0.1 (Debian's docker-registry, the distribution project's server): the
platform requires `imagePullPolicy: Always` of tenant pods (components/admission/rules/workloads.py),
so every probe really pulls, from loopback, and no rule is relaxed for the run.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tools.realrun.cluster import ControlPlane, free_port
from tools.realrun.dataplane import host
from tools.realrun.toolchain import KUBERNETES_VERSION, module_dir


@dataclass(frozen=True)
class Image:
    """An image of one binary: its name in the registry and the path of the binary inside."""

    name: str
    binary: Path
    entrypoint: str

    def reference(self, registry: str) -> str:
        return f"{registry}/realrun/{self.name}:{KUBERNETES_VERSION}"


def build_pause(out: Path) -> Path:
    """pause, statically linked from the pinned Kubernetes module's build/pause/linux/pause.c."""
    source = module_dir("kubernetes", "k8s.io/kubernetes") / "build/pause/linux/pause.c"
    out.parent.mkdir(parents=True, exist_ok=True)
    host.run(["gcc", "-Os", "-static", "-Wall", "-Werror", f"-DVERSION={KUBERNETES_VERSION}", "-o", str(out),
              str(source)])  # fmt: skip
    return out


def _tar_member(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, io.BytesIO]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, io.BytesIO(data)


def layer_tar(binary: Path, entrypoint: str) -> bytes:
    """One layer holding the binary at `entrypoint`, and /tmp (agnhost writes there)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as layer:
        tmp = tarfile.TarInfo("tmp")
        tmp.type = tarfile.DIRTYPE
        tmp.mode = 0o1777
        layer.addfile(tmp)
        layer.addfile(*_tar_member(entrypoint.lstrip("/"), binary.read_bytes(), 0o755))
    return buffer.getvalue()


def docker_save_tarball(image: Image, reference: str, out: Path) -> Path:
    """The image as `docker save` writes it: manifest.json, the config and one layer tarball."""
    layer = layer_tar(image.binary, image.entrypoint)
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Entrypoint": [image.entrypoint], "User": "65534:65534"},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
            "history": [{"created_by": f"tenancy realrun: {image.binary.name}"}],
        },
        sort_keys=True,
    ).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    layer_name = diff_id.removeprefix("sha256:") + "/layer.tar"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [reference], "Layers": [layer_name]}]).encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w") as tarball:
        for name, data in ((layer_name, layer), (config_name, config), ("manifest.json", manifest)):
            tarball.addfile(*_tar_member(name, data))
    return out


def registry_hosts(folder: Path, registry: str) -> Path:
    """containerd's hosts folder: the run's registry over plain HTTP, on loopback."""
    (folder / registry).mkdir(parents=True, exist_ok=True)
    (folder / registry / "hosts.toml").write_text(
        f'server = "http://{registry}"\n[host."http://{registry}"]\n  capabilities = ["pull", "resolve"]\n'
    )
    return folder


def start_registry(plane: ControlPlane, folder: Path) -> str:
    """The registry on 127.0.0.1 (a free port), storing in the run folder; returns host:port."""
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yml"
    config.write_text(
        "version: 0.1\nlog: {level: warn}\n"
        f"storage: {{filesystem: {{rootdirectory: {folder / 'data'}}}}}\n"
        f"http: {{addr: '127.0.0.1:{port}'}}\n"
    )
    plane.start("registry", ["docker-registry", "serve", str(config)])
    deadline = time.monotonic() + 30
    while True:
        plane.check_alive()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2):
                return f"127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def publish(socket: Path, tarball: Path, reference: str) -> None:
    """Import the tarball into a node's containerd and push it to the run's registry."""
    ctr = ["ctr", f"--address={socket}", "-n", "k8s.io"]
    host.run([*ctr, "images", "import", str(tarball)])
    host.run([*ctr, "images", "push", "--plain-http", reference])
