"""Real nodes: per node a containerd, a kubelet and a CNI network (bridge + host-local) on a bridge
the run creates, all started through the control plane (`ControlPlane.start`).

One node per pool the probes need, named `real-<pool>`, labelled and tainted as the platform
expects (components/model/core/labels.py) plus a taint of the run's own, `realrun.tenancy.io/probes`,
so that only the probes (which tolerate it) run there: the kwok node of each pool keeps the stack's
other pods, whose images cannot be pulled here. Each node has its own containerd (a kubelet owns
every pod of its runtime) and pod range, 10.245.<index>.0/24, outside kwok's 10.244.0.0/16: the
enforcer finds pods by address. Pods get a route to 10.245.0.0/16 only (no default route), and
the run's iptables rules drop anything between the run's bridges and other interfaces (enforcer.py).
Nothing listens beyond loopback and the node's own address: the kubelet's API on the node address,
its health port and containerd's streaming server on 127.0.0.1, containerd's socket in the run folder.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from components.model.core.labels import pool_node_labels, pool_taint
from tools.realrun.cluster import ControlPlane, free_port
from tools.realrun.dataplane import host
from tools.realrun.kube import plain

PROBE_TAINT = {"key": "realrun.tenancy.io/probes", "value": "true", "effect": "NoSchedule"}
REAL_NODE_LABEL = "realrun.tenancy.io/real"
POD_SUPERNET = "10.245.0.0/16"
BRIDGE_PREFIX = "rrnode"


@dataclass(frozen=True)
class Node:
    """One real node: its name, pool and addresses, and where its runtime keeps its files."""

    name: str
    pool: str
    cost_code: str
    index: int
    folder: Path

    @property
    def bridge(self) -> str:
        return f"{BRIDGE_PREFIX}{self.index}"

    @property
    def address(self) -> str:
        """The node's address, which is also its pods' gateway."""
        return f"10.245.{self.index}.1"

    @property
    def subnet(self) -> str:
        return f"10.245.{self.index}.0/24"

    @property
    def socket(self) -> Path:
        return self.folder / "containerd.sock"

    def labels(self) -> dict[str, str]:
        return {**pool_node_labels(self.pool, self.cost_code), REAL_NODE_LABEL: "true"}

    def taints(self) -> list[dict[str, str]]:
        return [pool_taint(self.pool), PROBE_TAINT]


def plan_nodes(pools: Mapping[str, str], folder: Path) -> list[Node]:
    """A node per pool (pool -> cost code), in a stable order."""
    return [
        Node(f"real-{pool}", pool, cost_code, index, folder / f"real-{pool}")
        for index, (pool, cost_code) in enumerate(sorted(pools.items()))
    ]


def containerd_config(node: Node, sandbox_image: str, registry_hosts: Path) -> str:
    """containerd's config: everything under the node's folder; `restrict_oom_score_adj` because
    root here lacks CAP_SYS_RESOURCE (runc fails with "can't get final child's PID from pipe")."""
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return "\n".join(
        [
            "version = 2",
            f'root = "{node.folder / "root"}"',
            f'state = "{node.folder / "state"}"',
            "[grpc]",
            f'  address = "{node.socket}"',
            "[ttrpc]",
            '  address = ""',
            "[debug]",
            '  address = ""',
            "[metrics]",
            '  address = ""',
            f"[{cri}]",
            "  restrict_oom_score_adj = true",
            # Pods' network namespaces in the node's folder, not /var/run/netns (host.unmount_under).
            "  netns_mounts_under_state_dir = true",
            f'  sandbox_image = "{sandbox_image}"',
            '  stream_server_address = "127.0.0.1"',
            '  stream_server_port = "0"',
            f"[{cri}.cni]",
            f'  bin_dir = "{host.CNI_BIN}"',
            f'  conf_dir = "{node.folder / "cni"}"',
            f"[{cri}.registry]",
            f'  config_path = "{registry_hosts}"',
            "",
        ]
    )


def cni_config(node: Node) -> dict[str, Any]:
    """bridge + host-local: the node's bridge and range; a route to the real pods' range only."""
    return {
        "cniVersion": "1.0.0",
        "name": f"realrun-{node.name}",
        "plugins": [
            {
                "type": "bridge",
                "bridge": node.bridge,
                "isGateway": True,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": node.subnet, "gateway": node.address}]],
                    "routes": [{"dst": POD_SUPERNET}],
                    "dataDir": str(node.folder / "ipam"),
                },
            }
        ],
    }


def kubelet_config(node: Node, ca: Path, port: int, healthz_port: int) -> dict[str, Any]:
    """The kubelet's configuration: cgroupfs on this cgroup v1 host, no QoS cgroups (several
    kubelets share the host's hierarchy and would collect each other's), no image or disk eviction
    (the run is short), its API on the node address only."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": node.address,
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz_port,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca)},
        },
        "authorization": {"mode": "Webhook"},
        "cgroupDriver": "cgroupfs",
        "failCgroupV1": False,
        "cgroupsPerQOS": False,
        "enforceNodeAllocatable": [],
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{node.socket}",
        "podLogsDir": str(node.folder / "pod-logs"),
        "registerWithTaints": node.taints(),
        "evictionHard": {"memory.available": "0%", "nodefs.available": "0%", "imagefs.available": "0%"},
        "imageGCHighThresholdPercent": 100,
        "maxPods": 30,
        "resolvConf": "",
        "serializeImagePulls": False,
        "shutdownGracePeriod": "0s",
        "tlsCertFile": str(node.folder / "pki" / "kubelet.crt"),
        "tlsPrivateKeyFile": str(node.folder / "pki" / "kubelet.key"),
    }


