"""A Kubernetes control plane on loopback, from the binaries of toolchain.py (docs/real-run.md).

etcd, kube-apiserver, kube-controller-manager and kube-scheduler run as they do in a cluster, with
kwok standing in for the kubelets: it keeps the nodes Ready and moves scheduled pods to Running, so
controllers (Deployments, StatefulSets, namespace deletion, garbage collection) behave as they do
for real, but no container ever runs. Everything listens on 127.0.0.1 only. The API server uses
serving certificates from its own throwaway CA, static token authentication, RBAC and the default
admission plugins of its version (ValidatingAdmissionPolicy, MutatingAdmissionPolicy, PodSecurity,
ResourceQuota, LimitRanger among them).
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tools.realrun.processes import RunProcesses, current_owner, stopping

# What the control plane signs and serves; the API server's ClusterIP is the range's first address.
SERVICE_RANGE = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"
POD_RANGE = "10.244.0.0/16"
ADMIN_USER = "realrun-admin"
# The identity Pulumi's Kubernetes provider uses in the run: an administrator, as a deploy identity
# is on a cluster it owns; tenants' identities are impersonated (attacks.py).
KUBECONFIG_CONTEXT = "realrun"
# Nodes kwok keeps alive (kwok's own convention for the nodes it manages).
KWOK_ANNOTATION = "kwok.x-k8s.io/node"


def free_port() -> int:
    """A TCP port nothing listens on now (the kernel picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(folder: Path) -> None:
    """A CA, the API server's serving certificate (loopback and in-cluster names) and the service
    account signing key pair, all of them valid for two days and never reused."""
    folder.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=realrun-ca", cwd=folder)  # fmt: skip
    names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"]
    sans = ",".join([f"IP:127.0.0.1,IP:{SERVICE_IP},DNS:localhost", *(f"DNS:{n}" for n in names)])
    (folder / "serving.ext").write_text(
        f"subjectAltName={sans}\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n"
    )
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "apiserver.key", "-out", "apiserver.csr",
             "-subj", "/CN=kube-apiserver", cwd=folder)  # fmt: skip
    _openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "apiserver.crt", "-days", "2", "-extfile", "serving.ext", cwd=folder)  # fmt: skip
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=folder)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=folder)


def kubeconfig_text(server: str, ca: Path, token: str) -> str:
    """A kubeconfig with one context, `realrun`, authenticating with a bearer token."""
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: realrun\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\n"
        f"users:\n- name: {ADMIN_USER}\n  user:\n    token: {token}\n"
        f"contexts:\n- name: {KUBECONFIG_CONTEXT}\n  context:\n    cluster: realrun\n    user: {ADMIN_USER}\n"
        f"current-context: {KUBECONFIG_CONTEXT}\n"
    )


