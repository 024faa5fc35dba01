"""The offline analysis of the live cluster's policies: network-config-analyzer (the engine of
tests/guardrails/network_analyzer.py) over the live Namespaces and NetworkPolicies and the probe
pods as they run, so the measured matrix is compared with what the project's offline judge says
of the very same objects. When nca is not installed the entries say `offline: null`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kubernetes import client

from tools.realrun.dataplane.matrix import Pair
from tools.realrun.dataplane.probes import Probe
from tools.realrun.kube import plain
from tools.realrun.toolchain import ROOT

if TYPE_CHECKING:
    from tests.guardrails.network_analyzer import Connectivity


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    kept = {k: meta[k] for k in ("name", "namespace", "labels") if meta.get(k)}
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": kept, "spec": obj.get("spec", {})}


def live_inputs(
    api: client.ApiClient, probes: Sequence[Probe]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(policies, namespaces, pods) as nca reads them."""
    core, networking = client.CoreV1Api(api), client.NetworkingV1Api(api)
    policies = [
        _clean({**plain(api, p), "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy"})
        for p in networking.list_network_policy_for_all_namespaces().items
    ]
    namespaces = [
        _clean({**plain(api, n), "apiVersion": "v1", "kind": "Namespace"}) for n in core.list_namespace().items
    ]
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": p.name, "namespace": p.namespace, "labels": {**p.labels}},
            "spec": {"containers": [{"name": "main", "image": "probe"}]},
            "status": {"hostIP": "10.245.255.1", "podIP": p.ip},
        }
        for p in probes
    ]
    return policies, namespaces, pods


def analysis(api: client.ApiClient, probes: Sequence[Probe]) -> Connectivity | None:
    """nca's map, from the checkout's test helpers: the run works in the checkout anyway (its
    modules, tenants and Go modules), and the installed entry point does not put it on the path."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    from tests.guardrails.network_analyzer import connectivity_of, nca_command

    if nca_command() is None:
        return None
    return connectivity_of(*live_inputs(api, probes))


def allows(connectivity: Connectivity | None, pair: Pair) -> bool | None:
    if connectivity is None:
        return None
    return connectivity.allows(pair.source.key, pair.destination.key, pair.port.number, pair.port.protocol)
