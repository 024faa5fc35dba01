"""What the database operators' pods need from the objects the platform writes, so that the
platform's own admission (components/admission/rules/workloads.py) and Pod Security `restricted`
admit them in tenant namespaces (issue 24).

- mariadb-operator v26.6.0 builds the MariaDB pod's security contexts from the MariaDB object
  alone (pkg/builder/securitycontext_builder.go): the container gets none unless
  `spec.securityContext` is set, and the pod only `runAsNonRoot`, user, group and fsGroup 999
  (mysqlUser/mysqlGroup, pkg/builder/statefulset_builder.go) unless `spec.podSecurityContext` is
  set. Pod Security `restricted` also needs a seccomp profile, `allowPrivilegeEscalation: false`
  and every capability dropped, so the object sets both contexts, keeping the operator's ids.
- CloudNativePG 1.30 (pkg/specs/pgbouncer/deployments.go) adds the `bootstrap-controller` init
  container to every Pooler pod with the operator image and no pull policy, which the API server
  defaults to `IfNotPresent` for a tagged image; the platform's always-pull rule refuses that. The
  pod builder (pkg/podspec/builder.go, WithInitContainerImage and friends) fills a container of
  that name in the Pooler's `template` instead of adding one, so the template names it with
  `imagePullPolicy: Always` and the operator keeps the rest (image, command, security context).
"""

from __future__ import annotations

from typing import Any

# mariadb-operator's own ids for the mysql user (pkg/builder/statefulset_builder.go, v26.6.0).
MARIADB_UID = 999

MARIADB_POD_SECURITY_CONTEXT: dict[str, Any] = {
    "runAsNonRoot": True,
    "runAsUser": MARIADB_UID,
    "runAsGroup": MARIADB_UID,
    "fsGroup": MARIADB_UID,
    "seccompProfile": {"type": "RuntimeDefault"},
}

MARIADB_CONTAINER_SECURITY_CONTEXT: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "runAsUser": MARIADB_UID,
    "runAsGroup": MARIADB_UID,
}

# specs.BootstrapControllerContainerName (pkg/specs/pods.go, CloudNativePG 1.30).
CNPG_BOOTSTRAP_CONTAINER = "bootstrap-controller"


def pooler_template() -> dict[str, Any]:
    """The Pooler's pod template: every container the operator adds, pulled on every start."""
    return {
        "spec": {
            "containers": [{"name": "pgbouncer", "imagePullPolicy": "Always"}],
            "initContainers": [{"name": CNPG_BOOTSTRAP_CONTAINER, "imagePullPolicy": "Always"}],
        }
    }
