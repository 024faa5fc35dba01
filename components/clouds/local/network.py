"""Local cluster network facts: the operators that run tenant databases inside tenant namespaces.

Locally databases are CloudNativePG clusters and MariaDB servers in the tenant's namespace, so
their operators must reach the instance pods: CloudNativePG polls each instance's status on 8000
and connects to Postgres on 5432; the MariaDB operator connects on 3306. Labels are those of the
operators' Helm charts. There is no cloud identity endpoint on a local cluster.
"""

from __future__ import annotations

from components.model.settings.network import CloudNetworkFacts, OperatorAccess

NETWORK = CloudNetworkFacts(
    operators={
        "cloudnative-pg": OperatorAccess(
            namespace="cnpg-system", pod_labels={"app.kubernetes.io/name": "cloudnative-pg"}, ports=[8000, 5432]
        ),
        "mariadb-operator": OperatorAccess(
            namespace="mariadb-operator", pod_labels={"app.kubernetes.io/name": "mariadb-operator"}, ports=[3306]
        ),
    },
)
