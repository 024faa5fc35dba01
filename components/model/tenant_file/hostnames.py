"""Which environment of a tenant serves which hostnames, written once and resolved per stack.

A hostname belongs to exactly one environment of its tenant. If dev and prod could both claim a
name, a dev admin (a viewer in prod) could take prod's traffic with a more specific dev route or
ListenerSet under prod's names: the Gateway merges routes across namespaces and the longest match
wins (docs/admission-attacks.md, "Hostnames across environments").

Names are written once, with placeholders resolved per stack and per environment:
`{suffix}` is the stack's `domainSuffix` and `{environment}` the environment serving the name.

The safe default, for an environment the file's `hostnames` does not list:
- every environment serves `<tenant>-<environment>.<suffix>` (the namespace's own name, one label
  below the suffix, so the platform Gateway's `*.<suffix>` certificate covers it);
- the serving environment (the last of `environments`, `prod` for `[dev, prod]`) also serves
  `<tenant>.<suffix>` and every one of the tenant's `domains`.
A listed environment serves exactly its list. Moving a name is an edit of this map, and the plan
diff shows it (the namespace annotation admission reads, and the ListenerSet that moves).

No name two labels below the suffix (`api.<tenant>.<suffix>`): a wildcard certificate covers one
label only, so the platform Gateway could route such a name but no certificate would cover it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Protocol

from pydantic import AfterValidator, WithJsonSchema

from components.model.core.fields import check_domain


class TenantSpec(Protocol):
    """What this module reads of a tenant spec (components/model/tenant_file/spec.py imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def environments(self) -> Sequence[str]: ...
    @property
    def domains(self) -> Sequence[str]: ...
    @property
    def hostnames(self) -> Mapping[str, Sequence[str]]: ...


SUFFIX = "{suffix}"
ENVIRONMENT = "{environment}"
_PLACEHOLDERS = (SUFFIX, ENVIRONMENT)
# What a template must look like once its placeholders are filled (checked with sample values).
_SAMPLE = {SUFFIX: "suffix.example", ENVIRONMENT: "env"}
_TEMPLATE_PATTERN = r"^(\*\.)?[a-z0-9{][-a-z0-9{}.]*[a-z0-9}]$"


def _fill(value: str, values: dict[str, str]) -> str:
    for placeholder, replacement in values.items():
        value = value.replace(placeholder, replacement)
    return value


def _template(value: str) -> str:
    filled = _fill(value, _SAMPLE)
    if "{" in filled or "}" in filled:
        raise ValueError(f"{value!r}: the only placeholders are {SUFFIX} and {ENVIRONMENT}")
    if SUFFIX in value and not value.endswith("." + SUFFIX):
        raise ValueError(f"{value!r}: {SUFFIX} stands for the stack's domain suffix and ends a name (`web.{SUFFIX}`)")
    check_domain(filled)
    return value


HostnameTemplate = Annotated[
    str,
    AfterValidator(_template),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": _TEMPLATE_PATTERN,
            "description": "a lowercase DNS name (a leading `*.` for a wildcard); `{suffix}` is the stack's "
            "domain suffix, `{environment}` the environment that serves it",
        }
    ),
]


def resolve(template: str, *, suffix: str, environment: str) -> str:
    """A template as one stack and environment read it: `shop-{environment}.{suffix}` -> `shop-dev.<suffix>`."""
    return _fill(template, {SUFFIX: suffix, ENVIRONMENT: environment})


def environment_name(tenant: str, environment: str, suffix: str) -> str:
    """The name every tenant environment serves by default, like its namespace: `<tenant>-<env>.<suffix>`."""
    return f"{tenant}-{environment}.{suffix}"


def serving_environment(spec: TenantSpec) -> str:
    """The environment that serves the tenant's own name and domains by default: its last one."""
    return spec.environments[-1]