@dataclass
class ControlPlane:
    """A running control plane: where to reach it and the processes to stop."""

    folder: Path
    server: str
    kubeconfig: Path
    token: str
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _logs: list[IO[bytes]] = field(default_factory=list)
    # What to undo when the run stops (host changes: interfaces, iptables chains, sysctls), with a
    # line saying what each undoes; run last-in first-out after every process has stopped.
    _undo: list[tuple[str, Callable[[], None]]] = field(default_factory=list)
    # Who owns the processes: the entry point's (processes.py: process groups, pid files, signals).
    owner: RunProcesses = field(default_factory=current_owner)

    def start(
        self, name: str, command: list[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.Popen[bytes]:
        """Start a long-lived process of the run (a control-plane part, a controller, a kubelet); it
        is stopped with the control plane, in the reverse order of starting, and with everything else
        the run owns if the run is interrupted (processes.py: a process group of its own and a pid file
        under `.realrun/pids`). Its output goes to `logs/<name>.log`."""
        log = (self.folder / "logs" / f"{name}.log").open("wb")
        self._logs.append(log)
        process = self.owner.start(name, command, env=env, cwd=cwd or self.folder, stdout=log)
        self.processes[name] = process
        return process

    def on_stop(self, what: str, undo: Callable[[], None]) -> None:
        """Register how to undo a host change the run made; done when the control plane stops."""
        self._undo.append((what, undo))

    def check_alive(self) -> None:
        """Raise naming the first component that exited, with the end of its log."""
        for name, process in self.processes.items():
            if process.poll() is not None:
                tail = (self.folder / "logs" / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{tail}")

    def stop(self) -> None:
        """Stop every process (SIGTERM to its group, SIGKILL after processes.GRACE_SECONDS), then run
        the undos. A signal that arrives meanwhile is raised only after the last undo."""
        with stopping():
            self.owner.stop(reversed(list(self.processes.values())))
            for log in self._logs:
                log.close()
            while self._undo:
                what, undo = self._undo.pop()
                try:
                    undo()
                except Exception as error:  # one failed undo must not keep the others from running
                    print(f"realrun: could not undo {what}: {error}", file=sys.stderr)


def _wait_healthy(plane: ControlPlane, url: str, context: ssl.SSLContext | None, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {plane.token}"} if context else {})
    last = ""
    while time.monotonic() < deadline:
        plane.check_alive()
        try:
            with urllib.request.urlopen(request, context=context, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError as error:
            last = str(error)
        time.sleep(0.5)
    raise RuntimeError(f"{what} not healthy after {timeout:.0f} s ({url}): {last}")


@contextlib.contextmanager
def control_plane(folder: Path, binaries: Mapping[str, Path], kwok_stages: list[Path]) -> Iterator[ControlPlane]:
    """Start the control plane in `folder` (made anew) and stop it on the way out; a signal reaches the
    block as processes.RunInterrupted, under the entry point (processes.entry_point)."""
    yield from _started_control_plane(folder, binaries, kwok_stages)


def _started_control_plane(
    folder: Path, binaries: Mapping[str, Path], kwok_stages: list[Path]
) -> Iterator[ControlPlane]:
    pki = folder / "pki"
    make_pki(pki)
    (folder / "logs").mkdir(exist_ok=True)
    token = secrets.token_hex(24)
    (pki / "tokens.csv").write_text(f'{token},{ADMIN_USER},{ADMIN_USER},"system:masters"\n')
    etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
    server = f"https://127.0.0.1:{api_port}"
    kubeconfig = folder / "kubeconfig"
    kubeconfig.write_text(kubeconfig_text(server, pki / "ca.crt", token))
    kubeconfig.chmod(0o600)
    plane = ControlPlane(folder=folder, server=server, kubeconfig=kubeconfig, token=token)
    try:
        etcd = f"http://127.0.0.1:{etcd_port}"
        peer = f"http://127.0.0.1:{peer_port}"
        plane.start("etcd", [str(binaries["etcd"]), "--name=realrun", f"--data-dir={folder / 'etcd'}",
                             f"--listen-client-urls={etcd}", f"--advertise-client-urls={etcd}",
                             f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
                             f"--initial-cluster=realrun={peer}", "--listen-metrics-urls=",
                             # A throwaway store: durability buys nothing here and fsync costs minutes.
                             "--unsafe-no-fsync=true", "--log-level=warn"])  # fmt: skip
        _wait_healthy(plane, f"{etcd}/health", None, "etcd", 60)
        plane.start("kube-apiserver", [str(binaries["kube-apiserver"]), f"--etcd-servers={etcd}",
                                       "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
                                       f"--secure-port={api_port}",
                                       f"--tls-cert-file={pki / 'apiserver.crt'}",
                                       f"--tls-private-key-file={pki / 'apiserver.key'}",
                                       f"--client-ca-file={pki / 'ca.crt'}",
                                       f"--token-auth-file={pki / 'tokens.csv'}",
                                       "--authorization-mode=Node,RBAC",
                                       # The default plugins of this version, plus the one kubeadm adds.
                                       "--enable-admission-plugins=NodeRestriction",
                                       "--allow-privileged=true",
                                       f"--service-cluster-ip-range={SERVICE_RANGE}",
                                       "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                                       f"--service-account-key-file={pki / 'sa.pub'}",
                                       f"--service-account-signing-key-file={pki / 'sa.key'}",
                                       "--profiling=false",
                                       # Real kubelets (dataplane/nodes.py): reach a node by the address it
                                       # reports, never by resolving its name through the machine's resolver.
                                       "--kubelet-preferred-address-types=InternalIP"])  # fmt: skip
        context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        _wait_healthy(plane, f"{server}/readyz", context, "kube-apiserver", 180)
        plane.start("kube-controller-manager", [str(binaries["kube-controller-manager"]),
                                                f"--kubeconfig={kubeconfig}",
                                                f"--authentication-kubeconfig={kubeconfig}",
                                                f"--authorization-kubeconfig={kubeconfig}",
                                                "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
                                                "--leader-elect=false",
                                                f"--service-account-private-key-file={pki / 'sa.key'}",
                                                f"--root-ca-file={pki / 'ca.crt'}",
                                                f"--cluster-cidr={POD_RANGE}",
                                                f"--service-cluster-ip-range={SERVICE_RANGE}",
                                                "--use-service-account-credentials=true",
                                                "--controllers=*"])  # fmt: skip
        plane.start("kube-scheduler", [str(binaries["kube-scheduler"]), f"--kubeconfig={kubeconfig}",
                                       f"--authentication-kubeconfig={kubeconfig}",
                                       f"--authorization-kubeconfig={kubeconfig}",
                                       "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
                                       "--leader-elect=false"])  # fmt: skip
        plane.start("kwok", [str(binaries["kwok"]), f"--kubeconfig={kubeconfig}", "--manage-all-nodes=false",
                             f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
                             f"--cidr={POD_RANGE}", "--node-ip=127.0.0.1",
                             f"--server-address=127.0.0.1:{free_port()}",
                             *(f"--config={stage}" for stage in kwok_stages)])  # fmt: skip
        yield plane
    finally:
        plane.stop()


def node_manifest(name: str, labels: Mapping[str, str], taints: list[dict[str, str]]) -> dict[str, Any]:
    """A Node kwok keeps Ready, with a kind node's capacity and the given labels and taints."""
    capacity = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "500Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {KWOK_ANNOTATION: "fake"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **labels,
            },
        },
        "spec": {"taints": taints},
        "status": {"allocatable": capacity, "capacity": capacity},
    }
