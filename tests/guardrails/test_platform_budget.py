"""Resource budgets (issue 24): every namespace's quota holds what the platform itself places there
plus one rolling-update surge pod, or the plan refuses the tenant file naming the field to change.

The defects this guards: acme's namespaces got `requests.storage: 50Gi` while the platform put a
2-instance CloudNativePG cluster of 50Gi each there (and 20Gi of MariaDB in prod), so the last
claim was refused and the database never became ready; status-page's `limits.cpu: 1` left no room
beside its app (LimitRange default limit 1) for a rolling update's surge pod.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from components.model.core.fields import quantity_value
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

ORDERS = {"name": "orders", "engine": "postgres", "version": "16", "size": "medium", "storageGb": 50}
STATUS_APP = {"name": "status", "image": {"repository": "docker.io/nginxinc/nginx-unprivileged", "tag": "1.29.4"}}


def refused(tmp_path: Path, stack: str, *documents: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigurationError) as caught:
        plan(stack, write_tenants(tmp_path / "tenants", *documents))
    return [str(p).split("tenants/", 1)[1] for p in caught.value.problems]


def test_acme_as_it_was_is_refused_naming_the_quota_field(tmp_path: Path) -> None:
    """acme's databases on main under a quota giving each environment 50Gi."""
    document = tenant_document(
        "acme",
        environments=["dev", "prod"],
        quota={"custom": {"storage": "100Gi", "limits": {"cpu": "16", "memory": "16Gi"}}},
        databases=[ORDERS, {"name": "legacy_billing", "engine": "mysql", "version": "8.0", "environments": ["prod"]}],
    )
    found = refused(tmp_path, "dev", document)
    assert [p.split(": ", 2)[1] for p in found] == ["quota.custom.storage", "quota.custom.storage"]
    assert "namespace tenant-acme-dev gets 50Gi of requests.storage but the platform itself places 100Gi" in found[0]
    assert "database orders (2 x 50Gi)" in found[0]
    assert "namespace tenant-acme-prod gets 50Gi of requests.storage but the platform itself places 120Gi" in found[1]
    assert "database legacy_billing (20Gi)" in found[1]


def test_a_tier_too_small_for_the_databases_names_the_tier(tmp_path: Path) -> None:
    document = tenant_document(
        "acme", environments=["dev"], quota={"tier": "small"}, databases=[{**ORDERS, "storageGb": 60}]
    )
    [problem] = refused(tmp_path, "dev", document)
    assert problem.startswith("acme.yaml: quota.tier: namespace tenant-acme-dev gets 100Gi of requests.storage")
    assert "choose a larger tier or a custom quota" in problem


def test_status_page_as_it_was_has_no_room_to_roll(tmp_path: Path) -> None:
    quota = {"custom": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}
    document = tenant_document("status-page", environments=["prod"], quota=quota, apps=[STATUS_APP])
    [problem] = refused(tmp_path, "prod", document)
    assert problem.startswith("status-page.yaml: quota.custom.limits.cpu: namespace tenant-status-page-prod")
    assert "app status; one rolling-update surge pod at the LimitRange defaults" in problem
    assert "gets at least 2" in problem


def test_a_virtual_cluster_counts_against_its_namespace(tmp_path: Path) -> None:
    document = tenant_document(
        "lab", environments=["dev"], isolation="virtual-cluster", quota={"custom": {"storage": "4Gi"}}
    )
    [problem] = refused(tmp_path, "dev", document)
    assert "quota.custom.storage" in problem and "the virtual cluster's control plane" in problem


def test_cloud_databases_take_nothing_from_the_namespace(tmp_path: Path) -> None:
    """On GCP the database is a Cloud SQL instance: the same file passes where only the surge pod counts."""
    document = tenant_document(
        "acme", environments=["dev", "prod"], quota={"custom": {"storage": "100Gi"}}, databases=[ORDERS]
    )
    run = plan("prod", write_tenants(tmp_path / "tenants", document))
    assert objects_of_kind(run, "ResourceQuota", "tenant-acme-dev")


# --- the example tenants as rendered: each namespace's quota holds the platform's own objects ----

_INSTANCES_KEY = {"Cluster": "instances", "MariaDB": "replicas"}


def _rendered_claims(run: ProgramRun) -> dict[str, Decimal]:
    """requests.storage per tenant namespace, read from the operator objects the plan renders
    (a Cluster's instances or a MariaDB's replicas, each with one claim of `storage.size`)."""
    claims: dict[str, Decimal] = defaultdict(Decimal)
    for kind, count_key in _INSTANCES_KEY.items():
        for obj in objects_of_kind(run, kind):
            namespace = obj["metadata"]["namespace"]
            if namespace.startswith("tenant-"):
                claims[namespace] += quantity_value(obj["spec"]["storage"]["size"]) * obj["spec"].get(count_key, 1)
    return claims


@pytest.mark.parametrize("fixture", ["dev_plan", "prod_plan", "prod_aws_plan"])
def test_every_rendered_quota_holds_the_rendered_databases(fixture: str, request: pytest.FixtureRequest) -> None:
    run: ProgramRun = request.getfixturevalue(fixture)
    claims = _rendered_claims(run)
    if fixture == "dev_plan":
        assert claims, "the dev stack renders in-namespace databases"
    for namespace, need in claims.items():
        [quota] = objects_of_kind(run, "ResourceQuota", namespace)
        assert quantity_value(quota["spec"]["hard"]["requests.storage"]) >= need, namespace
