"""Validation messages a person can act on: unknown fields get a "did you mean" and the list of the
fields allowed there, pattern rules are named in words, YAML indented with tabs says what to do.

pydantic reports `Extra inputs are not permitted` and `String should match pattern '^[a-z]...$'`;
both are true and neither says what to type. The fields a place allows come from the model's own
JSON schema (so a new field is suggested without touching this module); the words for a pattern
come from the table below, keyed by the exact pattern (a pattern missing here keeps pydantic's text,
and tests/model/test_messages.py fails until it is described).
"""

from __future__ import annotations

import difflib
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

PATTERN_WORDS: dict[str, str] = {
    r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/\S+$": (
        "an ACM certificate ARN such as 'arn:aws:acm:eu-west-1:123456789012:certificate/<id>'"
    ),
    r"^(?!system:)[^\s,]+$": "a user or group name without spaces or commas, not starting with 'system:'",
    r"^[^\s',]+$": "a user or group name without spaces, quotes or commas",
    r"^[a-z][a-z0-9_]{0,30}$": "a database name: a lowercase letter, then up to 30 lowercase letters, digits or '_'",
    r"^[A-Za-z0-9_-]+(\[[0-9]{1,5}\])*(\.[A-Za-z0-9_-]+(\[[0-9]{1,5}\])*)*$": (
        "a Helm value path such as 'db.hosts[0].name'"
    ),
    r"^[a-z]([-a-z0-9]*[a-z0-9])?$": "a DNS label: lowercase letters, digits and '-', starting with a letter",
    r"^[a-z][-a-z0-9]*/[a-z][a-z0-9_]{0,30}$": "'<environment>/<database>', such as 'dev/orders'",
    r"^(https|oci)://[^\s]+$": "an https:// or oci:// URL",
    r"^(https|oci)://[^\s]+[^\s/]$": "an https:// or oci:// URL without a trailing '/'",
    r"^[a-z0-9][-a-z0-9_.]*$": "a chart name: lowercase letters, digits, '-', '_' and '.'",
    r"^\d+(\.\d+)?$": "a version number such as '16' or '8.4'",
    r"^(https://|ssh://)[^\s]+$": "an https:// or ssh:// URL",
    r"^\d+(s|m|h)$": "a duration such as '30s', '5m' or '1h'",
    r"^[a-f0-9]{40}$": "a full 40-character git commit SHA in lowercase hex",
    r"^[a-z0-9][a-z0-9._/:-]*[a-z0-9]$": "an image repository such as 'ghcr.io/acme/web'",
    r"^[-._a-zA-Z0-9]+$": "a key of letters, digits, '-', '_' and '.'",
    r"^[A-Za-z0-9_-]{1,63}$": "1 to 63 letters, digits, '-' or '_' (no spaces)",
    r"^[a-zA-Z0-9_-]{1,63}$": "1 to 63 letters, digits, '-' or '_' (no spaces)",
    r"^(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]([-a-z0-9]*[a-z0-9])?$": (
        "a lowercase domain name such as 'shop.example.com', optionally starting with '*.'"
    ),
    # tenant_file/hostnames.py: the schema's pattern for hostname templates (the model words its own errors).
    r"^(\*\.)?[a-z0-9{][-a-z0-9{}.]*[a-z0-9}]$": (
        "a lowercase domain name such as 'shop.example.com' or 'acme-{environment}.{suffix}', optionally "
        "starting with '*.'"
    ),
    r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$": "an AWS region such as 'eu-west-1'",
    r"^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/\S+$": "an IAM OIDC provider ARN",
    r"^[a-z0-9.-]+(/[A-Za-z0-9._-]+)*$": "an OIDC issuer host and path, without https://",
    r"^arn:aws[a-z-]*:iam::\d{12}:role/\S+$": "an IAM role ARN such as 'arn:aws:iam::111122223333:role/name'",
    r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9_+=,.@/-]+$": (
        "an IAM role ARN such as 'arn:aws:iam::111122223333:role/name'"
    ),
    r"^(([0-9]+(s|m|h))+|Never)$": "a duration such as '10m' or '1h30m', or 'Never'",
    r"^((100|[0-9]{1,2})%|[0-9]+)$": "a node count such as '2' or a percentage such as '10%'",
    r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$": "a duration in hours and minutes such as '11h' or '1h30m'",
    # fields.QUANTITY_PATTERN: the schema's pattern for quantities (the model's own check words its errors).
    r"^\+?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$": (
        "a Kubernetes quantity such as '500m', '2', '512Mi' or '4Gi'"
    ),
    r"^subnet-[0-9a-f]{8,17}$": "a subnet ID such as 'subnet-0a1b2c3d'",
    r"^vpc-[0-9a-f]{8,17}$": "a VPC ID such as 'vpc-0a1b2c3d'",
    r"^sg-[0-9a-f]{8,17}$": "a security group ID such as 'sg-0a1b2c3d'",
    r"^[a-z0-9][a-z0-9.:-]*(/[a-z0-9._-]+)*$": "an image registry such as 'ghcr.io/example' (host, port, path)",
    r"^https://[^\s]+$": "an https:// URL",
    r"^https://\S+$": "an https:// URL",
    r"^[a-z0-9][a-z0-9.-]*\.[a-z]{2,63}$": "a lowercase domain such as 'example.com'",
    r"^[A-Za-z0-9][A-Za-z0-9._-]*$": "a DNS zone name or hosted zone id (letters, digits, '.', '_', '-')",
    r"^\d+\.\d+\.\d+$": "a version such as '2.17.2'",
    r"^v?\d+\.\d+\.\d+$": "a version such as '2.17.2' or 'v1.21.1'",
    r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$": "a GCP project ID: 6 to 30 lowercase letters, digits or '-'",
    r"^[a-z]+-[a-z]+[0-9]$": "a GCP region such as 'europe-west1'",
    r"^[a-z]+-[a-z]+[0-9]-[a-z]$": "a GCP zone such as 'europe-west1-b'",
    r"^[a-z][-a-z0-9]{4,28}[a-z0-9]@[a-z][-a-z0-9.:]+$": "a service account e-mail such as 'nodes@project.iam...'",
    r"^[A-Za-z0-9]+([._-]+[A-Za-z0-9]+)*$": "a name of letters and digits, separated by '.', '_' or '-'",
    r"^[A-Za-z0-9_+=,.@-]{1,64}$": "an IAM role name (1 to 64 characters, no '/')",
    r"^(al2023|bottlerocket)@(latest|v[0-9][0-9.]*)$": "an AMI alias such as 'al2023@latest' or 'al2023@v20251103'",
    r"^[a-z0-9]+([.-]+[a-z0-9]+)*$": "a lowercase DNS name: letters, digits, '.' and '-'",
    r"^[A-Za-z0-9_/.-]{1,255}$": "a secret name of letters, digits, '/', '.', '_' and '-'",
    r"^1\.(3[0-9])$": "a Kubernetes minor version such as '1.34'",
    r"^[a-z0-9 ._-]{1,255}$": "a DB subnet group name: lowercase letters, digits, spaces, '.', '_' and '-'",
}


