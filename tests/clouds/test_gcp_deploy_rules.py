"""The GCP deploy identity may do what the prod plan asks of it, and the project has the APIs.

Before: no rule for service identities (`serviceusage.services.generateServiceIdentity`), none for
DNS zone IAM (`roles/dns.admin`), `dns.googleapis.com` not among the APIs; the first `up` failed
with 403 on both (components/clouds/gcp/deploy_rules.py).
"""

from __future__ import annotations

from pathlib import Path

from components.clouds.gcp import deploy_rules
from components.model.catalog.stack_config import parse_settings
from tools.operations.bootstrap import GCP_DEPLOY_ROLES
from tools.plan.harness import PROJECT_ROOT, ProgramRun, stack_config

RUNBOOK = Path(PROJECT_ROOT) / "docs" / "runbooks" / "gke.md"


def test_every_gcp_type_in_the_prod_plan_has_a_granted_role_and_an_enabled_api(prod_plan: ProgramRun) -> None:
    # Reads too: a `.get` needs its resource's get permission (the zone and the edge role, issue 44).
    types = sorted({r.type for r in prod_plan.resources if r.type.startswith("gcp:")})
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


def test_the_deploy_identity_cannot_make_itself_any_service_account() -> None:
    """Issue 44, 7: no project-wide actAs, and the service-account admin may grant only Workload
    Identity use, never token creation (the escalation around projectIamAdmin's condition)."""
    from tools.operations import bootstrap

    assert deploy_rules.SERVICE_ACCOUNT_USER not in bootstrap.GCP_DEPLOY_ROLES
    condition = deploy_rules.grant_condition(deploy_rules.SERVICE_ACCOUNT_ADMIN)
    assert condition is not None and "hasOnly(['roles/iam.workloadIdentityUser'])" in condition
    assert all("TokenCreator" not in granted for roles, _, _ in deploy_rules.GRANTABLE.values() for granted in roles)
    # Every project binding the bootstrap makes for the deploy identity carries its condition, and
    # actAs is bound on the node pools' account alone.
    runner = bootstrap.Runner(dry_run=True)
    bootstrap.gcp_identities(
        runner, "prod", parse_settings(stack_config("prod")[0], "Pulumi.prod.yaml"), "acme/tenancy", None, None
    )
    commands = [" ".join(c) for c in runner.log]
    project_bindings = [
        c for c in commands if c.startswith("gcloud projects add-iam-policy-binding") and "tenancy-ci@" in c
    ]
    assert project_bindings
    for command in project_bindings:
        assert "iam.serviceAccountUser" not in command, command
        if deploy_rules.SERVICE_ACCOUNT_ADMIN in command or deploy_rules.PROJECT_IAM_ADMIN in command:
            assert "--condition=expression=" in command, command
    act_as = [c for c in commands if deploy_rules.SERVICE_ACCOUNT_USER in c]
    assert act_as and all(
        c.startswith(
            "gcloud iam service-accounts add-iam-policy-binding gke-nodes@tenancy-prod.iam.gserviceaccount.com"
        )
        for c in act_as
    ), act_as


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


def test_cert_manager_and_external_dns_get_record_sets_not_zone_administration(prod_plan: ProgramRun) -> None:
    """Issue 44, 6: the zone grants name the custom record-set role, which holds no zone IAM or
    deletion; the bootstrap creates it with exactly those permissions."""
    from components.clouds.gcp.edge_roles import DNS_RECORDS_PERMISSIONS, NEVER, dns_records_role
    from tools.operations import bootstrap

    grants = prod_plan.of_type("gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember")
    assert grants
    assert {g.inputs["role"] for g in grants} == {dns_records_role("tenancy-prod")}
    assert not set(NEVER) & set(DNS_RECORDS_PERMISSIONS)
    runner = bootstrap.Runner(dry_run=True)
    bootstrap.gcp_identities(
        runner, "prod", parse_settings(stack_config("prod")[0], "Pulumi.prod.yaml"), "acme/tenancy", None, None
    )
    (create,) = [c for c in runner.log if c[:4] == ["gcloud", "iam", "roles", "create"] and "tenancyDnsRecords" in c]
    assert f"--permissions={','.join(DNS_RECORDS_PERMISSIONS)}" in create


def test_zones_and_the_record_role_are_read_before_they_are_granted_on(prod_plan: ProgramRun) -> None:
    """Issue 44, 4: a missing zone or role fails the preview by name, not the first `up` midway."""
    by_urn = prod_plan.by_urn()
    for grant in prod_plan.of_type("gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember"):
        reads = {by_urn[u].type for u in grant.dependencies if by_urn[u].read}
        assert reads == {"gcp:dns/managedZone:ManagedZone", "gcp:projects/iAMCustomRole:IAMCustomRole"}, grant.name
