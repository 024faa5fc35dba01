"""Evaluate a CRD's `x-kubernetes-validations` (CEL) rules on an object, with cel-cpp.

jsonschema (tests/k8s_schema.py) checks types and formats; the rules are what the API server adds on
top (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go: each rule runs with `self`
bound to the value at the schema node that declares it, for every present value, after the
schema's defaults are applied). Here: the same defaulting, then the walk over properties, items
and additionalProperties. Transition rules (naming `oldSelf`) need an
old object and are skipped; a rule using a Kubernetes-only CEL library function cel-cpp does not
have is counted as unsupported rather than passed, so a test can require that the rules it relies
on were evaluated.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_strings

from tests.k8s_schema import _crd_schemas


@dataclass
class RuleReport:
    """What evaluating the rules found: failures (path, message), how many ran, what was skipped."""

    failures: list[tuple[str, str]] = field(default_factory=list)
    evaluated: int = 0
    unsupported: list[str] = field(default_factory=list)


def with_defaults(schema: dict[str, Any], value: Any) -> Any:
    """`value` with the schema's `default`s filled in where absent, as the API server defaults a
    custom object before validating it (apiextensions-apiserver pkg/apiserver/schema/defaulting)."""
    if isinstance(value, dict):
        for key, child_schema in schema.get("properties", {}).items():
            if key not in value and "default" in child_schema:
                value[key] = copy.deepcopy(child_schema["default"])
            if key in value:
                value[key] = with_defaults(child_schema, value[key])
    elif isinstance(value, list) and "items" in schema:
        return [with_defaults(schema["items"], child) for child in value]
    return value


class CrdRules:
    """One cel-cpp environment with `self`; each rule text compiled once."""

    def __init__(self) -> None:
        self._env = cel.NewEnv(variables={"self": cel.Type.DYN}, extensions=[ext_strings.ExtStrings()])
        self._compiled: dict[str, Any] = {}

    def _program(self, rule: str) -> Any:
        if rule not in self._compiled:
            try:
                self._compiled[rule] = self._env.compile(rule)
            except Exception:  # a function only Kubernetes' CEL libraries define
                self._compiled[rule] = None
        return self._compiled[rule]

    def check(self, obj: dict[str, Any]) -> RuleReport:
        """Evaluate every rule of the object's CRD schema on the object."""
        schema = _crd_schemas()[(obj["apiVersion"], obj["kind"])]
        report = RuleReport()
        self._walk(schema, with_defaults(schema, copy.deepcopy(obj)), obj["kind"], report)
        return report

    def _walk(self, schema: dict[str, Any], value: Any, path: str, report: RuleReport) -> None:
        for validation in schema.get("x-kubernetes-validations", []):
            rule = validation["rule"]
            if "oldSelf" in rule:
                continue
            program = self._program(rule)
            if program is None:
                report.unsupported.append(rule)
                continue
            result = program.eval(data={"self": value})
            report.evaluated += 1
            if result.type() == cel.Type.ERROR or result.value() is not True:
                report.failures.append((path, validation.get("message", rule)))
        if isinstance(value, dict):
            for key, child in value.items():
                if key in schema.get("properties", {}):
                    self._walk(schema["properties"][key], child, f"{path}.{key}", report)
                elif isinstance(schema.get("additionalProperties"), dict):
                    self._walk(schema["additionalProperties"], child, f"{path}.{key}", report)
        elif isinstance(value, list) and "items" in schema:
            for index, child in enumerate(value):
                self._walk(schema["items"], child, f"{path}[{index}]", report)
