"""Run the policy pack's validators over an offline plan, where no Pulumi CLI or credentials exist.

    python -m policy_pack.offline build/plan/dev [build/plan/prod ...]

Pull requests from forks get no cloud credentials, so `pulumi preview --policy-pack` cannot run for
them; this runs the same validator functions over `resources.json` (written by
`python -m tools.plan --out`) so the invariants are still checked before review. The plan keeps
secret markers (`[secret]`), so the plain-text Secret rule runs here as a validation too.
Exit code 1 when anything is violated, with one line per violation.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ReportViolation,
    ResourceValidationArgs,
    StackValidationArgs,
)

from policy_pack.tenancy_policies import (
    validate_data_protection,
    validate_namespace_guardrails,
    validate_rbac_boundaries,
    validate_secret_values,
)

STACK_CHECKS: dict[str, Callable[[StackValidationArgs, ReportViolation], None]] = {
    "tenant-namespace-guardrails": validate_namespace_guardrails,
    "tenant-rbac-boundaries": validate_rbac_boundaries,
}
RESOURCE_CHECKS: dict[str, Callable[[ResourceValidationArgs, ReportViolation], None]] = {
    "tenant-data-protected-in-prod": validate_data_protection,
    "kubernetes-secrets-not-plaintext": validate_secret_values,
}


@dataclass(frozen=True)
class Violation:
    policy: str
    urn: str | None
    message: str


def options(record: Mapping[str, Any]) -> PolicyResourceOptions:
    """The resource options the engine would pass, from a resources.json record."""
    return PolicyResourceOptions(
        protect=bool(record.get("protect")),
        ignore_changes=list(record.get("ignoreChanges") or []),
        delete_before_replace=None,
        aliases=list(record.get("aliases") or []),
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=record.get("parent"),
    )


def check_records(records: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None = None) -> list[Violation]:
    """Every violation of the pack's rules among plan records, in policy then resource order."""
    violations: list[Violation] = []

    def collector(policy: str, default_urn: str | None) -> Callable[[str, str | None], None]:
        def report(message: str, urn: str | None = None) -> None:
            violations.append(Violation(policy, urn or default_urn, message))

        return report

    resources = [
        PolicyResource(r["type"], r.get("inputs") or {}, r["urn"], r["name"], options(r), None, None, [], {})
        for r in records
        # Resources the program only reads (`.get()`, StackReference) are not the engine's to judge.
        if not r.get("read")
    ]
    for name, stack_check in STACK_CHECKS.items():
        stack_check(StackValidationArgs(resources, config), collector(name, None))
    for name, resource_check in RESOURCE_CHECKS.items():
        for r in resources:
            args = ResourceValidationArgs(r.resource_type, r.props, r.urn, r.name, r.opts, None, config)
            resource_check(args, collector(name, r.urn))
    return violations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policy_pack.offline", description=__doc__.split("\n\n")[0])
    parser.add_argument("plans", nargs="+", type=Path, help="plan directories written by tools.plan.run --out")
    args = parser.parse_args(argv)
    failed = False
    for plan in args.plans:
        records = json.loads((plan / "resources.json").read_text(encoding="utf-8"))
        violations = check_records(records)
        print(f"{plan}: {len(records)} resources, {len(violations)} policy violations")
        for violation in violations:
            print(f"  [{violation.policy}] {violation.message}\n    {violation.urn or '(stack)'}")
        failed = failed or bool(violations)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
