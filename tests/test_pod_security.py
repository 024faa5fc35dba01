"""The offline Pod Security `restricted` checker against known cases (tests/pod_security.py): the
pod the Kubernetes documentation gives as restricted-compliant passes, and each check fires alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.pod_security import restricted_violations


def compliant() -> dict[str, Any]:
    """A pod meeting `restricted` (https://kubernetes.io/docs/concepts/security/pod-security-standards/)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "app"},
        "spec": {
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [
                {
                    "name": "init",
                    "image": "registry.example.org/init:1",
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                }
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "registry.example.org/app:1",
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                    },
                }
            ],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    }


def test_a_compliant_pod_passes() -> None:
    assert restricted_violations(compliant()) == []


def _set(pod: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(pod)
    target: Any = changed
    *parents, last = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    if value is None:
        del target[last]
    else:
        target[last] = value
    return changed


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        ("spec.hostNetwork", True, "host namespaces"),
        ("spec.containers.0.securityContext.privileged", True, "privileged"),
        ("spec.containers.0.securityContext.capabilities.add", ["SYS_ADMIN"], "non-default capabilities"),
        ("spec.containers.0.ports", [{"containerPort": 80, "hostPort": 80}], "hostPort"),
        ("spec.volumes", [{"name": "h", "hostPath": {"path": "/"}}], "hostPath volumes"),
        ("spec.volumes", [{"name": "n", "nfs": {"server": "x", "path": "/"}}], "restricted volume types"),
        ("spec.initContainers.0.securityContext.allowPrivilegeEscalation", None, "allowPrivilegeEscalation"),
        ("spec.initContainers.0.securityContext.capabilities", None, "must drop ALL"),
        ("spec.securityContext.runAsNonRoot", None, "runAsNonRoot"),
        ("spec.containers.0.securityContext.runAsUser", 0, "runAsUser=0"),
        ("spec.securityContext.seccompProfile", None, "seccompProfile"),
        ("spec.securityContext.seccompProfile", {"type": "Unconfined"}, "seccompProfile"),
        ("spec.securityContext.sysctls", [{"name": "kernel.msgmax", "value": "1"}], "forbidden sysctls"),
        ("spec.containers.0.securityContext.procMount", "Unmasked", "procMount"),
        # Checks the first version of this file missed (review against pod-security-admission's policy/).
        ("spec.securityContext.windowsOptions", {"hostProcess": True}, "hostProcess"),
        ("spec.initContainers.0.securityContext.windowsOptions", {"hostProcess": True}, "hostProcess"),
        (
            "metadata.annotations",
            {"container.apparmor.security.beta.kubernetes.io/app": "unconfined"},
            "forbidden AppArmor profile",
        ),
        ("spec.containers.0.securityContext.appArmorProfile", {"type": "Unconfined"}, "appArmorProfile"),
        ("spec.containers.0.livenessProbe", {"httpGet": {"host": "10.0.0.1", "port": 80}}, "probe or lifecycle"),
        ("spec.containers.0.readinessProbe", {"tcpSocket": {"host": "db", "port": 5432}}, "probe or lifecycle"),
        (
            "spec.initContainers.0.lifecycle",
            {"preStop": {"httpGet": {"host": "169.254.169.254", "port": 80}}},
            "probe or lifecycle",
        ),
        ("spec.containers.0.securityContext.seLinuxOptions", {"type": "spc_t"}, "seLinuxOptions"),
        ("spec.securityContext.seLinuxOptions", {"user": "system_u"}, "seLinuxOptions"),
    ],
)
def test_each_check_refuses_its_violation(path: str, value: Any, reason: str) -> None:
    found = restricted_violations(_set(compliant(), path, value))
    assert any(reason in f for f in found), found


def test_container_level_settings_satisfy_the_pod_level_ones() -> None:
    pod = _set(compliant(), "spec.securityContext", {})
    for container in pod["spec"]["initContainers"] + pod["spec"]["containers"]:
        container["securityContext"]["runAsNonRoot"] = True
        container["securityContext"]["seccompProfile"] = {"type": "RuntimeDefault"}
    assert restricted_violations(pod) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("metadata.annotations", {"container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}),
        ("metadata.annotations", {"container.apparmor.security.beta.kubernetes.io/app": "localhost/profile"}),
        ("spec.containers.0.livenessProbe", {"httpGet": {"path": "/healthz", "port": 80}}),
        ("spec.containers.0.securityContext.windowsOptions", {"hostProcess": False}),
        ("spec.containers.0.securityContext.seLinuxOptions", {"type": "container_init_t", "level": "s0:c1"}),
    ],
)
def test_allowed_values_of_the_same_fields_pass(path: str, value: Any) -> None:
    """pod-security-admission's allowed values for the same checks (policy/check_*.go)."""
    assert restricted_violations(_set(compliant(), path, value)) == []
