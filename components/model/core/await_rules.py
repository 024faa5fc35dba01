"""Which custom resources `pulumi up` waits for, and on which condition, as data with sources.

pulumi-kubernetes awaits built-in kinds by their own logic but a custom resource only when it
carries `pulumi.com/waitFor` (or with PULUMI_K8S_AWAIT_ALL=true, which this program does not set):
without it the resource is "ready" as soon as the API server stores it (provider/pkg/metadata/
overrides.go `ReadyCondition`, pulumi/pulumi-kubernetes v4.32.0, the newest tag read; the SDK
pins 4.34.2). `condition=<Type>` waits for `status.conditions[type=<Type>].status == "True"`.

ADR 0012: the platform's objects are awaited, tenant workloads are not. Each condition type below
is the one the controller sets, read in its source at the version this program pins:
- Gateway `Programmed`: kubernetes-sigs/gateway-api apis/v1/gateway_types.go
  (GatewayConditionProgrammed), v1.4.0; every implementation sets it when the data plane serves.
- cert-manager `Ready` on Certificate, Issuer and ClusterIssuer: cert-manager/cert-manager
  pkg/apis/certmanager/v1/types_certificate.go (CertificateConditionReady) and types_issuer.go
  (IssuerConditionReady), v1.21.1.
- CloudNativePG Cluster `Ready`: cloudnative-pg/cloudnative-pg api/v1/cluster_types.go
  (ConditionClusterReady), v1.30.0.
- mariadb-operator `Ready` on MariaDB, Database, User and Grant: mariadb-operator/mariadb-operator
  api/v1alpha1/condition_types.go (ConditionTypeReady), v26.6.0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

WAIT_FOR = "pulumi.com/waitFor"
SKIP_AWAIT = "pulumi.com/skipAwait"


@dataclass(frozen=True)
class AwaitRule:
    """The condition a controller sets once the object serves, and where that is written."""

    condition: str
    source: str


AWAITED: dict[tuple[str, str], AwaitRule] = {
    ("gateway.networking.k8s.io", "Gateway"): AwaitRule(
        "Programmed", "kubernetes-sigs/gateway-api v1.4.0 apis/v1/gateway_types.go GatewayConditionProgrammed"
    ),
    **{
        ("cert-manager.io", kind): AwaitRule(
            "Ready", f"cert-manager/cert-manager v1.21.1 pkg/apis/certmanager/v1 {kind} Ready condition"
        )
        for kind in ("Certificate", "Issuer", "ClusterIssuer")
    },
    ("postgresql.cnpg.io", "Cluster"): AwaitRule(
        "Ready", "cloudnative-pg/cloudnative-pg v1.30.0 api/v1/cluster_types.go ConditionClusterReady"
    ),
    **{
        ("k8s.mariadb.com", kind): AwaitRule(
            "Ready", "mariadb-operator/mariadb-operator v26.6.0 api/v1alpha1/condition_types.go ConditionTypeReady"
        )
        for kind in ("MariaDB", "Database", "User", "Grant")
    },
}


def group_of(api_version: str) -> str:
    """`cert-manager.io/v1` -> `cert-manager.io` (the core group is empty)."""
    return api_version.split("/")[0] if "/" in api_version else ""


def wait_for(api_version: str, kind: str) -> dict[str, str]:
    """The annotation that makes `pulumi up` wait for the kind's condition (empty for other kinds)."""
    rule = AWAITED.get((group_of(api_version), kind))
    if rule is None:
        return {}
    return {WAIT_FOR: f"condition={rule.condition}"}


def expected_conditions(annotations: dict[str, str]) -> list[str]:
    """The condition types a `pulumi.com/waitFor` value waits for (a string or a JSON list)."""
    value = annotations.get(WAIT_FOR, "")
    if not value:
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = [value]
    values = parsed if isinstance(parsed, list) else [value]
    return [v.removeprefix("condition=") for v in values if isinstance(v, str) and v.startswith("condition=")]
