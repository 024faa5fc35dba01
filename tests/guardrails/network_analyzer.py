"""Connectivity of a rendered plan, judged by network-config-analyzer (`nca`), a real NetworkPolicy engine.

The plan's Namespaces and NetworkPolicies are written out as they would be applied, with the
`kubernetes.io/metadata.name` label the API server adds to every namespace, plus sample pods: one
app and one worker pod per tenant namespace, one instance pod per in-namespace database, and the
platform's pods (an ingress controller, the Gateway's proxy and controller, monitoring, cluster DNS,
data operators, and an unlabelled pod beside each operator). `nca --connectivity ... -o
txt_no_fw_rules` (run in a forked child, tests/guardrails/nca_child.py) prints one line per allowed connection,
`src => dst : connections`, which `Connectivity` parses; nothing here decides what a policy means.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.guardrails import nca_child
from tests.guardrails.cnp_translation import calico_policies
from tests.support import kubernetes_objects, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

METADATA_NAME = "kubernetes.io/metadata.name"
PodSample = tuple[str, str, dict[str, str]]
# Platform pods: (namespace, pod name, labels). Their namespaces are created if the plan has none.
PLATFORM_PODS = [
    ("ingress-nginx", "ingress-controller", {"app.kubernetes.io/name": "ingress-nginx"}),
    # Envoy Gateway (dev's Gateway): a proxy pod as the controller labels it, and the controller itself.
    (
        "envoy-gateway-system",
        "envoy-proxy",
        {"app.kubernetes.io/component": "proxy", "app.kubernetes.io/managed-by": "envoy-gateway"},
    ),
    ("envoy-gateway-system", "envoy-gateway", {"app.kubernetes.io/name": "gateway-helm"}),
    ("monitoring", "prometheus", {"app.kubernetes.io/name": "prometheus"}),
    ("kube-system", "coredns", {"k8s-app": "kube-dns"}),
    ("kube-system", "kube-proxy", {"k8s-app": "kube-proxy"}),
    ("cnpg-system", "cnpg-operator", {"app.kubernetes.io/name": "cloudnative-pg"}),
    ("cnpg-system", "cnpg-intruder", {"app.kubernetes.io/name": "something-else"}),
    ("mariadb-operator", "mariadb-operator", {"app.kubernetes.io/name": "mariadb-operator"}),
]
_LINE = re.compile(r"^(?P<src>\S+) => (?P<dst>\S+) : (?P<conn>.+)$")
# nca prints `{protocols:TCP, UDP,dst_ports:53}`; several such groups may follow each other.
_CONN = re.compile(r"\{protocols:(?P<protocols>[A-Z, ]+?)(?:,dst_ports:(?P<ports>[0-9,-]+))?\}")


def nca_command() -> str | None:
    """The `nca` executable beside the running interpreter (the project's virtualenv), else on PATH."""
    beside = Path(sys.executable).parent / "nca"
    return str(beside) if beside.exists() else shutil.which("nca")


def _pod(namespace: str, name: str, labels: dict[str, str], ip: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "example"}]},
        "status": {"hostIP": "192.168.0.10", "podIP": ip},
    }


def sample_pods(objects: list[dict[str, Any]], extra: Sequence[PodSample] = ()) -> list[dict[str, Any]]:
    """One app and one worker pod per tenant namespace, an instance pod per in-namespace database, the
    platform pods, and `extra` pods a test adds (namespace, name, labels)."""
    pods: list[dict[str, Any]] = []
    tenant_namespaces = [o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"]
    for namespace in tenant_namespaces:
        pods.append(_pod(namespace, "app", {"app.kubernetes.io/name": "app"}, ""))
        pods.append(_pod(namespace, "worker", {"app.kubernetes.io/name": "worker"}, ""))
    for obj in objects:
        if obj["kind"] in ("Cluster", "MariaDB") and obj["metadata"].get("namespace") in tenant_namespaces:
            name = f"db-{obj['metadata']['name']}"
            pods.append(_pod(obj["metadata"]["namespace"], name, {"tenancy.io/sample": "database"}, ""))
    pods += [_pod(namespace, name, labels, "") for namespace, name, labels in [*PLATFORM_PODS, *extra]]
    for index, pod in enumerate(pods):
        pod["status"]["podIP"] = f"10.244.{index // 250}.{index % 250 + 1}"
    return pods


def _namespaces(objects: list[dict[str, Any]], pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    labels = {o["metadata"]["name"]: dict(o["metadata"].get("labels", {})) for o in objects if o["kind"] == "Namespace"}
    for pod in pods:
        labels.setdefault(pod["metadata"]["namespace"], {})
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {**found, METADATA_NAME: name}}}
        for name, found in sorted(labels.items())
    ]


@dataclass(frozen=True)
class Connectivity:
    """nca's connectivity map: allowed connections as (source, destination) -> nca's connection text."""

    edges: dict[tuple[str, str], str]
    output: str

    def connection(self, source: str, destination: str) -> str | None:
        """What `source` may open to `destination` (each `ns/pod` or an IP address, which nca prints as
        part of a range), None when nothing."""
        if "/" in destination and "/" in source:
            return self.edges.get((source, destination))
        for (src, dst), conn in self.edges.items():
            if _is(src, source) and _is(dst, destination):
                return conn
        return None

    def allows(self, source: str, destination: str, port: int, protocol: str = "TCP") -> bool:
        conn = self.connection(source, destination)
        if conn is None:
            return False
        if conn == "All connections":
            return True
        for match in _CONN.finditer(conn):
            if protocol in [p.strip() for p in match["protocols"].split(",")] and (
                match["ports"] is None or _in_ports(port, match["ports"])
            ):
                return True
        return False

    def reaches(self, source: str, destination: str) -> bool:
        return self.connection(source, destination) is not None


