"""Egress by host name: one GKE FQDNNetworkPolicy per tenant namespace granted a `hosts` entry.

FQDN policies are allow-lists that add to the namespace's NetworkPolicies: the isolation policy
still denies everything else, and keeps cluster DNS open, which the dataplane needs to learn the
addresses behind each name. Shape and semantics from Google's documentation
(https://cloud.google.com/kubernetes-engine/docs/how-to/fqdn-network-policies): `name` matches
exactly, `pattern` takes a `*` for one label. Rendered only where the stack's cloud enforces it
(`CloudCapabilities.egress_hosts`; components/model/checks/stack.py refuses it elsewhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.model.settings.network import EgressEntry

API_VERSION = "networking.gke.io/v1alpha1"
KIND = "FQDNNetworkPolicy"
HOSTS_POLICY = "tenancy-hosts"


def _match(host: str) -> dict[str, str]:
    return {"pattern": host} if host.startswith("*.") else {"name": host}


def _ports(entry: EgressEntry) -> list[dict[str, Any]]:
    """The entry's ports; with none, every port of its protocol (as the isolation policy renders it)."""
    if not entry.ports:
        return [{"protocol": entry.protocol}]
    return [{"protocol": entry.protocol, "port": port} for port in entry.ports]


def hosts_policy_spec(entries: Sequence[EgressEntry]) -> dict[str, Any] | None:
    """Every pod of the namespace may reach the entries' hosts on their ports; None without hosts."""
    rules = [
        {"matches": [_match(host) for host in entry.hosts], "ports": _ports(entry)} for entry in entries if entry.hosts
    ]
    if not rules:
        return None
    return {"podSelector": {}, "egress": rules}


def hosts_policy(
    prefix: str,
    *,
    ns_name: str,
    labels: dict[str, str],
    entries: Sequence[EgressEntry],
    opts: pulumi.ResourceOptions,
) -> k8s.apiextensions.CustomResource | None:
    """The namespace's `tenancy-hosts` FQDNNetworkPolicy, or nothing when no granted entry names hosts.
    `opts` are those of objects inside the namespace (components/clouds/base.py `InNamespace`)."""
    spec = hosts_policy_spec(entries)
    if spec is None:
        return None
    return k8s.apiextensions.CustomResource(
        f"{prefix}-hosts",
        api_version=API_VERSION,
        kind=KIND,
        metadata={"name": HOSTS_POLICY, "namespace": ns_name, "labels": labels},
        spec=spec,
        opts=opts,
    )
