"""Lifecycle transitions leave kept data alone: for each stack, the plans of `active`,
`suspended` and `decommissioned` (tests/engine/mixes.py) compared pairwise in the order a tenant
goes through them, and back from suspension."""

from __future__ import annotations

import pytest

from components.model.tenant_file.spec import Lifecycle
from tests.engine.conftest import Mixes
from tests.engine.mixes import STACKS, records
from tools.plan.engine_rules import PlanGraph, kept_unchanged

TRANSITIONS: list[tuple[Lifecycle, Lifecycle]] = [
    ("active", "suspended"),
    ("suspended", "active"),
    ("suspended", "decommissioned"),
    ("active", "decommissioned"),
]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize(("before", "after"), TRANSITIONS)
def test_a_transition_changes_no_input_of_what_it_keeps(
    mix_plans: Mixes, stack: str, before: Lifecycle, after: Lifecycle
) -> None:
    earlier = PlanGraph(records(mix_plans[(stack, before)]))
    later = PlanGraph(records(mix_plans[(stack, after)]))
    kept = [r for r in later.managed() if r["urn"] in earlier.by_urn and (r["protect"] or later.retained(r["urn"]))]
    assert kept, (stack, before, after)
    violations = kept_unchanged(earlier, later)
    assert violations == [], "\n".join(map(str, violations))


def test_a_changed_input_of_a_retained_instance_is_named(mix_plans: Mixes) -> None:
    earlier = records(mix_plans[("prod-aws", "active")])
    later = records(mix_plans[("prod-aws", "decommissioned")])
    (instance,) = [r for r in later if r["name"] == "acme-prod-db-orders-instance"]
    changed = {**instance, "inputs": {**instance["inputs"], "instanceClass": "db.t4g.micro"}}
    later = [changed if r is instance else r for r in later]
    violations = kept_unchanged(PlanGraph(earlier), PlanGraph(later))
    assert [(v.urn, v.rule) for v in violations] == [(instance["urn"], "kept-unchanged")]
    assert "instanceClass" in violations[0].message


def test_a_renamed_kept_namespace_is_named_but_a_label_is_not(mix_plans: Mixes) -> None:
    earlier = records(mix_plans[("dev", "active")])
    later = records(mix_plans[("dev", "decommissioned")])
    (namespace,) = [r for r in later if r["name"] == "acme-prod-namespace"]
    metadata = namespace["inputs"]["metadata"]
    labelled = {**namespace, "inputs": {**namespace["inputs"], "metadata": {**metadata, "labels": {"x": "y"}}}}
    renamed = {**namespace, "inputs": {**namespace["inputs"], "metadata": {**metadata, "name": "elsewhere"}}}
    for changed, named in ((labelled, []), (renamed, [namespace["urn"]])):
        plan = [changed if r is namespace else r for r in later]
        assert [v.urn for v in kept_unchanged(PlanGraph(earlier), PlanGraph(plan))] == named
