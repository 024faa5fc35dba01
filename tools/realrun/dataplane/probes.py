"""The probe pods: agnhost `netexec` standing in for each role the network model distinguishes.

In every tenant environment namespace: `probe-app` (the tenant's route ports, and 9090, a port no
platform path names) and `probe-db` (labelled as a CloudNativePG instance, on the operator's ports
8000 and 5432). In the platform namespaces the model names: cluster DNS (kube-system,
`k8s-app: kube-dns`, UDP and TCP 53), monitoring, the Gateway's proxy (Envoy Gateway's labels), the
CloudNativePG operator and, beside it, a pod of the same namespace without the operator's labels.
Each container serves one port (HTTP, and UDP where the role has it); the first one also answers
the run's `/dial` requests, which make the probe open a connection of its own.

Tenant probes are written as a tenant's workload: Pod Security `restricted`, a memory limit,
`imagePullPolicy: Always`, no pool selector or toleration (the platform's admission injects them);
only the toleration and selector of the run's probe taint are added, which keep them on the real
node of their pool (nodes.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.realrun.dataplane.nodes import PROBE_TAINT, REAL_NODE_LABEL

OTHER_PORT = 9090
OPERATOR_PORTS = (8000, 5432)
DNS_PORT = 53


@dataclass(frozen=True)
class Port:
    number: int
    protocol: str = "TCP"


@dataclass(frozen=True)
class Probe:
    """One probe pod: where it runs, its role (what the model says about it) and what it serves."""

    namespace: str
    name: str
    role: str  # app, database, dns, monitoring, gateway-proxy, operator, operator-neighbour
    labels: Mapping[str, str]
    ports: Sequence[Port]
    tenant: str = ""  # empty for platform probes
    environment: str = ""
    route_ports: Sequence[int] = ()
    suspended: bool = False
    ip: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


# Platform probes: namespace, name, role, labels, ports. Labels as the model selects them
# (components/clouds/local/network.py, the edge's proxy, the DNS settings, tenancy:platformNamespaces).
PLATFORM_PROBES: tuple[tuple[str, str, str, dict[str, str], tuple[Port, ...]], ...] = (
    ("kube-system", "probe-dns", "dns", {"k8s-app": "kube-dns"}, (Port(DNS_PORT), Port(DNS_PORT, "UDP"))),
    ("monitoring", "probe-monitoring", "monitoring", {"app.kubernetes.io/name": "prometheus"}, (Port(9100),)),
    (
        "envoy-gateway-system",
        "probe-proxy",
        "gateway-proxy",
        {"app.kubernetes.io/component": "proxy", "app.kubernetes.io/managed-by": "envoy-gateway"},
        (Port(10080),),
    ),
    ("cnpg-system", "probe-operator", "operator", {"app.kubernetes.io/name": "cloudnative-pg"}, (Port(9443),)),
    ("cnpg-system", "probe-neighbour", "operator-neighbour", {"app.kubernetes.io/name": "neighbour"}, (Port(9443),)),
)


# Probes a data operator writes, not the tenant: CloudNativePG creates its instance pods, with the
# labels its budgets select by (components/admission/rules/scheduling.py OPERATOR_BUDGET_LABELS).
OPERATOR_WRITTEN = frozenset({"database"})


def tenant_probes(namespace: str, tenant: str, environment: str, route_ports: Sequence[int]) -> list[Probe]:
    app_ports = [Port(p) for p in sorted({*route_ports, OTHER_PORT})]
    return [
        Probe(namespace, "probe-app", "app", {"app.kubernetes.io/name": "probe-app"}, app_ports, tenant, environment,
              tuple(route_ports)),
        Probe(namespace, "probe-db", "database", {"cnpg.io/cluster": "probe", "cnpg.io/podRole": "instance"},
              [Port(p) for p in OPERATOR_PORTS], tenant, environment, tuple(route_ports)),
    ]  # fmt: skip


def platform_probes() -> list[Probe]:
    return [Probe(ns, name, role, labels, ports) for ns, name, role, labels, ports in PLATFORM_PROBES]


def _container(probe: Probe, port: int, udp: bool, image: str, tenant: bool) -> dict[str, Any]:
    args = ["netexec", f"--http-port={port}", f"--udp-port={port if udp else -1}"]
    container: dict[str, Any] = {
        "name": f"port-{port}",
        "image": image,
        "imagePullPolicy": "Always",
        "args": args,
        "ports": [{"containerPort": port, "protocol": "TCP"}]
        + ([{"containerPort": port, "protocol": "UDP"}] if udp else []),
        "resources": {"requests": {"cpu": "5m", "memory": "16Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
        "readinessProbe": {"tcpSocket": {"port": port}, "periodSeconds": 2},
    }
    if tenant or port >= 1024:
        container["securityContext"] = {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "runAsUser": 65534,
            "runAsGroup": 65534,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
    else:  # DNS on 53 in kube-system, as cluster DNS runs: a port below 1024 needs root here
        container["securityContext"] = {"runAsUser": 0, "allowPrivilegeEscalation": False}
    return container


def manifest(probe: Probe, image: str, platform_node: str) -> dict[str, Any]:
    """The Pod of a probe. Tenant probes are placed by the platform's pool injection plus the run's
    probe taint; platform probes go to `platform_node` (a real node; the platform's own worker is
    a kwok node)."""
    tenant = bool(probe.tenant)
    udp_ports = {p.number for p in probe.ports if p.protocol == "UDP"}
    tcp_ports = sorted({p.number for p in probe.ports})
    spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 1,
        "containers": [_container(probe, port, port in udp_ports, image, tenant) for port in tcp_ports],
        "tolerations": [{**PROBE_TAINT, "operator": "Equal"}],
        "nodeSelector": {REAL_NODE_LABEL: "true"},
    }
    if not tenant:
        spec["nodeName"] = platform_node
        spec["tolerations"] = [{"operator": "Exists"}]
        del spec["nodeSelector"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": probe.name,
            "namespace": probe.namespace,
            "labels": {**probe.labels, "realrun.tenancy.io/probe": probe.role},
        },
        "spec": spec,
    }


def control_port(probe: Probe) -> int:
    """The port whose netexec answers the run's /dial requests: the probe's first."""
    return sorted({p.number for p in probe.ports})[0]
