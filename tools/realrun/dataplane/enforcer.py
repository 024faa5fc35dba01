"""The NetworkPolicy enforcer of the real nodes: kube-network-policies v0.8.0, unmodified, and the
run's iptables rules that hand it the first packet of every connection between real pods.

Why this enforcer and not a patched one: its verdicts (`evaluatePacket`: the source pod's egress
policies, then the destination pod's ingress policies, from its informers) do not depend on the
node it runs on, so one process judges every pod of every real node; what this kernel lacks is the
nftables `queue` expression its own rules use (its nftables transaction fails as a whole, "netlink
receive: no such file or directory", and leaves nothing). The iptables NFQUEUE target works here,
so the run writes the equivalent rules (`forward_rules`): established and related packets pass,
new ones between the run's bridges go to its queue without bypass (no verdict, no packet: enforcement
cannot silently fail open), and anything between a run bridge and another interface is dropped.
Unlike its own rules, host processes' traffic to pods is not judged (it never crosses FORWARD);
upstream exempts only root's, and the run's only host clients (the kubelets' probes, the run's
/dial requests) are root's.

It reads only in-cluster credentials: it runs in a private mount namespace whose /run is a tmpfs
holding its ServiceAccount token and the run's CA (`unshare`), with its upstream RBAC
(install.yaml of the pinned module). Its metrics listen on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from tools.realrun.cluster import ControlPlane, free_port
from tools.realrun.dataplane import host
from tools.realrun.dataplane.nodes import BRIDGE_PREFIX
from tools.realrun.kube import dynamic, plain
from tools.realrun.toolchain import module_dir

QUEUE = 100
CHAIN = "REALRUN-PODS"
INPUT_CHAIN = "REALRUN-PODS-IN"
SERVICE_ACCOUNT = ("kube-system", "kube-network-policies")


def forward_rules(queue: int = QUEUE, bridges: str = f"{BRIDGE_PREFIX}+") -> list[list[str]]:
    """The filter rules, in order: chain, then the jumps from FORWARD and INPUT (first rules)."""
    return [
        ["-N", CHAIN],
        ["-A", CHAIN, "-i", bridges, "-o", bridges, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED",
         "-j", "ACCEPT"],
        ["-A", CHAIN, "-i", bridges, "-o", bridges, "-j", "NFQUEUE", "--queue-num", str(queue)],
        ["-A", CHAIN, "-i", bridges, "-j", "DROP"],
        ["-A", CHAIN, "-o", bridges, "-j", "DROP"],
        ["-N", INPUT_CHAIN],
        ["-A", INPUT_CHAIN, "-i", bridges, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
        ["-A", INPUT_CHAIN, "-i", bridges, "-j", "DROP"],
        ["-I", "FORWARD", "1", "-j", CHAIN],
        ["-I", "INPUT", "1", "-j", INPUT_CHAIN],
    ]  # fmt: skip


def install_rules() -> None:
    """Write the rules (their removal is the iptables restore host.keep_iptables registered)."""
    for rule in forward_rules():
        host.run(["iptables", "-t", "filter", "-w", *rule])


def upstream_rbac() -> list[dict[str, Any]]:
    """The ClusterRole, its binding and the ServiceAccount from the pinned module's install.yaml."""
    source = module_dir("netpol", "sigs.k8s.io/kube-network-policies") / "install.yaml"
    kinds = {"ClusterRole", "ClusterRoleBinding", "ServiceAccount"}
    return [doc for doc in yaml.safe_load_all(source.read_text()) if doc and doc.get("kind") in kinds]


def credentials(api: client.ApiClient, folder: Path, ca: Path) -> Path:
    """Its RBAC applied and a token for its ServiceAccount, with the CA, in `folder`."""
    for obj in upstream_rbac():
        resource = dynamic(api).resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        resource.create(body=obj, namespace=obj["metadata"].get("namespace"))
    namespace, name = SERVICE_ACCOUNT
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=7200))
    token = plain(api, client.CoreV1Api(api).create_namespaced_service_account_token(name, namespace, request))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "token").write_text(str(token["status"]["token"]))
    (folder / "ca.crt").write_bytes(ca.read_bytes())
    (folder / "token").chmod(0o600)
    return folder


# Inside the private mount namespace: a tmpfs over /run (/var/run) with the in-cluster files.
_MOUNT_SCRIPT = (
    "mount -t tmpfs -o size=1m,mode=0755 realrun-enforcer /run && "
    "mkdir -p /run/secrets/kubernetes.io/serviceaccount && "
    'cp "$REALRUN_CREDENTIALS/token" "$REALRUN_CREDENTIALS/ca.crt" /run/secrets/kubernetes.io/serviceaccount/ && '
    'exec "$@"'
)


def command(binary: Path, node_name: str, metrics_port: int) -> list[str]:
    return [
        "unshare", "--mount", "--propagation", "private", "sh", "-c", _MOUNT_SCRIPT, "enforcer",
        str(binary), f"--nfqueue-id={QUEUE}", f"--metrics-bind-address=127.0.0.1:{metrics_port}",
        f"--hostname-override={node_name}", "--disable-nri", "--netfilter-bug-1766-fix=false",
        "--fail-open=false", "--v=2",
    ]  # fmt: skip


def start(plane: ControlPlane, api: client.ApiClient, binary: Path, node_name: str, folder: Path) -> None:
    """Its credentials, its rules, then the process (the queue has a reader before pods talk)."""
    creds = credentials(api, folder, plane.folder / "pki" / "ca.crt")
    port = int(plane.server.rsplit(":", 1)[1])
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": str(port),
        "REALRUN_CREDENTIALS": str(creds),
    }
    plane.start("kube-network-policies", command(binary, node_name, free_port()), env=env)
    install_rules()
