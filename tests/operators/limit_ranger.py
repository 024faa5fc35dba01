"""The LimitRanger admission plugin's defaulting of container resources, applied to a pod before
the validating policies (plugin/pkg/admission/limitranger/admission.go, mergeContainerResources:
a container's missing limit gets the LimitRange `default`, its missing request `defaultRequest`).

Operators' pods state no resources (CloudNativePG, mariadb-operator), so the workloads rule's
memory-limit check sees what the namespace's LimitRange gave them, as on a real API server where
mutating plugins run before validating admission.
"""

from __future__ import annotations

import copy
from typing import Any


def limit_ranged(pod: dict[str, Any], limit_range: dict[str, Any]) -> dict[str, Any]:
    """A copy of `pod` with every container's missing requests and limits set from the range."""
    defaulted = copy.deepcopy(pod)
    [container_limits] = [item for item in limit_range["spec"]["limits"] if item["type"] == "Container"]
    spec = defaulted["spec"]
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            resources = container.setdefault("resources", {})
            limits = resources.setdefault("limits", {})
            requests = resources.setdefault("requests", {})
            for name, value in (container_limits.get("default") or {}).items():
                limits.setdefault(name, value)
            for name, value in (container_limits.get("defaultRequest") or {}).items():
                requests.setdefault(name, value)
    return defaulted
