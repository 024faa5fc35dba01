"""Refusals for the edge (`tenancy:edge`, a tenant's `routePorts` and app `hostnames`), before anything is registered.

A cloud whose load balancer has no fixed address range
needs the stack to name one; ACME needs an account; an app's hostname must be the tenant's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.model.checks.domain_claims import domains_overlap
from components.model.core.errors import Problem
from components.model.core.labels import default_domain
from components.model.settings.edge import controller_chart
from components.model.tenant_file.hostnames import covers, environment_name, resolve, served_hostnames

if TYPE_CHECKING:
    from components.model.settings.stack import StackSettings
    from components.model.tenant_file.spec import TenantSpec

_KEY = "tenancy:edge"


def hostname_authorized(hostname: str, patterns: list[str]) -> bool:
    """Whether `hostname` lies inside one of `patterns`, as the admission rule decides it
    (components/admission/rules/hostnames.py `authorized`): equal, or one label below a `*.x` pattern."""
    return any(covers(p, hostname) for p in patterns)


def edge_settings_problems(settings: StackSettings) -> list[Problem]:
    """Problems of `tenancy:edge` against the rest of the stack's settings."""
    edge, source, facts = settings.edge, settings.source, settings.edge_facts()
    problems: list[Problem] = []
    platform = {ns.name for ns in settings.platform_namespaces}
    if edge.gateway.enabled:
        if facts.needs_source_cidrs and not edge.gateway.source_cidrs:
            problems.append(
                Problem(
                    source,
                    f"{_KEY}.gateway.sourceCidrs",
                    "the load balancer reaches pods from its own addresses: name the CIDRs of the subnets it is "
                    "placed in (or set gateway.enabled: false)",
                )
            )
        if facts.needs_roles and edge.gateway.controller_role_arn is None and controller_chart(edge.gateway, facts):
            problems.append(
                Problem(
                    source,
                    f"{_KEY}.gateway.controllerRoleArn",
                    "the AWS Load Balancer Controller needs its IAM role (bound to it by Pod Identity)",
                )
            )
    if edge.ingress.enabled and edge.ingress.namespace not in platform:
        problems.append(
            Problem(
                source,
                "tenancy:platformNamespaces",
                f"ingress is enabled: list its controller's namespace {edge.ingress.namespace!r} here",
            )
        )
    if edge.tls.enabled and facts.cloud_dns:
        if edge.tls.acme is None:
            problems.append(
                Problem(source, f"{_KEY}.tls.acme", "certificates on a cloud come from ACME: give its account email")
            )
        if facts.needs_roles and edge.tls.role_arn is None:
            problems.append(
                Problem(source, f"{_KEY}.tls.roleArn", "cert-manager needs an IAM role for Route 53 DNS-01")
            )
    external = edge.external_dns
    cloud_dns = facts.cloud_dns and (external.enabled or edge.tls.enabled)
    if cloud_dns and not edge.zones:
        problems.append(
            Problem(
                source,
                f"{_KEY}.zones",
                "name the DNS zones of the domain suffix: external-dns writes there only, ACME answers there",
            )
        )
    if external.enabled and facts.needs_roles and external.role_arn is None:
        problems.append(Problem(source, f"{_KEY}.externalDns.roleArn", "external-dns needs an IAM role"))
    return problems


def _claimable(spec: TenantSpec, environment: str, suffix: str) -> list[str]:
    """What an environment may be given: the tenant's own name, the environment's name under the
    suffix, and names its `domains` cover (a certificate can be issued for each)."""
    own = default_domain(spec.name, suffix)
    return [own, environment_name(spec.name, environment, suffix), *spec.domains]


def _hostname_map_problems(spec: TenantSpec, suffix: str) -> list[tuple[str, str]]:
    """The `hostnames` map: known environments, names the tenant owns, one environment per name."""
    problems = [
        (
            f"hostnames.{environment}",
            f"{environment!r} is not an environment of the tenant ({', '.join(spec.environments)})",
        )
        for environment in spec.hostnames
        if environment not in spec.environments
    ]
    served = {environment: served_hostnames(spec, environment, suffix) for environment in spec.environments}
    for environment, templates in spec.hostnames.items():
        if environment not in served:
            continue
        claimable = _claimable(spec, environment, suffix)
        for position, template in enumerate(templates):
            name = resolve(template, suffix=suffix, environment=environment)
            if not hostname_authorized(name, claimable):
                problems.append(
                    (
                        f"hostnames.{environment}.{position}",
                        f"{template!r} ({name}) is not one of the tenant's names for {environment} "
                        f"({', '.join(claimable)}); list a domain in `domains` first",
                    )
                )
    environments = list(served)
    for index, first in enumerate(environments):
        for second in environments[index + 1 :]:
            for name in served[second]:
                clash = next((other for other in served[first] if domains_overlap(other, name)), None)
                if clash is not None:
                    where = f"hostnames.{second}" if second in spec.hostnames else f"hostnames.{first}"
                    problems.append(
                        (
                            where,
                            f"{name!r} ({second}) overlaps {clash!r} ({first}): a name is served by one environment "
                            "only; list each environment's names in `hostnames`",
                        )
                    )
    return problems


def tenant_edge_problems(spec: TenantSpec, suffix: str) -> list[tuple[str, str]]:
    """(field, message) for the `hostnames` map and for app hostnames an environment does not serve."""
    problems = _hostname_map_problems(spec, suffix)
    for index, app in enumerate(spec.apps):
        environments = [e for e in app.environments or spec.environments if e in spec.environments]
        for position, template in enumerate(app.hostnames):
            refused = [
                f"{environment} ({resolve(template, suffix=suffix, environment=environment)})"
                for environment in environments
                if not hostname_authorized(
                    resolve(template, suffix=suffix, environment=environment),
                    served_hostnames(spec, environment, suffix),
                )
            ]
            if refused:
                problems.append(
                    (
                        f"apps.{index}.hostnames.{position}",
                        f"{template!r} is not a name these environments serve: {', '.join(refused)}; a name is served "
                        "by one environment (`hostnames`, docs/edge.md): limit the app's `environments` or write "
                        "`<tenant>-{environment}.{suffix}`",
                    )
                )
    return problems
