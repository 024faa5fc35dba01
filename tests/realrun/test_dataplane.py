"""The real run's data plane, offline: probe manifests, the documented model of the matrix and its
comparison, the host-change bookkeeping and what the nodes, CNI and enforcer are configured with
(tools/realrun/dataplane/). The live part is `make realrun`."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.admission.layers import WRITERS, Cluster, cluster
from tests.rbac import UserInfo
from tools.plan.harness import ProgramRun
from tools.realrun.dataplane import enforcer, host, images, matrix, nodes
from tools.realrun.dataplane.probes import (
    OPERATOR_WRITTEN,
    OTHER_PORT,
    Port,
    Probe,
    manifest,
    platform_probes,
    tenant_probes,
)

ACME_DEV = tenant_probes("tenant-acme-dev", "acme", "dev", [8080])
ACME_PROD = tenant_probes("tenant-acme-prod", "acme", "prod", [8080])
LAB_DEV = tenant_probes("tenant-genomics-lab-dev", "genomics-lab", "dev", [])
PLATFORM = {p.role: p for p in platform_probes()}


def _pair(source: Probe, destination: Probe, port: int, protocol: str = "TCP") -> matrix.Pair:
    return matrix.Pair(source, destination, Port(port, protocol))


class _Plane:
    def __init__(self) -> None:
        self.undo: list[tuple[str, Callable[[], None]]] = []

    def on_stop(self, what: str, undo: Callable[[], None]) -> None:
        self.undo.append((what, undo))


# The documented model (docs/network.md) for the probes' roles.


def test_tenants_reach_no_other_tenant_nor_their_other_environment() -> None:
    app, db = ACME_DEV
    assert matrix.expected(_pair(app, db, 5432))  # same namespace: all
    assert not matrix.expected(_pair(app, ACME_PROD[0], 8080))  # dev -> prod
    assert not matrix.expected(_pair(LAB_DEV[0], db, 5432))  # another tenant
    assert not matrix.expected(_pair(app, PLATFORM["monitoring"], 9100))  # egress to the platform


def test_dns_from_everyone_on_53_only() -> None:
    dns = PLATFORM["dns"]
    assert matrix.expected(_pair(ACME_DEV[0], dns, 53, "UDP"))
    assert matrix.expected(_pair(ACME_DEV[0], dns, 53))
    assert not matrix.expected(_pair(dns, ACME_DEV[0], 8080))


def test_the_gateway_reaches_route_ports_only_and_operators_their_ports() -> None:
    app, db = ACME_DEV
    proxy, operator = PLATFORM["gateway-proxy"], PLATFORM["operator"]
    assert matrix.expected(_pair(proxy, app, 8080))
    assert not matrix.expected(_pair(proxy, app, OTHER_PORT))
    assert not matrix.expected(_pair(proxy, LAB_DEV[0], OTHER_PORT))
    assert matrix.expected(_pair(operator, db, 5432)) and matrix.expected(_pair(operator, db, 8000))
    assert not matrix.expected(_pair(operator, app, OTHER_PORT))
    assert not matrix.expected(_pair(PLATFORM["operator-neighbour"], db, 5432))


def test_a_suspended_namespace_is_closed_to_the_platform_but_not_to_its_operators() -> None:
    from dataclasses import replace

    app, db = (replace(p, suspended=True) for p in ACME_DEV)
    assert not matrix.expected(_pair(PLATFORM["gateway-proxy"], app, 8080))
    assert not matrix.expected(_pair(PLATFORM["monitoring"], app, 8080))
    assert matrix.expected(_pair(PLATFORM["operator"], db, 5432))
    assert matrix.expected(_pair(app, db, 5432))


def test_pairs_cover_every_served_port_of_every_other_probe() -> None:
    probes = [*ACME_DEV, PLATFORM["dns"]]
    found = {(p.source.name, p.destination.name, p.port) for p in matrix.pairs(probes)}
    assert ("probe-app", "probe-dns", Port(53, "UDP")) in found
    assert ("probe-db", "probe-app", Port(OTHER_PORT)) in found
    assert not any(source == destination for source, destination, _ in found)
    assert len(found) == 2 * 2 + 2 * 2 + 2 * 2  # app: 8080, 9090; db: 8000, 5432; dns: TCP and UDP 53


def test_differences_name_every_disagreement_and_nothing_else() -> None:
    app, db = ACME_DEV
    agree = matrix.entry(_pair(app, db, 5432), True, "", True)
    packets_differ = matrix.entry(_pair(LAB_DEV[0], db, 5432), True, "", False)
    offline_differs = matrix.entry(_pair(app, ACME_PROD[1], 5432), False, "", True)
    unmeasured = matrix.entry(_pair(app, db, 8000), None, "source unreachable", None)
    found = matrix.differences([agree, packets_differ, offline_differs, unmeasured])
    assert len(found) == 3
    assert "tenant-genomics-lab-dev/probe-app -> tenant-acme-dev/probe-db TCP/5432" in found[0]


def test_dial_asks_the_source_for_one_connection_to_the_destination() -> None:
    from dataclasses import replace

    source, destination = replace(ACME_DEV[0], ip="10.245.0.5"), replace(PLATFORM["dns"], ip="10.245.1.7")
    url = matrix.dial_url(_pair(source, destination, 53, "UDP"))
    assert url.startswith("http://10.245.0.5:8080/dial?")
    assert "protocol=udp" in url and "host=10.245.1.7" in url and "port=53" in url and "tries=1" in url


# Probes are written as tenants' workloads and admitted by the platform's chain.


@pytest.fixture(scope="module")
def dev_cluster(dev_plan: ProgramRun) -> Cluster:
    return cluster(dev_plan)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_tenant_probes_are_admitted_as_a_tenants_workload(dev_cluster: Cluster, who: object, namespace: str) -> None:
    for probe in tenant_probes(namespace, "acme", "dev", [8080]):
        pod = manifest(probe, "127.0.0.1:5000/realrun/agnhost:v1", "real-shared")
        outcome = dev_cluster.attempt(who, "CREATE", "/v1/pods", pod, namespace)  # type: ignore[arg-type]
        if probe.role in OPERATOR_WRITTEN:
            # The operator's budget labels are the operator's to write (issue 43): refused here.
            assert outcome.stopped_by == "admission", outcome
            assert "tenancy-scheduling-operator-labels" in " ".join(outcome.decision.denials), outcome
        else:
            assert outcome.stopped_by is None, outcome


@pytest.mark.parametrize("namespace", ["tenant-acme-dev", "tenant-acme-prod"])
def test_the_database_probe_is_admitted_as_the_data_operator_writes_it(dev_plan: ProgramRun, namespace: str) -> None:
    """The run writes it as the stack's operator identity, with the pod writes the operator's chart
    grants (tools/realrun/dataplane/live.py operator_client), as CloudNativePG writes its instances."""
    operator = "system:serviceaccount:cnpg-system:cloudnative-pg"
    grant = [
        {"kind": "ClusterRole", "metadata": {"name": "pods"},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]},
        {"kind": "ClusterRoleBinding", "metadata": {"name": "pods"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pods"},
         "subjects": [{"kind": "User", "name": operator}]},
    ]  # fmt: skip
    probe = next(p for p in tenant_probes(namespace, "acme", "dev", [8080]) if p.role in OPERATOR_WRITTEN)
    pod = manifest(probe, "127.0.0.1:5000/realrun/agnhost:v1", "real-shared")
    who = UserInfo(operator, ("system:serviceaccounts", "system:serviceaccounts:cnpg-system", "system:authenticated"))
    outcome = cluster(dev_plan, grant).attempt(who, "CREATE", "/v1/pods", pod, namespace)
    assert outcome.stopped_by is None, outcome


def test_tenant_probes_pull_always_and_leave_the_pool_to_the_platform() -> None:
    pod = manifest(ACME_DEV[0], "image", "real-shared")
    assert {c["imagePullPolicy"] for c in pod["spec"]["containers"]} == {"Always"}
    assert pod["spec"]["nodeSelector"] == {nodes.REAL_NODE_LABEL: "true"}
    assert [t["key"] for t in pod["spec"]["tolerations"]] == [nodes.PROBE_TAINT["key"]]
    assert "nodeName" not in pod["spec"]
    platform = manifest(PLATFORM["dns"], "image", "real-shared")
    assert platform["spec"]["nodeName"] == "real-shared"
    assert platform["spec"]["containers"][0]["ports"] == [
        {"containerPort": 53, "protocol": "TCP"},
        {"containerPort": 53, "protocol": "UDP"},
    ]


# Nodes, CNI, enforcer: nothing beyond loopback and the run's interfaces.


def test_pods_get_a_route_to_the_run_pods_only_and_no_masquerade(tmp_path: Path) -> None:
    node = nodes.plan_nodes({"shared": "platform-shared", "customers": "customers"}, tmp_path)[1]
    bridge = nodes.cni_config(node)["plugins"][0]
    assert bridge["bridge"] == node.bridge and bridge["ipMasq"] is False
    assert bridge["ipam"]["routes"] == [{"dst": nodes.POD_SUPERNET}]
    assert bridge["ipam"]["ranges"] == [[{"subnet": "10.245.1.0/24", "gateway": "10.245.1.1"}]]


def test_the_kubelet_and_containerd_listen_on_loopback_or_the_node_address(tmp_path: Path) -> None:
    node = nodes.plan_nodes({"shared": "platform-shared"}, tmp_path)[0]
    config = nodes.kubelet_config(node, tmp_path / "ca.crt", 10250, 10248)
    assert config["address"] == node.address and config["healthzBindAddress"] == "127.0.0.1"
    assert config["readOnlyPort"] == 0 and config["authentication"]["anonymous"] == {"enabled": False}
    assert config["registerWithTaints"] == [{"key": "tenancy.io/pool", "value": "shared", "effect": "NoSchedule"},
                                            nodes.PROBE_TAINT]  # fmt: skip
    containerd = nodes.containerd_config(node, "pause", tmp_path)
    assert 'stream_server_address = "127.0.0.1"' in containerd and "restrict_oom_score_adj = true" in containerd
    assert f'address = "{node.socket}"' in containerd
    assert containerd.count('address = ""') == 3  # ttrpc, debug and metrics: off


def test_the_enforcer_gets_every_new_connection_between_pods_and_nothing_else_passes() -> None:
    rules = [" ".join(rule) for rule in enforcer.forward_rules()]
    queue = next(i for i, r in enumerate(rules) if "NFQUEUE" in r)
    established = next(i for i, r in enumerate(rules) if "ESTABLISHED" in r)
    assert established < queue and "--queue-bypass" not in rules[queue]  # fail closed
    assert f"-A {enforcer.CHAIN} -i rrnode+ -j DROP" in rules and f"-A {enforcer.CHAIN} -o rrnode+ -j DROP" in rules
    assert f"-A {enforcer.INPUT_CHAIN} -i rrnode+ -j DROP" in rules
    assert rules[-2:] == [f"-I FORWARD 1 -j {enforcer.CHAIN}", f"-I INPUT 1 -j {enforcer.INPUT_CHAIN}"]
    command = enforcer.command(Path("/bin/knp"), "real-shared", 9999)
    assert "--metrics-bind-address=127.0.0.1:9999" in command and "--fail-open=false" in command


# Host changes are registered before they are made, and undone.


def test_sysctls_are_restored_to_what_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "sysctl_path", lambda name: tmp_path / name)
    (tmp_path / "kernel.panic").write_text("0\n")
    plane = _Plane()
    assert host.keep_sysctls(plane, ["kernel.panic", "absent.one"]) == {"kernel.panic": "0"}
    host.set_sysctl("kernel.panic", "10")
    for _, undo in reversed(plane.undo):
        undo()
    assert (tmp_path / "kernel.panic").read_text().strip() == "0"


def test_iptables_are_saved_before_and_restored_table_by_table(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[list[str], str | None]] = []

    def fake_run(command: list[str], *, check: bool = True, input_text: str | None = None) -> str:
        calls.append((list(command), input_text))
        return f"saved {command[-1]}" if command[0] == "iptables-save" else ""

    monkeypatch.setattr(host, "run", fake_run)
    plane = _Plane()
    host.keep_iptables(plane)
    assert [c[0][-1] for c in calls] == ["filter", "mangle", "nat"]
    plane.undo[0][1]()
    assert calls[3:] == [(["iptables-restore", "-T", t], f"saved {t}") for t in ("filter", "mangle", "nat")]


def test_missing_packages_are_named_by_their_debian_package(tmp_path: Path) -> None:
    installed = {"containerd", "iptables"}
    missing = host.missing_packages(lambda c: c if c in installed else None, tmp_path)
    assert missing == ["runc", "docker-registry", "containernetworking-plugins"]


def test_an_image_is_a_docker_save_tarball_of_one_layer(tmp_path: Path) -> None:
    binary = tmp_path / "agnhost"
    binary.write_bytes(b"\x7fELF binary")
    image = images.Image("agnhost", binary, "/agnhost")
    out = images.docker_save_tarball(image, "127.0.0.1:5000/realrun/agnhost:v1", tmp_path / "a.tar")
    with tarfile.open(out) as tarball:
        manifest_json = json.loads(tarball.extractfile("manifest.json").read())  # type: ignore[union-attr]
        [entry] = manifest_json
        assert entry["RepoTags"] == ["127.0.0.1:5000/realrun/agnhost:v1"]
        layer = tarball.extractfile(entry["Layers"][0]).read()  # type: ignore[union-attr]
        config = json.loads(tarball.extractfile(entry["Config"]).read())  # type: ignore[union-attr]
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(layer).hexdigest()]
    assert config["config"]["Entrypoint"] == ["/agnhost"]
    with tarfile.open(fileobj=io.BytesIO(layer)) as inner:
        member = inner.getmember("agnhost")
        assert member.mode == 0o755 and inner.extractfile(member).read() == b"\x7fELF binary"  # type: ignore[union-attr]


def test_what_pods_leave_mounted_below_a_node_folder_is_found_deepest_first(tmp_path: Path) -> None:
    node = tmp_path / "real-shared"
    mountinfo = "\n".join(
        [
            "22 1 0:21 / / rw - ext4 /dev/root rw",
            f"40 22 0:40 / {node}/state/netns/cni-1 rw - nsfs nsfs rw",
            f"41 22 0:41 / {node}/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw - overlay overlay rw",
            f"42 22 0:42 / {tmp_path}/real-shared-other rw - tmpfs tmpfs rw",
            "43 22 0:43 / /run/netns/cni-2 rw - nsfs nsfs rw",
        ]
    )
    assert host.mounts_under(node, mountinfo) == [
        f"{node}/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs",
        f"{node}/state/netns/cni-1",
    ]


def test_only_the_shims_of_the_nodes_socket_are_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    killed: list[list[str]] = []

    def record(command: list[str], check: bool = True, input_text: str | None = None) -> str:
        killed.append(list(command))
        return ""

    monkeypatch.setattr(host, "run", record)
    socket = tmp_path / "real-shared" / "containerd.sock"
    for pid, command in {
        "11": ["/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "a", "-address", str(socket)],
        "12": ["/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "b", "-address", "/run/c.sock"],
        "13": ["/bin/sleep", str(socket)],
        "self": ["python"],
    }.items():
        (tmp_path / "proc" / pid).mkdir(parents=True)
        (tmp_path / "proc" / pid / "cmdline").write_bytes(b"\0".join(c.encode() for c in command) + b"\0")
    assert host.kill_shims_of(socket, tmp_path / "proc") == [11]
    assert killed == [["kill", "-KILL", "11"]]


def test_each_kubelet_acts_as_its_own_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not as the run's administrator: `tenancy-pod-status` lets only `system:node:*` set pod
    addresses, and the real run found every tenant pod's status refused under the admin's identity."""
    commands: list[list[str]] = []

    def record(command: list[str], check: bool = True, input_text: str | None = None) -> str:
        commands.append(list(command))
        return ""

    monkeypatch.setattr(host, "run", record)
    node = nodes.plan_nodes({"customers": "customers"}, tmp_path)[0]
    kubeconfig = nodes.node_kubeconfig(node, tmp_path / "pki", "https://127.0.0.1:6443")
    subjects = [c[c.index("-subj") + 1] for c in commands if "-subj" in c]
    assert subjects == ["/O=system:nodes/CN=system:node:real-customers"]
    text = kubeconfig.read_text()
    assert "user: system:node:real-customers" in text and "client-certificate:" in text and "token" not in text