def _is(end: str, wanted: str) -> bool:
    """Whether nca's endpoint `end` is `wanted`: the same pod, or a range holding the address."""
    if "/" in wanted:
        return end == wanted
    return "/" not in end and _in_range(_address(wanted), end)


_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@functools.cache
def _address(text: str) -> _Address:
    """An address parsed once: the connectivity checks look the same few up hundreds of thousands of times."""
    return ipaddress.ip_address(text)


@functools.cache
def _ranges(text: str) -> tuple[tuple[_Address, _Address], ...]:
    """nca's `a-b,c,...` range text as (first, last) pairs, parsed once per text."""
    pairs = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        pairs.append((_address(low), _address(high) if high else _address(low)))
    return tuple(pairs)


def _in_range(address: _Address, text: str) -> bool:
    return any(
        first.version == address.version and first <= address <= last  # type: ignore[operator]
        for first, last in _ranges(text)
    )


def _in_ports(port: int, text: str) -> bool:
    for part in text.split(","):
        low, _, high = part.partition("-")
        if int(low) <= port <= int(high or low):
            return True
    return False


def _endpoint(text: str) -> str:
    return text.removesuffix("[Pod]")


def analyze(
    run: ProgramRun, extra: Sequence[dict[str, Any]] = (), extra_pods: Sequence[PodSample] = ()
) -> Connectivity:
    """Run nca on the plan's namespaces and policies with the sample pods, and parse its map.

    `extra`: objects a tenant applies beside the plan (its own NetworkPolicies); `extra_pods`: pods a
    test adds. ClusterNetworkPolicies reach nca as Calico policies (tests/guardrails/cnp_translation.py),
    the only form it reads.
    """
    objects = kubernetes_objects(run) + list(extra)
    pods = sample_pods(objects, extra_pods)
    policies = [o for o in objects if o["kind"] == "NetworkPolicy"] + calico_policies(objects)
    return connectivity_of(policies, _namespaces(objects, pods), pods)


def connectivity_of(
    policies: Sequence[dict[str, Any]], namespaces: Sequence[dict[str, Any]], pods: Sequence[dict[str, Any]]
) -> Connectivity:
    """nca's map of these policies over these namespaces and pods (each pod with its status.podIP);
    also what the real run compares its measured matrix with (tools/realrun/dataplane/offline.py)."""
    if nca_command() is None:
        raise RuntimeError("nca (network-config-analyzer) is not installed in this environment")
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "policies").mkdir()
        (root / "policies" / "policies.yaml").write_text(yaml.safe_dump_all(policies))
        (root / "namespaces.yaml").write_text(
            yaml.safe_dump({"apiVersion": "v1", "kind": "NamespaceList", "items": list(namespaces)})
        )
        (root / "pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "PodList", "items": list(pods)}))
        args = ["--connectivity", str(root / "policies"), "--ns_list", str(root / "namespaces.yaml")]
        args += ["--pod_list", str(root / "pods.yaml"), "-o", "txt_no_fw_rules", "--print_ipv6"]
        code, stdout, stderr = nca_child.run(args, timeout=300)
    if code != 0 or "=>" not in stdout:
        raise RuntimeError(f"nca failed ({code}): {stdout[-2000:]}{stderr[-2000:]}")
    edges: dict[tuple[str, str], str] = {}
    for line in stdout.splitlines():
        match = _LINE.match(line.strip())
        if match:
            edges[(_endpoint(match["src"]), _endpoint(match["dst"]))] = match["conn"]
    return Connectivity(edges, stdout)


# One address in each range an internet grant must never reach (components/model/settings/network.py).
NOT_INTERNET_SAMPLES = [
    "0.0.0.1",
    "10.0.0.1",
    "100.64.0.1",
    "127.0.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "192.0.0.170",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.5.5",
    "224.0.0.1",
    "240.0.0.5",
    "::ffff:10.0.0.1",
    "64:ff9b::a00:1",
    "64:ff9b:1::a00:1",
    "2001:0:4136:e378::1",
    "2002:a00:1::1",
    "fd00:ec2::254",
    "fe80::1",
]


def grant_tenants(directory: Path) -> Path:
    """Three tenants of the dev stack's egress entries: `payer` (a CIDR on 443), `surfer` (the
    internet on 443) and `quiet` (nothing)."""
    return write_tenants(
        directory,
        tenant_document("payer", egress=["payments-api"]),
        tenant_document("surfer", egress=["internet-https"]),
        tenant_document("quiet"),
    )


def assert_grants_open_exactly_what_they_name(connectivity: Connectivity) -> None:
    """What grant_tenants' grants open in dev, in either network mode: each grant its addresses and
    port only, the internet grant no private, link-local or shared address, nothing for `quiet`."""
    payer, surfer, quiet = "tenant-payer-dev/app", "tenant-surfer-dev/app", "tenant-quiet-dev/app"
    assert connectivity.allows(payer, "203.0.113.10", 443)
    assert not connectivity.allows(payer, "203.0.113.10", 80)
    assert not connectivity.reaches(payer, "8.8.8.8")
    assert not connectivity.reaches(payer, "198.51.100.1")
    assert connectivity.allows(surfer, "8.8.8.8", 443)
    assert connectivity.allows(surfer, "2001:4860:4860::8888", 443)
    assert not connectivity.allows(surfer, "8.8.8.8", 80)
    for private in NOT_INTERNET_SAMPLES:
        assert not connectivity.reaches(surfer, private), private
    for address in ["203.0.113.10", "8.8.8.8"]:
        assert not connectivity.reaches(quiet, address)
