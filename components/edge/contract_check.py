"""A plan checked against what the edge's controllers accept (components/model/settings/edge_contracts.py).

Each rule is a fact a real controller enforces and the CRD schemas do not: the certificate source
of the Gateway's class, the scheme and target type an ALB needs to serve public names from ClusterIP
Services, the kinds the cloud's Gateway API has, the flags and policy external-dns needs, the
condition `pulumi up` waits on for each custom resource, the identity a chart's pods need before
they start. It reads plain data (the objects and resources of a plan), so the offline plan of every
stack is checked the same way (tests/edge/test_edge_contracts.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.model.core.await_rules import AWAITED, SKIP_AWAIT, expected_conditions, group_of
from components.model.settings import edge_contracts as contracts
from components.model.settings.stack import StackSettings

RELEASE = "kubernetes:helm.sh/v3:Release"
POD_IDENTITY = "aws:eks/podIdentityAssociation:PodIdentityAssociation"


@dataclass
class PlanView:
    """What the checks read of a plan: Kubernetes objects, and every resource's type, name,
    inputs and dependencies (URNs)."""

    objects: list[dict[str, Any]]
    resources: list[Any]
    by_urn: Mapping[str, Any] = field(default_factory=dict)


def _https_listeners(gateway: dict[str, Any]) -> list[dict[str, Any]]:
    return [lst for lst in gateway["spec"].get("listeners", []) if lst.get("protocol") == "HTTPS"]


def _of_kind(objects: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]


def gateway_problems(settings: StackSettings, view: PlanView) -> list[str]:
    """Certificates, scheme, targets and ListenerSet kinds against the class's implementation."""
    impl = settings.edge_facts().gateway
    problems: list[str] = []
    listeners = [*_of_kind(view.objects, "Gateway"), *_of_kind(view.objects, "ListenerSet")]
    for obj in listeners:
        where = f"{obj['kind']} {obj['metadata'].get('namespace')}/{obj['metadata']['name']}"
        for listener in _https_listeners(obj):
            refs = listener.get("tls", {}).get("certificateRefs", [])
            if impl.certificate_source == contracts.SECRET and not refs:
                problems.append(f"{where}: listener {listener['name']} has no certificateRefs ({impl.source})")
            if impl.certificate_source == contracts.ACM and refs:
                problems.append(
                    f"{where}: listener {listener['name']} names Secrets the controller ignores: "
                    f"certificates come from ACM only ({impl.source})"
                )
            if impl.certificate_source == contracts.CERTIFICATE_MAP and "tls" in listener:
                problems.append(
                    f"{where}: listener {listener['name']} carries tls beside the Gateway's certificate map, "
                    f"which GKE treats as an error ({impl.source})"
                )
    if impl.certificate_source == contracts.CERTIFICATE_MAP:
        for gateway in _of_kind(view.objects, "Gateway"):
            if not (gateway["metadata"].get("annotations") or {}).get(contracts.CERTMAP_ANNOTATION):
                problems.append(
                    f"Gateway {gateway['metadata']['name']}: no {contracts.CERTMAP_ANNOTATION} annotation, so its "
                    f"load balancer has no certificate ({impl.source})"
                )
    if impl.certificate_source == contracts.ACM:
        problems += _alb_problems(settings, view)
    served = contracts.listener_sets_served(settings.edge_facts().gateway, settings.kubernetes_version)
    if not served:
        installed = contracts.gateway_api_version(impl, settings.kubernetes_version)
        why = f"Gateway API {installed} with Kubernetes {settings.kubernetes_version}, class support {impl.source}"
        for obj in _of_kind(view.objects, "ListenerSet"):
            problems.append(
                f"ListenerSet {obj['metadata'].get('namespace')}/{obj['metadata']['name']}: not served ({why})"
            )
        for gateway in _of_kind(view.objects, "Gateway"):
            if "allowedListeners" in gateway["spec"]:
                problems.append(
                    f"Gateway {gateway['metadata']['name']}: allowedListeners is not in the installed CRD and "
                    f"is dropped by the server, a diff on every up ({why})"
                )
    return problems


def _alb_problems(settings: StackSettings, view: PlanView) -> list[str]:
    """Every ALB Gateway names a LoadBalancerConfiguration that is internet-facing, carries an ACM
    certificate for every HTTPS hostname, and targets pods by IP."""
    problems: list[str] = []
    configs = {
        (o["metadata"].get("namespace"), o["metadata"]["name"]): o
        for o in _of_kind(view.objects, "LoadBalancerConfiguration")
    }
    target_configs = {
        (o["metadata"].get("namespace"), o["metadata"]["name"]): o
        for o in _of_kind(view.objects, "TargetGroupConfiguration")
    }
    for gateway in _of_kind(view.objects, "Gateway"):
        namespace = gateway["metadata"].get("namespace")
        ref = gateway["spec"].get("infrastructure", {}).get("parametersRef", {})
        config = configs.get((namespace, ref.get("name"))) if ref.get("kind") == contracts.LB_CONFIG_KIND else None
        where = f"Gateway {namespace}/{gateway['metadata']['name']}"
        if config is None:
            problems.append(f"{where}: no LoadBalancerConfiguration (scheme, ACM certificates, target type)")
            continue
        spec = config["spec"]
        if spec.get("scheme") != contracts.PUBLIC_SCHEME:
            problems.append(f"{where}: scheme {spec.get('scheme')!r}, the controller's default is internal")
        https = [c for c in spec.get("listenerConfigurations", []) if c.get("protocolPort") == "HTTPS:443"]
        if not https or not https[0].get("defaultCertificate"):
            problems.append(f"{where}: HTTPS:443 has no ACM defaultCertificate (discovery fails the whole build)")
        default_tg = spec.get("defaultTargetGroupConfiguration", {}).get("name")
        target = target_configs.get((namespace, default_tg))
        if target is None or target["spec"].get("defaultConfiguration", {}).get("targetType") != contracts.IP_TARGETS:
            problems.append(f"{where}: targets are not `ip`; the default `instance` needs NodePort Services")
    return problems


