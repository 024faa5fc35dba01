"""Rule 1b, certificate names: a Certificate names only hosts inside the tenant's domains.

cert-manager issues from shared (Cluster)Issuers, so a tenant's Certificate is the platform's CA or
ACME account vouching for every name in it. Every name-bearing field of `cert-manager.io/v1`
Certificate is checked against the Namespace's authorized domains (rules/hostnames.py):
`dnsNames`, `commonName`, the CN attributes of `literalSubject`, the host of each `uris` entry
(a SPIFFE ID's trust domain too) and the domain of each `emailAddresses` entry. IP SANs,
`otherNames` (UPNs and the like) and `isCA` have no tenant meaning and are refused: a CA
certificate from a shared issuer would sign any name.

CertificateRequests are not governed here because tenants may not create them at all
(components/platform/roles.py): their `spec.request` is a PEM CSR that CEL cannot parse, so only
cert-manager writes them, from Certificates this rule has admitted.
"""

from __future__ import annotations

from components.admission.base import TENANT_VARIABLE, PolicyDefinition, Validation, literal_list, resource_rule
from components.admission.rules.hostnames import AUTHORIZED, authorized, outside

_SPEC = "object.spec"
# RFC 4514 escapes, hex-encoded values, quotes and the old ';' separator would let a CN hide from
# the simple split below; a tenant has no need for them.
_SUBJECT_ESCAPES = ["\\", '"', "#", ";", "<", ">"]


def _list(field: str) -> str:
    return f"(has({_SPEC}.{field}) ? {_SPEC}.{field} : [])"


def _uri_host(u: str) -> str:
    """CEL: the host of URI `u` (scheme://[userinfo@]host[:port]/...), '' when it has no `://`."""
    authority = f"(size({u}.split('://')) == 2 ? {u}.split('://')[1] : '').split('/')[0].split('?')[0].split('#')[0]"
    return f"{authority}.split('@')[size({authority}.split('@')) - 1].split(':')[0]"


def _email_domain(e: str) -> str:
    return f"(size({e}.split('@')) == 2 ? {e}.split('@')[1] : '')"


def _forbidden(expression: str, message: str) -> Validation:
    return {"expression": expression, "message": message, "reason": "Forbidden"}


def certificates_policy() -> PolicyDefinition:
    subject = f"{_SPEC}.literalSubject"
    parts = f"{subject}.replace('+', ',').split(',').map(p, p.trim())"
    return PolicyDefinition(
        name="tenancy-hostnames-certificates",
        rule="hostnames",
        resource_rules=[resource_rule("cert-manager.io", ["certificates"], ["CREATE", "UPDATE"])],
        variables=[
            TENANT_VARIABLE,
            AUTHORIZED,
            {
                "name": "subjectNames",
                "expression": f"has({subject}) ? {parts}.filter(p, p.split('=')[0].trim().lowerAscii() in "
                "['cn', '2.5.4.3', 'oid.2.5.4.3', 'commonname']).map(p, p.substring(p.indexOf('=') + 1).trim()) : []",
            },
            {
                "name": "names",
                "expression": f"{_list('dnsNames')} + (has({_SPEC}.commonName) ? [{_SPEC}.commonName] : [])"
                " + variables.subjectNames",
            },
            {"name": "deniedHosts", "expression": f"variables.names.filter(h, !{authorized('h')})"},
            {
                "name": "deniedUris",
                "expression": f"{_list('uris')}.filter(u, !{authorized(_uri_host('u'))})",
            },
            {
                "name": "deniedEmails",
                "expression": f"{_list('emailAddresses')}.filter(e, !{authorized(_email_domain('e'))})",
            },
        ],
        validations=[
            outside("certificate name", "deniedHosts"),
            outside("certificate URI", "deniedUris"),
            outside("certificate email address", "deniedEmails"),
            _forbidden(
                f"!has({subject}) || !{literal_list(_SUBJECT_ESCAPES)}.exists(c, {subject}.contains(c))",
                "certificate literalSubject may not use escapes, quotes, '#' or ';' (they could hide a CN)",
            ),
            _forbidden(
                f"size({_list('ipAddresses')}) == 0",
                "certificates of tenants may not carry IP address SANs; name a host inside the tenant's domains",
            ),
            _forbidden(
                f"size({_list('otherNames')}) == 0",
                "certificates of tenants may not carry otherNames SANs",
            ),
            _forbidden(
                f"!has({_SPEC}.isCA) || !{_SPEC}.isCA",
                "certificates of tenants may not be CA certificates (isCA): a CA from a shared issuer signs any name",
            ),
        ],
    )


def policies() -> list[PolicyDefinition]:
    return [certificates_policy()]
