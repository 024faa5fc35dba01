"""The first preview of a GCP stack whose shared databases were Cloud SQL API resources, modelled
offline (tools/operations/upgrade_preview.py), and after the runbook's steps
(docs/runbooks/shared-cloud-sql-logins.md).

The "before" state is built from today's plan with the shared databases as they were registered
before ADR 0015 (`gcp:sql/database:Database` and `gcp:sql/user:User` under the same names,
protected) and without what this change adds; a real `pulumi stack export` was not available.
"""

from __future__ import annotations

from pathlib import Path

from tests.data.test_data_shared_gcp import GCP_SHARED, TENANTS
from tests.support import plan, write_tenants
from tools.operations.upgrade_preview import StateResource, preview
from tools.plan.harness import ProgramRun, RecordedResource
from tools.plan.harness import _computed_outputs as mock_outputs

_NEW = ("postgresql:", "mysql:")
_MYSQL = "shop-prod-db-legacy-billing"
_ADMIN = ("-admin-user", "-admin-password", "-admin", "-admin-version")


def _state(resource: RecordedResource, type_: str | None = None, name: str | None = None) -> StateResource:
    urn = resource.urn
    if type_ is not None and name is not None:
        urn = urn.rsplit("::", 1)[0].removesuffix(resource.type) + f"{type_}::{name}"
    # A kept resource's deployed id and outputs are the mocks' values: the same cloud object.
    made = mock_outputs(resource.type, resource.name, dict(resource.inputs), reading=False)
    resource_id, outputs = made if made is not None and type_ is None else ("", {})
    return StateResource(
        urn, type_ or resource.type, resource_id, resource.inputs, outputs, resource.protect, resource.parent
    )


def _before(run: ProgramRun, *, runbook: bool) -> list[StateResource]:
    """A deployed stack's state: before the change, or after the runbook's steps 1-4."""
    state = []
    for resource in run.resources:
        if not resource.custom or resource.read or resource.type.startswith("pulumi:"):
            continue
        if resource.name.startswith("shared-") and resource.name.endswith(_ADMIN) and not runbook:
            continue
        if resource.type.startswith(_NEW):
            if runbook and not resource.type.endswith(("grant:Grant",)):
                state.append(_state(resource))  # imported (step 4); grants are created
            elif not runbook and resource.type.endswith(("role:Role", "mysql:index/user:User")):
                prefix = resource.name.rsplit("-", 1)[0]
                state.append(_state(resource, "gcp:sql/database:Database", f"{prefix}-database"))
                state.append(_state(resource, "gcp:sql/user:User", f"{prefix}-user"))
            continue
        state.append(_state(resource))
    return state


def test_without_the_runbook_the_first_preview_is_refused_and_deletes_nothing(tmp_path: Path) -> None:
    run = plan("prod", write_tenants(tmp_path, *TENANTS), data=GCP_SHARED)
    steps = preview(_before(run, runbook=False), run.resources)
    refused = {(step.type, step.urn.rsplit("::", 1)[-1]) for step in steps if step.refused}
    # Every old database and user would be deleted: protected, so the engine stops the preview.
    assert refused == {
        (kind, f"{prefix}-{suffix}")
        for prefix in (*(f"{t}-{e}-db-orders" for t in ("shop", "mall") for e in ("dev", "prod")), _MYSQL)
        for kind, suffix in (("gcp:sql/database:Database", "database"), ("gcp:sql/user:User", "user"))
    }


def test_after_the_runbook_only_grants_are_created_and_nothing_protected_goes(tmp_path: Path) -> None:
    run = plan("prod", write_tenants(tmp_path, *TENANTS), data=GCP_SHARED)
    steps = preview(_before(run, runbook=True), run.resources)
    assert [step for step in steps if step.refused or step.kind == "delete"] == []
    # Providers are left out of the modelled state (as `read_state` leaves them out of an export).
    created = sorted(step.type for step in steps if step.kind == "create" and not step.type.startswith("pulumi:"))
    assert created == ["mysql:index/grant:Grant"] + ["postgresql:index/grant:Grant"] * 4
