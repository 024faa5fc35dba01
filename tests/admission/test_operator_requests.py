"""What the data operators the dev stack installs must be able to do in tenant namespaces.

On a real cluster CloudNativePG creates, for every `Cluster`, a Role and a RoleBinding of that
Role to the instances' ServiceAccount in the Cluster's namespace (the instance manager reads its
own Cluster and Secrets through them). The operator's own RBAC comes from its chart, planted here
as the chart grants it; the admission bundle is the rendered one.

Known blocker, found offline before any real run: `tenancy-rbac` lets RoleBindings in tenant
namespaces reference only the shared tenant ClusterRoles, whoever creates them, so CloudNativePG
cannot bind its Role and tenant Postgres clusters never become ready on kind. The test is a
strict xfail: it fails as soon as the bundle admits the operator, so the marker goes with the fix
(an exemption for the data operators' service accounts, as `platformIdentities` are exempted from
the platform-owned rule).
"""

from __future__ import annotations

import pytest

from tests.admission.layers import cluster
from tests.rbac import UserInfo
from tools.harness import ProgramRun

CNPG = UserInfo(
    "system:serviceaccount:cnpg-system:cloudnative-pg",
    ("system:serviceaccounts", "system:serviceaccounts:cnpg-system", "system:authenticated"),
)
# The chart's ClusterRole, as far as this request needs it, bound to the operator's account.
CHART_GRANT = [
    {
        "kind": "ClusterRole",
        "metadata": {"name": "cloudnative-pg"},
        "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": ["*"]}],
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


@pytest.mark.xfail(strict=True, reason="tenancy-rbac denies the CloudNativePG operator's instance RoleBinding")
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


def test_the_operator_passes_rbac_and_is_stopped_by_the_rbac_rule_today(dev_plan: ProgramRun) -> None:
    # Pins down where it stops, so the xfail above fails for the reason it names and no other.
    stack = cluster(dev_plan, extra=CHART_GRANT)
    outcome = stack.attempt(
        CNPG,
        "CREATE",
        "rbac.authorization.k8s.io/v1/rolebindings",
        instance_binding("tenant-acme-dev"),
        "tenant-acme-dev",
    )
    assert outcome.denied_by("tenancy-rbac", "references Role orders"), (outcome.stopped_by, outcome.decision.denials)
