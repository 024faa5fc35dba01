"""A small, explicit evaluator of AWS IAM policy documents, for the identity reachability tests.

No maintained Python library evaluates allow/deny for an action and resource offline: the one that
does (principalmapper's `local_policy_simulation`) no longer imports on Python 3.10+ (`from
collections import Mapping`) and pins python-dateutil below what kubernetes needs; policyuniverse,
parliament and cloudsplaining parse, lint or rate policies but do not decide a request. So this
module implements the part of AWS's documented evaluation logic the platform's policies use, and
fails loudly on anything else (an unknown condition operator, a policy element it does not model)
rather than guessing:

- Explicit `Deny` wins over any `Allow`; without a matching `Allow` the request is denied
  (docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
- `Action`/`NotAction` match case-insensitively, `Resource`/`NotResource` case-sensitively, both
  with the `*` and `?` wildcards (reference_policies_elements_action.html, ..._resource.html).
- `Principal`: `"*"`, or `AWS`/`Service`/`Federated` values compared exactly.
- `Condition`: every operator block must match (AND), every key in it (AND), any value of a key
  (OR); keys compare case-insensitively; a key missing from the request fails a positive operator
  (reference_policies_elements_condition_operators.html). Operators: StringEquals, StringLike,
  StringNotEquals, StringNotLike, ArnEquals, ArnLike, Bool.

Tested against known cases in tests/clouds/test_iam_policy.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_MODELLED = {"Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Principal", "Condition"}


@dataclass(frozen=True)
class Request:
    """One API call: who (`principal`: (`AWS`|`Service`|`Federated`, value)) does what on which resource."""

    action: str
    resource: str | None = None
    principal: tuple[str, str] | None = None
    context: Mapping[str, str] = field(default_factory=dict)


def _listify(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def wildcard(pattern: str, value: str, *, case_sensitive: bool) -> bool:
    """IAM's `*` (any run of characters) and `?` (one character); everything else literal."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, 0 if case_sensitive else re.IGNORECASE) is not None


def _element(statement: dict[str, Any], positive: str, negative: str, value: str, *, case_sensitive: bool) -> bool:
    if positive in statement:
        return any(wildcard(p, value, case_sensitive=case_sensitive) for p in _listify(statement[positive]))
    if negative in statement:
        return not any(wildcard(p, value, case_sensitive=case_sensitive) for p in _listify(statement[negative]))
    raise ValueError(f"statement has neither {positive} nor {negative}: {statement}")


def _principal(statement: dict[str, Any], principal: tuple[str, str] | None) -> bool:
    if "Principal" not in statement:
        if principal is not None:
            raise ValueError(f"a resource policy statement without Principal: {statement}")
        return True
    if principal is None:
        raise ValueError("an identity policy has no Principal; evaluate it without one")
    given = statement["Principal"]
    if given == "*":
        return True
    kind, value = principal
    return value in _listify(given.get(kind, []))


def _operator(name: str, wanted: list[Any], actual: str | None) -> bool:
    if name in ("StringEquals", "ArnEquals"):
        return actual is not None and actual in [str(w) for w in wanted]
    if name in ("StringLike", "ArnLike"):
        return actual is not None and any(wildcard(str(w), actual, case_sensitive=True) for w in wanted)
    if name == "StringNotEquals":
        return actual is None or actual not in [str(w) for w in wanted]
    if name == "StringNotLike":
        return actual is None or not any(wildcard(str(w), actual, case_sensitive=True) for w in wanted)
    if name == "Bool":
        return actual is not None and actual.lower() in [str(w).lower() for w in wanted]
    raise NotImplementedError(f"condition operator {name} is not modelled")


def _condition(statement: dict[str, Any], context: Mapping[str, str]) -> bool:
    lowered = {key.lower(): value for key, value in context.items()}
    for name, block in statement.get("Condition", {}).items():
        for key, wanted in block.items():
            if not _operator(name, _listify(wanted), lowered.get(key.lower())):
                return False
    return True


def matches(statement: dict[str, Any], request: Request) -> bool:
    """Whether `statement` applies to `request` (whatever its Effect)."""
    unknown = set(statement) - _MODELLED
    if unknown:
        raise NotImplementedError(f"policy elements {sorted(unknown)} are not modelled")
    if not _principal(statement, request.principal):
        return False
    if not _element(statement, "Action", "NotAction", request.action, case_sensitive=False):
        return False
    scoped = request.resource is not None and ("Resource" in statement or "NotResource" in statement)
    if scoped and not _element(statement, "Resource", "NotResource", str(request.resource), case_sensitive=True):
        return False
    return _condition(statement, request.context)


def allowed(documents: list[dict[str, Any]], request: Request) -> bool:
    """AWS's decision over `documents` (all policies that apply): explicit deny, then any allow."""
    statements = [s for document in documents for s in _listify(document.get("Statement", []))]
    applying = [s for s in statements if matches(s, request)]
    if any(s["Effect"] == "Deny" for s in applying):
        return False
    return any(s["Effect"] == "Allow" for s in applying)
