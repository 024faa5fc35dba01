"""components/lifecycle.py: what each lifecycle state keeps, releases or removes.

The plans of each state are tested end to end in tests/test_tenant.py and tests/data; these pin the
decisions themselves, state by state.
"""

from __future__ import annotations

from typing import Any, cast

import pulumi
import pytest

from components.lifecycle import (
    STATES,
    data_guard,
    holds_cluster_data,
    namespace_options,
    people_read_only,
    retained_environments,
    state_of,
    suspension_labels,
)
from components.model.tenant_file.spec import Lifecycle, TenantSpec

PARENT = cast(pulumi.Resource, object())
DATABASE = {"name": "orders", "engine": "postgres", "version": "16", "environments": ["prod"]}


def _spec(lifecycle: Lifecycle, **fields: Any) -> TenantSpec:
    return TenantSpec.model_validate(
        {
            "name": "acme",
            "displayName": "Acme",
            "contact": "team@acme.example.org",
            "costCenter": "cc-acme",
            "lifecycle": lifecycle,
            **fields,
        }
    )


def test_every_state_of_the_tenant_file_has_its_decisions() -> None:
    assert set(STATES) == {"active", "suspended", "decommissioned"}


@pytest.mark.parametrize(
    ("lifecycle", "environments", "admits_pods", "releases_data"),
    [
        ("active", True, True, False),
        # Suspended: everything stays, nothing runs.
        ("suspended", True, False, False),
        # Decommissioned: the cluster side goes, the data is released (kept in the cloud).
        ("decommissioned", False, False, True),
    ],
)
def test_what_each_state_keeps(
    lifecycle: Lifecycle, environments: bool, admits_pods: bool, releases_data: bool
) -> None:
    state = state_of(lifecycle)
    assert (state.environments, state.admits_pods, state.releases_data) == (environments, admits_pods, releases_data)


@pytest.mark.parametrize(
    ("lifecycle", "protect", "retain"),
    [("active", True, False), ("suspended", True, False), ("decommissioned", False, True)],
)
def test_data_is_protected_until_released(lifecycle: Lifecycle, protect: bool, retain: bool) -> None:
    options = data_guard(parent=PARENT, lifecycle=lifecycle, protect=True).data()
    assert (options.protect, options.retain_on_delete) == (protect, retain)
    assert options.parent is PARENT


def test_an_unprotected_stack_never_protects_data() -> None:
    options = data_guard(parent=PARENT, lifecycle="active", protect=False).data()
    assert (options.protect, options.retain_on_delete) == (False, False)


@pytest.mark.parametrize(
    ("lifecycle", "holds_data", "protect", "retain"),
    [
        ("active", True, True, False),
        ("active", False, False, False),
        ("suspended", True, True, False),
        ("decommissioned", True, False, True),
        # A namespace without data is never kept: it goes with the tenant's other cluster objects.
        ("decommissioned", False, False, False),
    ],
)
def test_a_namespace_is_kept_like_the_data_it_holds(
    lifecycle: Lifecycle, holds_data: bool, protect: bool, retain: bool
) -> None:
    options = namespace_options(parent=PARENT, lifecycle=lifecycle, protect=True, holds_data=holds_data)
    assert (options.protect, options.retain_on_delete) == (protect, retain)


def test_namespaces_hold_data_only_where_the_cloud_keeps_it_there() -> None:
    spec = _spec("active", databases=[DATABASE])
    assert holds_cluster_data(spec, "prod", data_in_namespaces=True)
    assert not holds_cluster_data(spec, "dev", data_in_namespaces=True)
    assert not holds_cluster_data(spec, "prod", data_in_namespaces=False)


@pytest.mark.parametrize(
    ("lifecycle", "in_namespaces", "retained"),
    [
        ("decommissioned", True, ["prod"]),
        ("decommissioned", False, []),
        # While the environments exist, their namespaces are registered with them, not retained.
        ("active", True, []),
        ("suspended", True, []),
    ],
)
def test_decommissioned_tenants_keep_only_namespaces_holding_data(
    lifecycle: Lifecycle, in_namespaces: bool, retained: list[str]
) -> None:
    spec = _spec(lifecycle, databases=[DATABASE])
    assert retained_environments(spec, data_in_namespaces=in_namespaces) == retained


@pytest.mark.parametrize(
    ("lifecycle", "reconciles", "serves", "people_write"),
    [
        ("active", True, True, True),
        ("suspended", False, False, False),
        # What a decommissioned tenant keeps (namespaces holding data) serves and reconciles nothing.
        ("decommissioned", False, False, False),
    ],
)
def test_suspension_stops_reconciling_serving_and_writing(
    lifecycle: Lifecycle, reconciles: bool, serves: bool, people_write: bool
) -> None:
    state = state_of(lifecycle)
    assert (state.reconciles, state.serves_traffic, state.people_write) == (reconciles, serves, people_write)


def test_only_a_suspended_namespace_is_marked() -> None:
    assert suspension_labels("suspended") == {"tenancy.io/suspended": "true"}
    # Active renders carry no trace of a suspension, so resuming renders them exactly again.
    assert suspension_labels("active") == {}


@pytest.mark.parametrize(
    ("lifecycle", "environment_read_only", "read_only"),
    [("active", False, False), ("active", True, True), ("suspended", False, True), ("suspended", True, True)],
)
def test_people_are_viewers_in_read_only_environments_and_while_suspended(
    lifecycle: Lifecycle, environment_read_only: bool, read_only: bool
) -> None:
    assert people_read_only(lifecycle, environment_read_only=environment_read_only) is read_only
