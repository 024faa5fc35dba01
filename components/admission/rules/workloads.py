"""Rule 4, workload hardening: defence in depth beside Pod Security Admission `restricted`.

PSA labels are one namespace label away from being relaxed; these checks live in a cluster-wide
policy the tenant cannot touch. No privileged containers, host namespaces, hostPath volumes or
host ports; no added capability but NET_BIND_SERVICE; allowPrivilegeEscalation set to false;
every container (init containers included) with a memory limit; by default every container
pulling with `imagePullPolicy: Always` (MTB-PL1-CC-DI-1). Admission runs mutating plugins
(LimitRanger) before validating policies, so a container without a limit of its own gets the
namespace's LimitRange default first and only fails here when no default applies. Optionally,
images come from an allow-list of registries (stack config).
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    Validation,
    Variable,
    literal_list,
    quantity_is_zero,
    resource_rule,
)

_SPEC = "object.spec"
# A memory limit of zero in any spelling is no limit (kubelet pkg/kubelet/kuberuntime/
# kuberuntime_container_linux.go calculateLinuxResources: `if memLimit != 0 {...}`).
_ZERO_MEMORY = quantity_is_zero("c.resources.limits['memory']")
# The volume types Pod Security `restricted` allows: claims, ephemeral storage and projected data.
_CLAIM_OR_EPHEMERAL = (
    "persistentVolumeClaim",
    "ephemeral",
    "emptyDir",
    "configMap",
    "secret",
    "projected",
    "downwardAPI",
    "csi",
)


# Issue 43: `image` volumes (an OCI artifact or image mounted read-only; on by default from 1.35,
# allowed by Pod Security `restricted`) are pulled like a container image, so they are held to the
# same registry and pull rules (`pullPolicy` is defaulted before admission: Always for `:latest`,
# IfNotPresent otherwise; k8s.io/kubernetes v1.36.3 pkg/apis/core/v1/defaults.go SetDefaults_Volume).
_IMAGE_VOLUMES = f"(has({_SPEC}.volumes) ? {_SPEC}.volumes.filter(v, has(v.image)) : [])"


def _containers(*fields: str) -> str:
    return " + ".join(f"(has({_SPEC}.{f}) ? {_SPEC}.{f} : [])" for f in fields)


def _names(variable: str, condition: str, value: str = "c.name") -> Variable:
    return {"name": variable, "expression": f"variables.containers.filter(c, {condition}).map(c, {value})"}


def _none(variable: str, what: str) -> Validation:
    return {
        "expression": f"size(variables.{variable}) == 0",
        "message_expression": f"'container ' + variables.{variable}[0] + ' {what}'",
        "reason": "Forbidden",
    }


def _variables() -> list[Variable]:
    """Per check, the names of the offending containers (or volumes); empty when the pod passes."""
    security = "has(c.securityContext)"
    return [
        TENANT_VARIABLE,
        {"name": "containers", "expression": _containers("containers", "initContainers", "ephemeralContainers")},
        _names("privileged", f"{security} && has(c.securityContext.privileged) && c.securityContext.privileged"),
        _names(
            "escalating",
            f"!{security} || !has(c.securityContext.allowPrivilegeEscalation)"
            " || c.securityContext.allowPrivilegeEscalation",
        ),
        _names(
            "capabilities",
            f"{security} && has(c.securityContext.capabilities) && has(c.securityContext.capabilities.add)"
            " && c.securityContext.capabilities.add.exists(a, a != 'NET_BIND_SERVICE')",
        ),
        _names("hostPorts", "has(c.ports) && c.ports.exists(p, has(p.hostPort) && p.hostPort != 0)"),
        {
            # Ephemeral (debug) containers cannot have resources, so they are left out here.
            "name": "unlimited",
            "expression": f"({_containers('containers', 'initContainers')}).filter(c, !has(c.resources)"
            " || !has(c.resources.limits) || !('memory' in c.resources.limits)"
            f" || {_ZERO_MEMORY}).map(c, c.name)",
        },
        {
            # Storage comes through claims (MTB "require PersistentVolumeClaim for storage"): the
            # volume types Pod Security `restricted` allows, checked here too; hostPath has its own.
            "name": "directVolumes",
            "expression": f"has({_SPEC}.volumes) ? {_SPEC}.volumes.filter(v, !has(v.hostPath) && !has(v.image)"
            f" && !({' || '.join(f'has(v.{kind})' for kind in _CLAIM_OR_EPHEMERAL)})).map(v, v.name) : []",
        },
        {
            "name": "hostPaths",
            "expression": f"has({_SPEC}.volumes) ? {_SPEC}.volumes.filter(v, has(v.hostPath)).map(v, v.name) : []",
        },
    ]


def _validations() -> list[Validation]:
    """One denial per check, naming the first offender so the author knows what to fix."""
    return [
        _none("privileged", "is privileged; privileged containers are not allowed"),
        _none("escalating", "must set securityContext.allowPrivilegeEscalation: false"),
        _none("capabilities", "adds capabilities other than NET_BIND_SERVICE"),
        _none("hostPorts", "uses a hostPort; expose it through a Service instead"),
        _none("unlimited", "has no memory limit (and the namespace LimitRange gave it none)"),
        {
            "expression": "size(variables.directVolumes) == 0",
            "message_expression": "'volume ' + variables.directVolumes[0] + ' mounts storage directly; use a "
            "PersistentVolumeClaim (or an ephemeral volume) instead'",
            "reason": "Forbidden",
        },
        {
            "expression": "size(variables.hostPaths) == 0",
            "message_expression": "'volume ' + variables.hostPaths[0] + ' is a hostPath; hostPath volumes are not "
            "allowed'",
            "reason": "Forbidden",
        },
        {
            "expression": (
                f"!(has({_SPEC}.hostNetwork) && {_SPEC}.hostNetwork) && !(has({_SPEC}.hostPID) && {_SPEC}.hostPID)"
                f" && !(has({_SPEC}.hostIPC) && {_SPEC}.hostIPC)"
            ),
            "message": "pods may not use the host's network, PID or IPC namespace",
            "reason": "Forbidden",
        },
    ]


def _registry_check(allowed_registries: list[str]) -> tuple[Variable, Validation]:
    """The optional allow-list of image registries: the containers whose image is from elsewhere.

    Each entry is a prefix ending at a path boundary: `ghcr.io/example` allows
    `ghcr.io/example/app:1.0` but not `ghcr.io/example-evil/app`.
    """
    registries = literal_list(allowed_registries)
    foreign = f"!{registries}.exists(r, i.startsWith(r + '/'))"
    variable: Variable = {
        "name": "foreignImages",
        "expression": f"(variables.containers.map(c, c.image) + {_IMAGE_VOLUMES}.map(v, has(v.image.reference)"
        f" ? v.image.reference : '')).filter(i, {foreign})",
    }
    validation: Validation = {
        "expression": "size(variables.foreignImages) == 0",
        "message_expression": f"'image ' + variables.foreignImages[0] + ' is not from an allowed registry ('"
        f" + {registries}.join(', ') + ')'",
        "reason": "Forbidden",
    }
    return variable, validation


def _always_pull_check() -> tuple[Variable, Validation]:
    """The containers that may start from an image already on the node without a registry check.

    The API server defaults `imagePullPolicy` before admission (`IfNotPresent` for a tagged
    image), so a container that leaves it out is caught here too, with the fix in the message.
    """
    variable: Variable = {
        "name": "cachedPulls",
        "expression": "variables.containers.filter(c, !has(c.imagePullPolicy) || c.imagePullPolicy != 'Always')"
        f".map(c, 'container ' + c.name + ' must set imagePullPolicy') + {_IMAGE_VOLUMES}.filter(v,"
        " !has(v.image.pullPolicy) || v.image.pullPolicy != 'Always').map(v, 'image volume ' + v.name"
        " + ' must set pullPolicy')",
    }
    validation: Validation = {
        "expression": "size(variables.cachedPulls) == 0",
        "message_expression": "variables.cachedPulls[0] + ': Always (a cached image on a shared node is otherwise "
        "started without the registry checking credentials)'",
        "reason": "Forbidden",
    }
    return variable, validation


def policies(allowed_registries: list[str], require_always_pull: bool = True) -> list[PolicyDefinition]:
    """The workloads policy; with an allow-list of registries and always-pull, those checks too."""
    variables, validations = _variables(), _validations()
    if require_always_pull:
        variable, validation = _always_pull_check()
        variables.append(variable)
        validations.append(validation)
    if allowed_registries:
        variable, validation = _registry_check(allowed_registries)
        variables.append(variable)
        validations.append(validation)
    return [
        PolicyDefinition(
            name="tenancy-workloads",
            rule="workloads",
            # `kubectl debug` adds containers through the ephemeralcontainers subresource; `pods/resize`
            # keeps the containers' new resources (k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/
            # strategy.go dropNonResizeUpdates), a memory limit of 0 among them (issue 43).
            resource_rules=[
                resource_rule("", ["pods", "pods/ephemeralcontainers", "pods/resize"], ["CREATE", "UPDATE"])
            ],
            variables=variables,
            validations=validations,
        )
    ]