# pydantic's type errors ("Input should be a valid list") in words that say what to write.
TYPE_WORDS: dict[str, str] = {
    "list_type": "a list, such as [a, b] or lines starting with '- '",
    "string_type": "text (put it in quotes if it looks like a number or true/false)",
    "int_type": "a whole number such as 20",
    "int_parsing": "a whole number such as 20",
    "int_from_float": "a whole number such as 20, without a fraction",
    "float_type": "a number such as 1.5",
    "float_parsing": "a number such as 1.5",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "date_type": "a date such as 2026-01-15",
    "date_from_datetime_parsing": "a date such as 2026-01-15",
}


def _shown(error: ErrorDetails) -> str:
    """The value as written: a mapping or list is named by its kind, not dumped."""
    value = error.get("input")
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


@cache
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True)


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas a node may be: follows $ref and every anyOf/oneOf/allOf branch."""
    if "$ref" in node:
        return _resolve(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    branches = [b for key in ("anyOf", "oneOf", "allOf") for b in node.get(key, [])]
    if branches:
        return [resolved for branch in branches for resolved in _resolve(branch, defs)]
    return [node]


def _step(nodes: list[dict[str, Any]], part: int | str, defs: dict[str, Any]) -> list[dict[str, Any]]:
    # A tagged union's branch: pydantic puts the tag ('existing') in the location.
    tagged = [n for n in nodes if any(p.get("const") == part for p in n.get("properties", {}).values())]
    if tagged:
        return tagged
    found: list[dict[str, Any]] = []
    for node in nodes:
        if isinstance(part, int) and "items" in node:
            found += _resolve(node["items"], defs)
        elif isinstance(part, str) and part in node.get("properties", {}):
            found += _resolve(node["properties"][part], defs)
        elif isinstance(part, str) and isinstance(node.get("additionalProperties"), dict):
            found += _resolve(node["additionalProperties"], defs)
        elif isinstance(part, str) and node.get("patternProperties"):
            found += [r for value in node["patternProperties"].values() for r in _resolve(value, defs)]
    # Other parts pydantic adds to a location ('function-after[...]') name no field: skip them.
    return found or nodes


def allowed_fields(model: type[BaseModel], location: tuple[int | str, ...]) -> list[str]:
    """The field names the schema allows at `location` (the location of the mapping)."""
    schema = _schema(model)
    defs = schema.get("$defs", {})
    nodes = _resolve(schema, defs)
    for part in location:
        nodes = _step(nodes, part, defs)
    return sorted({name for node in nodes for name in node.get("properties", {})})


def problem_message(error: ErrorDetails, model: type[BaseModel]) -> str:
    """pydantic's message, made actionable where it can be."""
    if error["type"] == "extra_forbidden" and error["loc"]:
        *parent, unknown = error["loc"]
        allowed = allowed_fields(model, tuple(parent))
        if unknown in allowed:
            # The mapping is one of several kinds (node pools) and another kind has this field.
            return f"unknown field {unknown!r} for this kind (other kinds have it)"
        close = difflib.get_close_matches(str(unknown), allowed, n=1, cutoff=0.6)
        if close:
            # The guess first; the whole list too, for when the guess is not what was meant.
            return f"unknown field {unknown!r}; did you mean {close[0]!r}? (allowed here: {', '.join(allowed)})"
        if allowed:
            return f"unknown field {unknown!r}; allowed here: {', '.join(allowed)}"
        return f"unknown field {unknown!r}"
    if error["type"] in ("model_type", "dict_type", "model_attributes_type"):
        allowed = allowed_fields(model, tuple(error["loc"]))
        fields = f" of {', '.join(allowed)}" if allowed else ""
        return f"must be a mapping{fields}, written as indented `field: value` lines below it; got {_shown(error)}"
    if error["type"] in TYPE_WORDS:
        return f"must be {TYPE_WORDS[error['type']]}; got {_shown(error)}"
    if error["type"] == "string_pattern_mismatch":
        pattern = str((error.get("ctx") or {}).get("pattern", ""))
        if pattern in PATTERN_WORDS:
            return f"must be {PATTERN_WORDS[pattern]}; got {error['input']!r}"
    return error["msg"]


def yaml_hint(problem: str, line: str = "") -> str:
    """What to do about a YAML syntax error; tabs are the usual cause in hand-edited files. `line` is
    the text of the line the error points at: a tab in its indentation is the cause even where the
    parser only says "found character that cannot start any token"."""
    indentation = line[: len(line) - len(line.lstrip(" \t"))]
    if "tab character" in problem or "\\t" in problem or "\t" in problem or "\t" in indentation:
        return "YAML indents with spaces, not tabs: replace the tab with spaces"
    return ""
