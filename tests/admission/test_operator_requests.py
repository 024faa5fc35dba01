"""What the data operators the dev stack installs must be able to do in tenant namespaces.

On a real cluster CloudNativePG creates, for every `Cluster`, a Role and a RoleBinding of that
Role to the instances' ServiceAccount in the Cluster's namespace (the instance manager reads its
own Cluster and Secrets through them). The operator's own RBAC comes from its chart, planted here
as the chart grants it; the admission bundle is the rendered one.

Found offline before any real run: `tenancy-rbac` let RoleBindings in tenant namespaces reference
only the shared tenant ClusterRoles, whoever created them, so CloudNativePG could not bind its Role
and tenant Postgres clusters would never become ready. The operator's account is now exempt from
that rule (`tenancy:policy.operatorIdentities`); a tenant making the same binding is not.

Issue 33: the same accounts are exempt from the PodDisruptionBudget rule. CloudNativePG writes a
`<cluster>-primary` budget of `minAvailable: 1` over `cnpg.io/cluster` and `cnpg.io/instanceRole`
(pkg/specs/poddisruptionbudget.go), a shape tenants may not write; it hands the primary over before
a drain takes it (a single-instance cluster cannot, docs/admission-attacks.md).
"""

from __future__ import annotations

from components.model.catalog.stack_config import parse_settings
from tests.admission.layers import ACME_ADMIN, ACME_DEV, cluster
from tests.rbac import UserInfo
from tests.support import plan
from tools.plan.harness import ProgramRun, stack_config

CNPG = UserInfo(
    "system:serviceaccount:cnpg-system:cloudnative-pg",
    ("system:serviceaccounts", "system:serviceaccounts:cnpg-system", "system:authenticated"),
)
# The chart's ClusterRole, as far as these requests need it, bound to the operator's account.
CHART_GRANT = [
    {
        "kind": "ClusterRole",
        "metadata": {"name": "cloudnative-pg"},
        "rules": [
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": ["*"]},
            {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["*"]},
        ],
    },
    {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "cloudnative-pg"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cloudnative-pg"},
        "subjects": [{"kind": "ServiceAccount", "name": "cloudnative-pg", "namespace": "cnpg-system"}],
    },
]


def instance_binding(namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "orders", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "orders"},
        "subjects": [{"kind": "ServiceAccount", "name": "orders", "namespace": namespace}],
    }


def test_cloudnative_pg_binds_its_instance_role_in_a_tenant_namespace(dev_plan: ProgramRun) -> None:
    stack = cluster(dev_plan, extra=CHART_GRANT)
    outcome = stack.attempt(
        CNPG,
        "CREATE",
        "rbac.authorization.k8s.io/v1/rolebindings",
        instance_binding("tenant-acme-dev"),
        "tenant-acme-dev",
    )
    assert outcome.stopped_by is None, outcome.decision.denials


def test_a_tenant_binding_a_role_of_its_own_is_still_denied(dev_plan: ProgramRun) -> None:
    # acme's admins may not bind roles at all; an account of the tenant's given the operator's very
    # rights (a stray grant) is still denied by admission: only the operator's own account is exempt.
    stack = cluster(dev_plan, extra=[*CHART_GRANT, _grant_to_tenant_account()])
    request = ("CREATE", "rbac.authorization.k8s.io/v1/rolebindings", instance_binding(ACME_DEV), ACME_DEV)
    assert stack.attempt(ACME_ADMIN, *request).stopped_by == "rbac"
    outcome = stack.attempt(TENANT_ACCOUNT, *request)
    assert outcome.denied_by("tenancy-rbac", "references Role orders"), (outcome.stopped_by, outcome.decision.denials)


TENANT_ACCOUNT = UserInfo(
    f"system:serviceaccount:{ACME_DEV}:workload",
    ("system:serviceaccounts", f"system:serviceaccounts:{ACME_DEV}", "system:authenticated"),
)


def _grant_to_tenant_account() -> dict[str, object]:
    return {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "stray"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cloudnative-pg"},
        "subjects": [{"kind": "ServiceAccount", "name": "workload", "namespace": ACME_DEV}],
    }


def test_without_the_exemption_the_operator_is_denied() -> None:
    stack = cluster(plan("dev", policy="{}"), extra=CHART_GRANT)
    outcome = stack.attempt(
        CNPG, "CREATE", "rbac.authorization.k8s.io/v1/rolebindings", instance_binding(ACME_DEV), ACME_DEV
    )
    assert outcome.denied_by("tenancy-rbac", "references Role orders"), (outcome.stopped_by, outcome.decision.denials)


def test_the_exempt_account_is_the_installed_operators() -> None:
    # The chart's service account is its release name, in the release's namespace (Pulumi.dev.yaml).
    config, _ = stack_config("dev")
    settings = parse_settings(config, "Pulumi.dev.yaml")
    chart = settings.installs.charts["cloudnative-pg"]
    assert settings.policy.operator_identities == [f"system:serviceaccount:{chart.namespace}:cloudnative-pg"]


def primary_budget(namespace: str) -> dict[str, object]:
    """CloudNativePG's budget over a Cluster's primary (pkg/specs/poddisruptionbudget.go)."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "orders-primary", "namespace": namespace, "labels": {"cnpg.io/cluster": "orders"}},
        "spec": {
            "minAvailable": 1,
            "selector": {"matchLabels": {"cnpg.io/cluster": "orders", "cnpg.io/instanceRole": "primary"}},
        },
    }


BUDGETS = "policy/v1/poddisruptionbudgets"


def test_cloudnative_pg_writes_its_primary_budget_in_a_tenant_namespace(dev_plan: ProgramRun) -> None:
    stack = cluster(dev_plan, extra=CHART_GRANT)
    outcome = stack.attempt(CNPG, "CREATE", BUDGETS, primary_budget(ACME_DEV), ACME_DEV)
    assert outcome.stopped_by is None, outcome.decision.denials


def test_a_tenant_writing_the_operators_budget_is_denied(dev_plan: ProgramRun) -> None:
    stack = cluster(dev_plan, extra=CHART_GRANT)
    outcome = stack.attempt(ACME_ADMIN, "CREATE", BUDGETS, primary_budget(ACME_DEV), ACME_DEV)
    assert outcome.denied_by("tenancy-scheduling-disruption-budgets", "sets minAvailable"), outcome.decision.denials
    assert outcome.denied_by("tenancy-scheduling-disruption-budgets", "other than the one label")


def test_without_the_exemption_the_operators_budget_is_denied() -> None:
    stack = cluster(plan("dev", policy="{}"), extra=CHART_GRANT)
    outcome = stack.attempt(CNPG, "CREATE", BUDGETS, primary_budget(ACME_DEV), ACME_DEV)
    assert outcome.denied_by("tenancy-scheduling-disruption-budgets", "sets minAvailable"), outcome.decision.denials
