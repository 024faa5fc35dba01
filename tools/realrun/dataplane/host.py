"""The host changes of the data plane, each made with its undo registered on the control plane
(`ControlPlane.on_stop`, run last-in first-out when the run ends, also on failure or SIGTERM).

What the run changes: packages it installs when missing (kept: they are the run's prerequisites, as
Go is); one bridge per real node; the sysctls the kubelet and the CNI bridge plugin set
(`kernel.panic`, `vm.overcommit_memory`, `net.ipv4.ip_forward`, ...), restored to the values read
before; the iptables rules of the run (enforcer.py), undone by restoring the tables saved before
any of them; and the kubelet's fixed log folder (`/var/log/containers`) when it created it.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

# Debian packages the data plane runs (containerd, runc, the CNI plugins, iptables, a registry).
PACKAGES = {
    "containerd": "containerd",
    "runc": "runc",
    "iptables": "iptables",
    "docker-registry": "docker-registry",
}
CNI_BIN = Path("/usr/lib/cni")
CNI_PACKAGE = "containernetworking-plugins"
# Sysctls the kubelet sets when it does not only check them (protectKernelDefaults false:
# pkg/kubelet/cm/container_manager_linux.go setupKernelTunables) and the bridge plugin's forwarding.
SYSCTLS = (
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
    "net.ipv4.ip_forward",
    "net.bridge.bridge-nf-call-iptables",
)
# The kubelet links container logs here whatever its configuration (kubelet's ContainerLogsDir).
KUBELET_LOG_LINKS = Path("/var/log/containers")


class Undoes(Protocol):
    """What host.py needs of the control plane: a place to register undos."""

    def on_stop(self, what: str, undo: Callable[[], None]) -> None: ...


def run(command: Sequence[str], *, check: bool = True, input_text: str | None = None) -> str:
    """Run a host command; a failure raises with its output."""
    result = subprocess.run(list(command), capture_output=True, text=True, input=input_text, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed ({result.returncode}): {result.stderr.strip()[-1500:]}")
    return result.stdout


def missing_packages(which: Callable[[str], str | None] = shutil.which, cni_bin: Path = CNI_BIN) -> list[str]:
    """The Debian packages whose commands are not installed."""
    missing = [package for command, package in PACKAGES.items() if which(command) is None]
    if not (cni_bin / "bridge").exists():
        missing.append(CNI_PACKAGE)
    return missing


def install_packages(log: Callable[[str], None]) -> None:
    """Install what is missing with apt (CI starts on a fresh machine, as root); no service is
    started by them here (no init system), and the run starts its own processes."""
    missing = missing_packages()
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise RuntimeError(f"the data plane needs the packages {missing} and this machine has no apt-get")
    log(f"dataplane: installing {', '.join(missing)}")
    env_prefix = ["env", "DEBIAN_FRONTEND=noninteractive"]
    run([*env_prefix, "apt-get", "install", "-y", "--no-install-recommends", *missing])


def sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def keep_sysctls(plane: Undoes, names: Sequence[str] = SYSCTLS) -> dict[str, str]:
    """Read the sysctls before anything changes them and register their restoration."""
    saved = {name: sysctl_path(name).read_text().strip() for name in names if sysctl_path(name).exists()}

    def restore() -> None:
        for name, value in saved.items():
            if sysctl_path(name).read_text().strip() != value:
                sysctl_path(name).write_text(value + "\n")

    plane.on_stop(f"sysctls {', '.join(saved)}", restore)
    return saved


def set_sysctl(name: str, value: str) -> None:
    """Set a sysctl kept by keep_sysctls (its restoration is already registered)."""
    sysctl_path(name).write_text(value + "\n")


def keep_iptables(plane: Undoes) -> None:
    """Save the filter and mangle tables now and restore them when the run ends: every rule and
    chain the run (or the kubelet) adds goes, whatever failed on the way."""
    saved = {table: run(["iptables-save", "-t", table]) for table in ("filter", "mangle", "nat")}

    def restore() -> None:
        for table, text in saved.items():
            run(["iptables-restore", "-T", table], input_text=text)

    plane.on_stop("iptables filter, mangle and nat tables", restore)


def add_bridge(plane: Undoes, name: str, address: str) -> None:
    """An empty bridge holding `address` (CIDR): the node's address and its pods' gateway."""
    run(["ip", "link", "add", name, "type", "bridge"])

    def delete() -> None:
        run(["ip", "link", "delete", name], check=False)

    plane.on_stop(f"bridge {name}", delete)
    run(["ip", "addr", "add", address, "dev", name])
    run(["ip", "link", "set", name, "up"])


def keep_kubelet_log_links(plane: Undoes) -> None:
    """Remove /var/log/containers at the end if the kubelet creates it now."""
    if KUBELET_LOG_LINKS.exists():
        return
    plane.on_stop(str(KUBELET_LOG_LINKS), lambda: shutil.rmtree(KUBELET_LOG_LINKS, ignore_errors=True))


def mounts_under(folder: Path, mountinfo: str) -> list[str]:
    """Mount points at or below `folder` in /proc/self/mountinfo's text, deepest first."""
    prefix = str(folder.resolve())
    points = [line.split()[4].encode().decode("unicode_escape") for line in mountinfo.splitlines() if line.strip()]
    found = [p for p in points if p == prefix or p.startswith(prefix + "/")]
    return sorted(set(found), key=lambda p: (-p.count("/"), p))


def unmount_under(folder: Path) -> None:
    """Unmount (lazily) everything mounted below `folder`."""
    for point in mounts_under(folder, Path("/proc/self/mountinfo").read_text()):
        run(["umount", "-l", point], check=False)


CGROUP_ROOT = Path("/sys/fs/cgroup")
# Where containerd's runc puts pod containers when the kubelet gives no cgroup parent (cgroupfs,
# no QoS cgroups): <controller>/k8s.io/<container id>.
CONTAINERS_CGROUP = "k8s.io"


def keep_container_cgroups(plane: Undoes, root: Path = CGROUP_ROOT) -> None:
    """After every process stopped, kill what still runs in the containers' cgroups (a container
    whose shim outlived containerd) and remove the cgroups the run created. Only controllers that
    had no such folder before the run are touched."""
    created = [
        c / CONTAINERS_CGROUP for c in sorted(root.iterdir()) if c.is_dir() and not (c / CONTAINERS_CGROUP).exists()
    ]

    def remove() -> None:
        for folder in created:
            if not folder.exists():
                continue
            for procs in folder.rglob("cgroup.procs"):
                for pid in procs.read_text().split():
                    run(["kill", "-KILL", pid], check=False)
            time.sleep(1)  # a killed process leaves its cgroup when it has exited
            for child in sorted((d for d in folder.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
                child.rmdir()
            folder.rmdir()

    plane.on_stop(f"containers' cgroups ({CONTAINERS_CGROUP}) under {root}", remove)


def kill_shims_of(socket: Path, proc: Path = Path("/proc")) -> list[int]:
    """SIGKILL the containerd shims serving `socket` (a node's containerd, in the run folder) that
    outlived it: a shim runs in a session of its own; its command line names the socket."""
    killed = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command and command[0].endswith(b"containerd-shim-runc-v2") and str(socket).encode() in command:
            run(["kill", "-KILL", entry.name], check=False)
            killed.append(int(entry.name))
    return killed