def external_dns_problems(settings: StackSettings, view: PlanView) -> list[str]:
    """Zone flags, the deleting policy, wildcard TXT names and ListenerSet sources."""
    releases = [r for r in view.resources if r.type == RELEASE and r.name.endswith("-external-dns")]
    problems: list[str] = []
    for release in releases:
        values = release.inputs.get("values", {})
        provider = values.get("provider", {}).get("name", "")
        contract = contracts.EXTERNAL_DNS_PROVIDERS.get(provider)
        args: list[str] = list(values.get("extraArgs", []))
        if contract is None:
            problems.append(f"external-dns: provider {provider!r} has no contract")
            continue
        for flag, owner in contracts.EXTERNAL_DNS_FOREIGN_FLAGS.items():
            if any(a.startswith(flag) for a in args):
                problems.append(f"external-dns: {flag} is read by {owner} only ({contract.source})")
        if not any(a.startswith(contract.zone_flag + "=") for a in args):
            problems.append(f"external-dns: no {contract.zone_flag} ({contract.source})")
        if values.get("policy") != contracts.EXTERNAL_DNS_POLICY or values.get("registry") != "txt":
            problems.append(
                f"external-dns: policy {values.get('policy')!r}: records of offboarded tenants are never deleted "
                "(sync with the TXT registry deletes only its own)"
            )
        if not values.get("txtOwnerId"):
            problems.append("external-dns: no txtOwnerId (sync would not know its own records)")
        wildcards = _wildcard_hostnames(view.objects)
        if wildcards and not any(a.startswith(contracts.EXTERNAL_DNS_WILDCARD_FLAG + "=") for a in args):
            problems.append(
                f"external-dns: wildcard names ({', '.join(wildcards[:3])}) need --txt-wildcard-replacement"
            )
        listener_sets = bool(_of_kind(view.objects, "ListenerSet"))
        if listener_sets:
            app = contracts.EXTERNAL_DNS_APP_VERSIONS.get(str(release.inputs.get("version")), "0")
            if not values.get("enableGatewayListenerSets"):
                problems.append(
                    "external-dns: routes attached through ListenerSets are skipped without enableGatewayListenerSets"
                )
            if contracts.version_tuple(app) < contracts.EXTERNAL_DNS_LISTENER_SETS_SINCE:
                problems.append(f"external-dns: app {app} reads no ListenerSet (from v0.21.0, chart 1.21.x)")
    return problems


def _wildcard_hostnames(objects: Sequence[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for obj in objects:
        if obj.get("kind") == "HTTPRoute":
            names += [h for h in obj["spec"].get("hostnames", []) if h.startswith("*.")]
        if obj.get("kind") in ("Gateway", "ListenerSet"):
            names += [
                lst["hostname"] for lst in obj["spec"].get("listeners", []) if lst.get("hostname", "").startswith("*.")
            ]
    return sorted(set(names))


def await_problems(view: PlanView) -> list[str]:
    """Every custom resource of an awaited kind waits for its controller's condition, or says it does not."""
    problems: list[str] = []
    for obj in view.objects:
        rule = AWAITED.get((group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind"))))
        if rule is None:
            continue
        annotations = obj["metadata"].get("annotations") or {}
        if annotations.get(SKIP_AWAIT) == "true":
            continue
        where = f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
        conditions = expected_conditions(annotations)
        if conditions != [rule.condition]:
            problems.append(
                f"{where}: waits for {conditions or 'nothing'}, the controller sets {rule.condition} ({rule.source})"
            )
    return problems


def identity_order_problems(view: PlanView) -> list[str]:
    """EKS: a chart whose pods act as an IAM role starts after the role's Pod Identity association
    (the agent injects credentials at pod start; a pod started before has none until restarted)."""
    associations = [r for r in view.resources if r.type == POD_IDENTITY]
    problems: list[str] = []
    for association in associations:
        role = association.name.removeprefix("platform-edge-").removesuffix("-pod-identity")
        releases = [r for r in view.resources if r.type == RELEASE and r.name == f"platform-edge-{role}"]
        for release in releases:
            if association.urn not in release.dependencies:
                problems.append(f"{release.name}: starts before its Pod Identity association {association.name}")
    return problems


def contract_problems(settings: StackSettings, view: PlanView) -> list[str]:
    """Every edge contract rule, against one plan."""
    return [
        *gateway_problems(settings, view),
        *external_dns_problems(settings, view),
        *await_problems(view),
        *identity_order_problems(view),
    ]
