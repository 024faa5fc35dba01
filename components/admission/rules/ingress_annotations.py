"""Rule 1c, Ingress annotations: only the allow-listed annotations of each governed controller.

Controller annotations can claim or rewrite other hosts (ingress-nginx `server-alias`), write raw
proxy configuration (`*-snippet`), send the tenant's requests and its users' credentials anywhere
(`auth-url`, `mirror-target`), or publish DNS for any name (external-dns `hostname`). The stack's
`tenancy:policy.ingressAnnotations` (components/model/settings/ingress_annotations.py) lists, per governed
prefix, the annotation names tenants may set; anything else under a governed prefix is refused.
Where the stack lists `classes`, an Ingress must also name one of them, so no tenant is served
by a controller meant for something else. Values of allowed annotations are held to a plain
character set as well: configuration injection through annotation values (CVE-2023-5044,
CVE-2025-1097 and kin) needs quotes, braces, semicolons, `#` or newlines, which no harmless
annotation value contains. Paths get the same treatment: with `use-regex` (or an older
ingress-nginx without path validation) a path reaches the generated configuration as written, so
paths are held to URL and regular-expression characters, without braces, quotes, semicolons, `#`,
backslashes or whitespace.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Validation,
    Variable,
    literal,
    literal_list,
    resource_rule,
)
from components.model.settings.ingress_annotations import IngressAnnotationPolicy

# Enough for paths with capture groups (`/$1`), CIDR lists, origins, sizes, durations and booleans.
SAFE_VALUE = r"^[A-Za-z0-9 $._:/,=*+-]*$"
# URL path characters and regular-expression operators, none of nginx's configuration syntax.
SAFE_PATH = r"^/[A-Za-z0-9$._~:/=*+()?|\[\]^,@!%&-]*$"
_UNSAFE_PATH = (
    "has(object.spec.rules) && object.spec.rules.exists(r, has(r.http) && r.http.paths.exists(p,"
    f" has(p.path) && !p.path.matches({literal(SAFE_PATH)})))"
)


def _governed_map(policy: IngressAnnotationPolicy) -> str:
    entries = ", ".join(
        f"{literal(prefix)}: {literal_list(names)}" for prefix, names in sorted(policy.governed().items())
    )
    return "{" + entries + "}"


# The pre-1.18 way to pick a class, still honoured by ingress-nginx when spec.ingressClassName is unset.
LEGACY_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


def class_check(classes: list[str]) -> Validation:
    """The Ingress names an allowed class. The DefaultIngressClass plugin (mutating, before this
    rule) fills in the cluster's default class first, so an Ingress naming none passes when the
    default is allowed; the legacy annotation may only repeat an allowed class."""
    allowed = literal_list(classes)
    legacy = literal(LEGACY_CLASS_ANNOTATION)
    return {
        "expression": f"has(object.spec.ingressClassName) && object.spec.ingressClassName in {allowed}"
        f" && (!({legacy} in variables.annotations) || variables.annotations[{legacy}] in {allowed})",
        "message_expression": (
            "'Ingress ' + object.metadata.name + ' must use an allowed IngressClass (' + "
            f"{allowed}.join(', ') + ') in spec.ingressClassName, and no other in {LEGACY_CLASS_ANNOTATION}; "
            "it names ' + (has(object.spec.ingressClassName) ? object.spec.ingressClassName : 'none')"
        ),
        "reason": "Forbidden",
    }


# Gateway API objects tenants write. external-dns publishes a route's
# `external-dns.alpha.kubernetes.io/hostname` and `target` (external-dns v0.20.0 source/gateway.go
# reads the route's annotations, as source/ingress.go reads an Ingress's); cert-manager's gateway-shim
# reads its annotations on what it watches. One allow-list for every kind that can carry them.
ROUTE_KINDS = ["httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "listenersets"]


def _annotation_variables(policy: IngressAnnotationPolicy) -> list[Variable]:
    governed = "k.contains('/') && k.split('/')[0] in variables.governed"
    return [
        TENANT_VARIABLE,
        {"name": "governed", "expression": _governed_map(policy)},
        {"name": "annotations", "expression": "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
        {
            "name": "denied",
            "expression": f"variables.annotations.filter(k, {governed}"
            " && !(k.split('/')[1] in variables.governed[k.split('/')[0]]))",
        },
        {
            "name": "unsafe",
            "expression": f"variables.annotations.filter(k, {governed}"
            f" && !variables.annotations[k].matches({literal(SAFE_VALUE)}))",
        },
    ]


def _annotation_checks(kind: str) -> list[Validation]:
    """The allow-list and the value character set, for `kind` in the messages."""
    return [
        {
            "expression": "size(variables.denied) == 0",
            "message_expression": (
                f"'{kind} annotation ' + variables.denied[0] + ' is not allowed for tenant ' + variables.tenant"
                " + ': it is not on the allow-list of its controller (tenancy:policy.ingressAnnotations)'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": "size(variables.unsafe) == 0",
            "message_expression": (
                f"'{kind} annotation ' + variables.unsafe[0] + ' has a value with characters outside "
                "letters, digits, spaces and $._:/,=*+- (configuration injection)'"
            ),
            "reason": "Forbidden",
        },
    ]


def routes_policy(policy: IngressAnnotationPolicy) -> PolicyDefinition:
    """Route and ListenerSet annotations, held to the same allow-list as an Ingress's: an
    external-dns `hostname` or `target` on a route publishes any name or address."""
    return PolicyDefinition(
        name="tenancy-route-annotations",
        rule="hostnames",
        resource_rules=[resource_rule("gateway.networking.k8s.io", ROUTE_KINDS, ["CREATE", "UPDATE"])],
        variables=_annotation_variables(policy),
        validations=_annotation_checks("route"),
    )


# Issue 43: `ingresses/status` keeps the annotations a request carries (k8s.io/kubernetes v1.36.3
# pkg/registry/networking/ingress/strategy.go, ingressStatusStrategy.PrepareForUpdate restores only
# the spec), so an identity allowed to write the status (the controller's, or a stray grant) could add
# a snippet there. Status writes are judged when they change an annotation, and only then: the
# controller's own status writes leave them as they are, also on Ingresses admitted under an older
# allow-list. (Routes and ListenerSets are custom resources, whose status strategy restores all but
# the status: nothing to judge there.)
STATUS_CHANGING_ANNOTATIONS = (
    "!has(request.subResource) || request.subResource == ''"
    " || (has(object.metadata.annotations) ? object.metadata.annotations : {})"
    " != (has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {})"
)


def policies(policy: IngressAnnotationPolicy) -> list[PolicyDefinition]:
    classes = [class_check(policy.classes)] if policy.classes else []
    return [
        PolicyDefinition(
            name="tenancy-ingress-annotations",
            rule="hostnames",
            resource_rules=[
                resource_rule("networking.k8s.io", ["ingresses"], ["CREATE", "UPDATE"]),
                resource_rule("networking.k8s.io", ["ingresses/status"], ["UPDATE"]),
            ],
            match_conditions=[{"name": "annotations-written", "expression": STATUS_CHANGING_ANNOTATIONS}],
            variables=_annotation_variables(policy),
            validations=[
                *_annotation_checks("Ingress"),
                {
                    "expression": f"!({_UNSAFE_PATH})",
                    "message_expression": (
                        "'Ingress ' + object.metadata.name + ' has a path with characters outside a URL path and "
                        "regular expressions (braces, quotes, semicolons, # and whitespace: configuration injection)'"
                    ),
                    "reason": "Forbidden",
                },
                *classes,
            ],
        ),
        routes_policy(policy),
    ]
