"""A small evaluator of GitHub Actions `if:` expressions, to ask what a condition does in a context.

It follows GitHub's documentation, "Evaluate expressions in workflows and actions"
(https://docs.github.com/en/actions/reference/workflows-and-actions/expressions): literals in
single quotes, `!`, `==`, `!=`, `&&`, `||`, parentheses; `a && b` / `a || b` return an operand (not a
boolean); strings compare case-insensitively; a missing property is null (falsy, equal to '');
`if:` may omit `${{ }}`. The status functions `success()`, `failure()`, `always()`, `cancelled()`
come from the context (`status` key); `format('{0}-{1}', a, b)` substitutes its arguments.
Only what the workflows here use is supported: anything else
raises, so a test never passes on an expression it did not understand.
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|!|\(|\)|,)|(?P<call>[A-Za-z_]\w*)\(\)"
    r"|(?P<func>format)\("
    r"|(?P<number>\d+)|(?P<name>[A-Za-z_][\w.-]*(?:\[\*\])?))"
)
STATUS_FUNCTIONS = {"success", "failure", "always", "cancelled"}


def tokens(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot read the expression at {text[position:]!r}")
        kind = match.lastgroup
        assert kind is not None
        found.append((kind, match.group(kind)))
        position = match.end()
    return found


def _truthy(value: Any) -> bool:
    return value not in (None, "", 0, False)


def _equal(left: Any, right: Any) -> bool:
    left = "" if left is None else left
    right = "" if right is None else right
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    return bool(left == right)


class _Parser:
    def __init__(self, items: list[tuple[str, str]], context: dict[str, Any]) -> None:
        self.items = items
        self.index = 0
        self.context = context

    def peek(self) -> tuple[str, str] | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def take(self) -> tuple[str, str]:
        item = self.items[self.index]
        self.index += 1
        return item

    def parse_or(self) -> Any:
        value = self.parse_and()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.parse_and()
            value = value if _truthy(value) else right
        return value

    def parse_and(self) -> Any:
        value = self.parse_compare()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.parse_compare()
            value = right if _truthy(value) else value
        return value

    def parse_compare(self) -> Any:
        value = self.parse_unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            _, op = self.take()
            right = self.parse_unary()
            value = _equal(value, right) if op == "==" else not _equal(value, right)
        return value

    def parse_unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not _truthy(self.parse_unary())
        return self.parse_atom()

    def parse_atom(self) -> Any:
        kind, text = self.take()
        if kind == "op" and text == "(":
            value = self.parse_or()
            if self.take() != ("op", ")"):
                raise ValueError("unbalanced parentheses")
            return value
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return int(text)
        if kind == "func":
            return self._format()
        if kind == "call":
            if text not in STATUS_FUNCTIONS:
                raise ValueError(f"function {text}() is not supported")
            status = self.context.get("status", "success")
            return {
                "success": status == "success",
                "failure": status == "failure",
                "cancelled": status == "cancelled",
                "always": True,
            }[text]
        if kind == "name":
            if text in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[text]
            return self.context.get(text)
        raise ValueError(f"unexpected {text!r}")

    def _format(self) -> str:
        """`format(template, args...)`: `{N}` is argument N, `{{` and `}}` are literal braces."""
        arguments = [self.parse_or()]
        while self.peek() == ("op", ","):
            self.take()
            arguments.append(self.parse_or())
        if self.take() != ("op", ")"):
            raise ValueError("unbalanced parentheses in format()")
        template, values = str(arguments[0]), [_format_value(v) for v in arguments[1:]]
        parts = re.split(r"(\{\{|\}\}|\{\d+\})", template)
        return "".join(
            "{" if part == "{{" else "}" if part == "}}" else values[int(part[1:-1])] if part[:1] == "{" else part
            for part in parts
        )


def _format_value(value: Any) -> str:
    # GitHub converts null to '' and booleans to 'true' / 'false' when it formats them.
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    """The value of `expression` with context paths (`vars.X`, `github.actor`, ...) from `context`."""
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    parser = _Parser(tokens(text), context)
    value = parser.parse_or()
    if parser.peek() is not None:
        raise ValueError(f"unexpected {parser.peek()!r} in {expression!r}")
    return value


def runs(condition: str | None, context: dict[str, Any]) -> bool:
    """Whether a job or step with this `if:` runs: without one, it runs when nothing failed."""
    if condition is None:
        return bool(context.get("status", "success") == "success")
    text = condition.strip()
    uses_status = re.search(r"\b(success|failure|always|cancelled)\(\)", text) is not None
    result = _truthy(evaluate(text, context))
    # GitHub adds `success() &&` to a condition that calls no status function.
    return result and (uses_status or context.get("status", "success") == "success")
