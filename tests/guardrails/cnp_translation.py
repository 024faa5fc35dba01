"""ClusterNetworkPolicy -> Calico GlobalNetworkPolicy, used only to let `nca` analyze the CNP mode.

network-config-analyzer 2.1 reads Kubernetes NetworkPolicies and Calico policies, not
policy.networking.k8s.io (ClusterNetworkPolicy, AdminNetworkPolicy). Calico's ordered policies
with Allow/Deny rules express the same first-match evaluation, so the translation is mechanical:

- an Admin-tier object becomes a GlobalNetworkPolicy ordered before every NetworkPolicy (nca puts
  those at order 1000, as Calico does): order = priority, which must stay below 1000 (nca reads
  fractional orders as text, so orders are whole numbers);
- a Baseline-tier object becomes one ordered after them: order = 2000 + priority;
- Accept -> Allow, Deny -> Deny; Pass has no equivalent in one Calico tier and is refused;
- a rule with several peers and protocols becomes one Calico rule per (peer, protocol), in order,
  with the same action (first match is unchanged);
- the NetworkPolicy tier's own default deny (a pod some NetworkPolicy selects for a direction gets
  nothing else in that direction, and never reaches the Baseline tier) becomes, for every
  NetworkPolicy and policy type, a Deny-all GlobalNetworkPolicy on the same pods at order 1001;
- what no tier decides is allowed (ClusterNetworkPolicy's default), while nca denies whatever a
  policy selects and nothing allows: an Allow-all GlobalNetworkPolicy on every pod, last (order 9000).
"""

from __future__ import annotations

from typing import Any

NETWORK_POLICY_ORDER, BASELINE_BASE, LAST = 1000, 2000, 9000
_ACTIONS = {"Accept": "Allow", "Deny": "Deny"}


def selector(label_selector: dict[str, Any] | None) -> str:
    """A Kubernetes label selector as a Calico selector expression (empty selects everything)."""
    terms = [f"{key} == '{value}'" for key, value in sorted((label_selector or {}).get("matchLabels", {}).items())]
    for expression in (label_selector or {}).get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        quoted = ", ".join(f"'{v}'" for v in values)
        terms.append(
            {
                "In": f"{key} in {{{quoted}}}",
                "NotIn": f"{key} not in {{{quoted}}}",
                "Exists": f"has({key})",
                "DoesNotExist": f"!has({key})",
            }[operator]
        )
    return " && ".join(terms) or "all()"


def _entity(peer: dict[str, Any]) -> dict[str, Any]:
    if "namespaces" in peer:
        return {"namespaceSelector": selector(peer["namespaces"])}
    if "pods" in peer:
        pods = peer["pods"]
        return {"namespaceSelector": selector(pods.get("namespaceSelector")), "selector": selector(pods["podSelector"])}
    if "networks" in peer:
        return {"nets": list(peer["networks"])}
    raise ValueError(f"peer not translated: {peer}")


def _protocols(rule: dict[str, Any]) -> list[tuple[str | None, list[int | str]]]:
    """(Calico protocol, destination ports) per protocol entry; (None, []) when the rule names none."""
    found: list[tuple[str | None, list[int | str]]] = []
    for entry in rule.get("protocols", [{}]):
        if not entry:
            found.append((None, []))
        for protocol in ("tcp", "udp", "sctp"):
            if protocol in entry:
                port = entry[protocol].get("destinationPort", {})
                ports: list[int | str] = [port["number"]] if "number" in port else []
                if "range" in port:
                    ports = [f"{port['range']['start']}:{port['range']['end']}"]
                found.append((protocol.upper(), ports))
        if "destinationNamedPort" in entry:
            raise ValueError("destinationNamedPort is not translated")
    return found


def _rules(rules: list[dict[str, Any]], ingress: bool) -> list[dict[str, Any]]:
    translated: list[dict[str, Any]] = []
    for rule in rules:
        if rule["action"] not in _ACTIONS:
            raise ValueError(f"action {rule['action']} has no Calico equivalent in one tier")
        for peer in rule["from" if ingress else "to"]:
            for protocol, ports in _protocols(rule):
                calico: dict[str, Any] = {"action": _ACTIONS[rule["action"]]}
                if protocol is not None:
                    calico["protocol"] = protocol
                destination = {} if ingress else _entity(peer)
                if ports:
                    destination["ports"] = ports
                if ingress:
                    calico["source"] = _entity(peer)
                if destination:
                    calico["destination"] = destination
                translated.append(calico)
    return translated


def global_policy(cnp: dict[str, Any]) -> dict[str, Any]:
    """One ClusterNetworkPolicy as a Calico GlobalNetworkPolicy in the order its tier implies."""
    spec = cnp["spec"]
    if spec["tier"] == "Admin" and spec["priority"] >= NETWORK_POLICY_ORDER:
        raise ValueError("an Admin priority of 1000 would tie with the NetworkPolicies in nca")
    order = spec["priority"] if spec["tier"] == "Admin" else BASELINE_BASE + spec["priority"]
    subject = spec["subject"]
    body: dict[str, Any] = {"order": order, "types": []}
    if "namespaces" in subject:
        body["namespaceSelector"] = selector(subject["namespaces"])
    else:
        body["namespaceSelector"] = selector(subject["pods"].get("namespaceSelector"))
        body["selector"] = selector(subject["pods"]["podSelector"])
    for direction, ingress in (("ingress", True), ("egress", False)):
        if spec.get(direction):
            body["types"].append(direction.capitalize())
            body[direction] = _rules(spec[direction], ingress)
    return {
        "apiVersion": "projectcalico.org/v3",
        "kind": "GlobalNetworkPolicy",
        "metadata": cnp["metadata"],
        "spec": body,
    }


def network_policy_tier_defaults(policies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Deny-all right after the NetworkPolicies, for the pods each one selects, per policy type."""
    defaults = []
    for index, policy in enumerate(policies):
        spec = policy["spec"]
        types = spec.get("policyTypes") or (["Ingress", "Egress"] if "egress" in spec else ["Ingress"])
        body: dict[str, Any] = {
            "order": NETWORK_POLICY_ORDER + 1,
            "namespaceSelector": f"kubernetes.io/metadata.name == '{policy['metadata']['namespace']}'",
            "selector": selector(spec.get("podSelector")),
            "types": list(types),
        }
        for policy_type in types:
            body[policy_type.lower()] = [{"action": "Deny"}]
        name = f"np-tier-default-{index}"
        defaults.append(
            {
                "apiVersion": "projectcalico.org/v3",
                "kind": "GlobalNetworkPolicy",
                "metadata": {"name": name},
                "spec": body,
            }
        )
    return defaults


def calico_policies(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The translated ClusterNetworkPolicies plus the NetworkPolicy tier defaults; [] without any CNP."""
    cnps = [o for o in objects if o["kind"] == "ClusterNetworkPolicy"]
    if not cnps:
        return []
    policies = [o for o in objects if o["kind"] == "NetworkPolicy"]
    allow_rest = {
        "apiVersion": "projectcalico.org/v3",
        "kind": "GlobalNetworkPolicy",
        "metadata": {"name": "undecided-is-allowed"},
        "spec": {
            "order": LAST,
            "namespaceSelector": "all()",
            "types": ["Ingress", "Egress"],
            "ingress": [{"action": "Allow"}],
            "egress": [{"action": "Allow"}],
        },
    }
    return [global_policy(c) for c in cnps] + network_policy_tier_defaults(policies) + [allow_rest]
