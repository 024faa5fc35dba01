"""The connectivity matrix: what the documented model says for each probe pair and port, what
real connections between the probes do, and where the two differ.

`expected` is docs/network.md's table for the dev stack (local cloud, `networkPolicy` mode, no
consented paths), written in terms of the probes' roles; nothing here reads the rendered policies.
Each connection is made by the source probe itself (agnhost netexec `/dial`, the request the
Kubernetes network e2e tests use): the run asks the source over its own address (host-to-pod,
which the enforcer does not judge) and the source opens one TCP connection (an HTTP GET) or sends
one UDP datagram to the destination, waiting at most 5 s (netexec's own timeout).
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tools.realrun.dataplane.probes import OPERATOR_PORTS, Port, Probe, control_port


@dataclass(frozen=True)
class Pair:
    """One measured path: a source probe, a destination probe, a port it serves."""

    source: Probe
    destination: Probe
    port: Port


def expected(pair: Pair) -> bool:
    """docs/network.md ("Who reaches whom") for the dev stack's roles."""
    source, destination, port = pair.source, pair.destination, pair.port
    if source.namespace == destination.namespace:
        return True  # same namespace: all
    if destination.tenant:
        if source.tenant:
            return False  # other tenant or own other environment: no (no consent in the dev stack)
        if source.role == "gateway-proxy":  # the tenant's route ports only; none while suspended
            return not destination.suspended and port.protocol == "TCP" and port.number in destination.route_ports
        if source.role == "monitoring":  # a platform namespace listing no ports: every port; not while suspended
            return not destination.suspended
        if source.role == "operator":  # by namespace and pod labels, its ports only; also while suspended
            return port.protocol == "TCP" and port.number in OPERATOR_PORTS
        return False  # any other pod: DNS, the operator's unlabelled neighbour
    if source.tenant:  # tenant egress to the platform: cluster DNS on 53 only
        return destination.role == "dns" and port.number == 53
    return True  # between platform pods: no policy of the platform's selects them


def pairs(probes: Sequence[Probe]) -> list[Pair]:
    """Every probe to every other probe, on every port the destination serves."""
    return [
        Pair(source, destination, port)
        for source in probes
        for destination in probes
        if source.key != destination.key
        for port in destination.ports
    ]


def dial_url(pair: Pair) -> str:
    """netexec's /dial on the source: one connection to the destination's port, one try."""
    protocol = "udp" if pair.port.protocol == "UDP" else "http"
    query = urllib.parse.urlencode(
        {"request": "hostname", "protocol": protocol, "host": pair.destination.ip, "port": pair.port.number,
         "tries": 1}
    )  # fmt: skip
    return f"http://{pair.source.ip}:{control_port(pair.source)}/dial?{query}"


def dial(pair: Pair, timeout: float = 15) -> tuple[bool | None, str]:
    """(connected, detail); None when the source itself could not be asked."""
    try:
        with urllib.request.urlopen(dial_url(pair), timeout=timeout) as response:
            answer = json.loads(response.read() or b"{}")
    except (OSError, ValueError) as error:
        return None, f"source unreachable: {error}"
    responses = answer.get("responses") or []
    return bool(responses), "; ".join(str(e) for e in (answer.get("errors") or []))[:300] or ",".join(responses)


def measure(
    all_pairs: Sequence[Pair], dialer: Callable[[Pair], tuple[bool | None, str]] = dial, workers: int = 24
) -> list[tuple[Pair, bool | None, str]]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(dialer, all_pairs))
    return [(pair, observed, detail) for pair, (observed, detail) in zip(all_pairs, results, strict=True)]


def entry(pair: Pair, observed: bool | None, detail: str, offline: bool | None = None) -> dict[str, object]:
    """One line of connectivity.json."""
    return {
        "source": {"namespace": pair.source.namespace, "pod": pair.source.name, "role": pair.source.role,
                   "ip": pair.source.ip},
        "destination": {"namespace": pair.destination.namespace, "pod": pair.destination.name,
                        "role": pair.destination.role, "ip": pair.destination.ip},
        "port": pair.port.number,
        "protocol": pair.port.protocol,
        "expected": expected(pair),
        "offline": offline,
        "observed": observed,
        "detail": detail,
    }  # fmt: skip


def differences(entries: Iterable[dict[str, object]]) -> list[str]:
    """Every entry where the packets, the documented model or the offline analysis disagree."""
    found = []
    for item in entries:
        verdicts = {item["expected"], item["observed"]} | ({item["offline"]} if item["offline"] is not None else set())
        if len(verdicts) != 1:
            source, destination = item["source"], item["destination"]
            assert isinstance(source, dict) and isinstance(destination, dict)
            found.append(
                f"{source['namespace']}/{source['pod']} -> {destination['namespace']}/{destination['pod']} "
                f"{item['protocol']}/{item['port']}: model {item['expected']}, offline {item['offline']}, "
                f"observed {item['observed']} ({item['detail']})"
            )
    return found