def default_hostnames(spec: TenantSpec, environment: str) -> list[str]:
    """The templates an environment serves when the file's `hostnames` does not list it."""
    names = [f"{spec.name}-{ENVIRONMENT}.{SUFFIX}"]
    if environment == serving_environment(spec):
        names = [f"{spec.name}.{SUFFIX}", *names, *spec.domains]
    return names


def served_hostnames(spec: TenantSpec, environment: str, suffix: str) -> list[str]:
    """The hostname patterns one environment serves on this stack: what admission holds its
    routes, ListenerSets, Ingresses and Certificates to (the namespace's authorized domains)."""
    templates = spec.hostnames.get(environment, default_hostnames(spec, environment))
    return list(dict.fromkeys(resolve(t, suffix=suffix, environment=environment) for t in templates))


def covers(pattern: str, hostname: str) -> bool:
    """Whether a served pattern covers a hostname as a certificate does: equal, or `*.x` for a
    name exactly one label below x (RFC 6125 6.4.3: a wildcard stands for one label). The
    admission rule decides the same (components/admission/rules/hostnames.py `authorized`)."""
    if pattern == hostname:
        return True
    if not pattern.startswith("*.") or not hostname.endswith(pattern[1:]):
        return False
    label = hostname[: -len(pattern) + 1]
    return bool(label) and "." not in label


_ONE_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def under_gateway(hostname: str, suffix: str) -> bool:
    """Whether the platform Gateway's `*.<suffix>` listener and certificate serve the name: one label below."""
    return hostname.endswith("." + suffix) and bool(_ONE_LABEL.match(hostname[: -len(suffix) - 1]))


def own_domain_names(spec: TenantSpec, environment: str, suffix: str) -> list[str]:
    """The names an environment serves that the platform Gateway's `*.<suffix>` listener and
    certificate do not cover: its share of the tenant's own domains, served by a listener of their own
    (a ListenerSet in the environment's namespace, or a listener of the Gateway on GKE)."""
    return [name for name in served_hostnames(spec, environment, suffix) if not under_gateway(name, suffix)]


def own_domain_listeners(spec: TenantSpec, suffix: str) -> list[tuple[str, str]]:
    """Every (environment, name) of the tenant's own domains, in environment order: one listener
    each. With the default map only the serving environment has any."""
    return [(env, name) for env in spec.environments for name in own_domain_names(spec, env, suffix)]


def certificate_map_hostnames(suffix: str, specs: Sequence[TenantSpec]) -> list[str]:
    """Every name a certificate map needs an entry (and a certificate) for on a stack whose tenant
    domains are listeners of the platform Gateway (GKE): the stack's wildcard, then each tenant's
    own domain names (tenants by name, names in environment order)."""
    names = [f"*.{suffix}"]
    for spec in sorted(specs, key=lambda s: s.name):
        names += [name for _, name in own_domain_listeners(spec, suffix)]
    return list(dict.fromkeys(names))


def authorization_domains(hostnames: Sequence[str]) -> list[str]:
    """The domains to authorize for those names: a DNS authorization covers a domain and its
    wildcard, so `*.x` and `x` share x's."""
    return list(dict.fromkeys(name.removeprefix("*.") for name in hostnames))


def is_template(value: str) -> bool:
    """Whether a string is a hostname template with a placeholder (and nothing else)."""
    if not any(p in value for p in _PLACEHOLDERS):
        return False
    try:
        _template(value)
    except ValueError:
        return False
    return True


def resolve_values(values: Any, *, suffix: str, environment: str) -> Any:
    """Chart values with every string that is a hostname template (`web-{environment}.{suffix}`)
    resolved, so a chart's own route names this stack's and environment's host. Only whole strings
    that are such a name are touched: `{environment}` inside any other text is left as written."""
    if isinstance(values, dict):
        return {k: resolve_values(v, suffix=suffix, environment=environment) for k, v in values.items()}
    if isinstance(values, list):
        return [resolve_values(v, suffix=suffix, environment=environment) for v in values]
    if isinstance(values, str) and is_template(values):
        return resolve(values, suffix=suffix, environment=environment)
    return values