def kubelet_command(binary: Path, node: Node, config: Path, kubeconfig: Path) -> list[str]:
    labels = ",".join(f"{key}={value}" for key, value in sorted(node.labels().items()))
    return [
        str(binary),
        f"--config={config}",
        f"--kubeconfig={kubeconfig}",
        f"--hostname-override={node.name}",
        f"--node-ip={node.address}",
        f"--root-dir={node.folder / 'kubelet'}",
        f"--node-labels={labels}",
        "--v=1",
    ]


def _serving_certificate(node: Node, pki: Path) -> None:
    """The kubelet's serving certificate for its address, signed by the run's CA."""
    folder = node.folder / "pki"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ext").write_text(f"subjectAltName=IP:{node.address},DNS:{node.name}\nextendedKeyUsage=serverAuth\n")
    host.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(folder / "kubelet.key"),
              "-out", str(folder / "kubelet.csr"), "-subj", f"/CN={node.name}"])  # fmt: skip
    host.run(["openssl", "x509", "-req", "-in", str(folder / "kubelet.csr"), "-CA", str(pki / "ca.crt"),
              "-CAkey", str(pki / "ca.key"), "-CAcreateserial", "-out", str(folder / "kubelet.crt"),
              "-days", "2", "-extfile", str(folder / "ext")])  # fmt: skip


def node_kubeconfig(node: Node, pki: Path, server: str) -> Path:
    """The kubelet's own identity, as kubeadm gives it: a client certificate for
    `system:node:<name>` in `system:nodes`, signed by the run's CA. So the API server's Node
    authorizer and NodeRestriction judge the kubelet, and the platform's rules that trust only
    kubelets (`tenancy-pod-status`: pod addresses are set by `system:node:*` only) see a kubelet,
    not the run's administrator (found by the real run: with the admin's kubeconfig every status
    write of a tenant pod was refused there)."""
    folder = node.folder / "pki"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "client.ext").write_text("extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n")
    host.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(folder / "node.key"),
              "-out", str(folder / "node.csr"), "-subj", f"/O=system:nodes/CN=system:node:{node.name}"])  # fmt: skip
    host.run(["openssl", "x509", "-req", "-in", str(folder / "node.csr"), "-CA", str(pki / "ca.crt"),
              "-CAkey", str(pki / "ca.key"), "-CAcreateserial", "-out", str(folder / "node.crt"),
              "-days", "2", "-extfile", str(folder / "client.ext")])  # fmt: skip
    kubeconfig = folder / "kubeconfig"
    kubeconfig.write_text(node_kubeconfig_text(node.name, server, pki / "ca.crt", folder))
    kubeconfig.chmod(0o600)
    return kubeconfig


def node_kubeconfig_text(name: str, server: str, ca: Path, folder: Path) -> str:
    """A kubeconfig that authenticates with the node's client certificate."""
    user = f"system:node:{name}"
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: realrun\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\n"
        f"users:\n- name: {user}\n  user:\n    client-certificate: {folder / 'node.crt'}\n"
        f"    client-key: {folder / 'node.key'}\n"
        f"contexts:\n- name: {name}\n  context:\n    cluster: realrun\n    user: {user}\n"
        f"current-context: {name}\n"
    )


def start_containerd(plane: ControlPlane, node: Node, sandbox_image: str, registry_hosts: Path) -> None:
    """containerd of the node. What its pods leave when it is stopped with them (their rootfs
    and network namespace mounts, all under the node's folder) is unmounted after every process
    has stopped; a network namespace goes with its last mount, and the pod's veth with it."""

    def clear() -> None:
        host.kill_shims_of(node.socket)
        host.unmount_under(node.folder)

    plane.on_stop(f"shims of {node.socket} and mounts under {node.folder}", clear)
    for sub in ("cni", "ipam", "pod-logs", "kubelet"):
        (node.folder / sub).mkdir(parents=True, exist_ok=True)
    (node.folder / "cni" / "10-realrun.conflist").write_text(json.dumps(cni_config(node), indent=2))
    config = node.folder / "containerd.toml"
    config.write_text(containerd_config(node, sandbox_image, registry_hosts))
    plane.start(f"containerd-{node.name}", ["containerd", f"--config={config}"])
    deadline = time.monotonic() + 60
    while not node.socket.exists():
        plane.check_alive()
        if time.monotonic() > deadline:
            raise RuntimeError(f"containerd of {node.name} made no socket in 60 s")
        time.sleep(0.3)


def start_kubelet(plane: ControlPlane, node: Node, binary: Path) -> None:
    pki = plane.folder / "pki"
    _serving_certificate(node, pki)
    config = node.folder / "kubelet.yaml"
    config.write_text(yaml.safe_dump(kubelet_config(node, pki / "ca.crt", free_port(), free_port())))
    kubeconfig = node_kubeconfig(node, pki, plane.server)
    plane.start(f"kubelet-{node.name}", kubelet_command(binary, node, config, kubeconfig))


def wait_ready(plane: ControlPlane, api: client.ApiClient, nodes: Sequence[Node], timeout: float = 180) -> float:
    """Seconds until every node reports Ready."""
    started = time.monotonic()
    core = client.CoreV1Api(api)
    waiting = {node.name for node in nodes}
    while waiting:
        plane.check_alive()
        for name in sorted(waiting):
            try:
                found = plain(api, core.read_node(name))
            except client.ApiException:
                continue
            conditions = {c["type"]: c["status"] for c in found.get("status", {}).get("conditions", [])}
            if conditions.get("Ready") == "True":
                waiting.discard(name)
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"nodes not Ready after {timeout:.0f} s: {sorted(waiting)}")
        time.sleep(1)
    return time.monotonic() - started
