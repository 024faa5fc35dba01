"""The GCP deploy identity may do what the prod plan asks of it, and the project has the APIs.

Before: no rule for service identities (`serviceusage.services.generateServiceIdentity`), none for
DNS zone IAM (`roles/dns.admin`), `dns.googleapis.com` not among the APIs; the first `up` failed
with 403 on both (components/clouds/gcp/deploy_rules.py).
"""

from __future__ import annotations

from pathlib import Path

from components.clouds.gcp import deploy_rules
from tools.operations.bootstrap import GCP_DEPLOY_ROLES
from tools.plan.harness import PROJECT_ROOT, ProgramRun

RUNBOOK = Path(PROJECT_ROOT) / "docs" / "runbooks" / "gke.md"


def test_every_gcp_type_in_the_prod_plan_has_a_granted_role_and_an_enabled_api(prod_plan: ProgramRun) -> None:
    types = sorted({r.type for r in prod_plan.resources if r.type.startswith("gcp:") and not r.read})
    runbook = RUNBOOK.read_text()
    for type_token in types:
        rule = deploy_rules.rule_for(type_token)
        assert rule is not None, f"{type_token}: no deploy rule"
        assert rule.role in GCP_DEPLOY_ROLES, (type_token, rule.role)
        assert f"`{rule.api}`" in runbook, (type_token, rule.api)
        assert f"`{rule.role}`" in runbook, (type_token, rule.role)


def test_service_identities_and_dns_zone_iam_are_covered() -> None:
    assert deploy_rules.rule_for("gcp:projects/serviceIdentity:ServiceIdentity") == deploy_rules.DeployRule(
        "roles/serviceusage.serviceUsageAdmin", "serviceusage.googleapis.com"
    )
    rule = deploy_rules.rule_for("gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember")
    assert rule is not None and rule.role == "roles/dns.admin" and rule.api == "dns.googleapis.com"
    assert "dns.googleapis.com" in deploy_rules.required_apis()


def test_project_iam_admin_may_grant_dns_reader_only() -> None:
    condition = deploy_rules.grant_condition()
    assert condition is not None
    assert "modifiedGrantsByRole" in condition and "hasOnly(['roles/dns.reader'])" in condition


def test_shared_secret_readers_wait_for_a_read_of_the_secret_they_grant_on(prod_plan: ProgramRun) -> None:
    """Nothing creates the shared secrets (their values are kept out of band): each grant depends on a
    read of its secret, so a missing one fails the preview by name, not the first `up` with 404."""
    by_urn = prod_plan.by_urn()
    readers = [r for r in prod_plan.resources if r.name.startswith("shared-secret-") and r.name.endswith("-reader")]
    assert readers
    for reader in readers:
        reads = [by_urn[u] for u in reader.dependencies if by_urn[u].type == "gcp:secretmanager/secret:Secret"]
        assert [r.read for r in reads] == [True], reader.name
        assert reads[0].name == reader.name.removesuffix("-reader")
