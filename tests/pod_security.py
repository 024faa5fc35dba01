"""Pod Security Standards `restricted` (latest), evaluated offline on a pod the way the API server's
PodSecurity admission plugin does, for tests that must know whether a pod would be admitted.

Follows k8s.io/pod-security-admission (kubernetes/kubernetes v1.36,
staging/src/k8s.io/pod-security-admission/policy/check_*.go): every baseline check plus the
restricted ones. A pod is judged by its spec after the API server's defaulting (nothing PodSecurity
reads is defaulted). Windows pods (spec.os.name windows) are out of scope here: no fixture has one.
Not modelled: the relaxed runAsNonRoot / runAsUser checks for `hostUsers: false` pods, which apply
only with the UserNamespacesPodSecurityStandards feature gate (off by default); this checker is
stricter there, never more lenient.

Baseline: hostNetwork/hostPID/hostIPC (check_hostNamespaces.go), privileged (check_privileged.go),
added capabilities beyond the baseline set (check_capabilities_baseline.go), hostPath volumes
(check_hostPathVolumes.go), hostPorts (check_hostPorts.go), AppArmor Unconfined
(check_appArmorProfile.go), SELinux type/user/role (check_seLinuxOptions.go), procMount
(check_procMount.go), seccomp Unconfined (check_seccompProfile_baseline.go), unsafe sysctls
(check_sysctls.go), Windows HostProcess on the pod or any container, whatever `spec.os`
(check_windowsHostProcess.go), the AppArmor annotations `container.apparmor.security.beta.kubernetes.io/*`
other than `runtime/default` / `localhost/*` (check_appArmorProfile.go, beside the fields), and a
`host` in an httpGet / tcpSocket probe or lifecycle handler (check_hostProbesAndhostLifecycle.go,
1.34+).
Restricted: volume types (check_restrictedVolumes.go), allowPrivilegeEscalation false
(check_allowPrivilegeEscalation.go), runAsNonRoot (check_runAsNonRoot.go), runAsUser not 0
(check_runAsUser.go), seccomp RuntimeDefault or Localhost (check_seccompProfile_restricted.go),
drop ALL and add nothing but NET_BIND_SERVICE (check_capabilities_restricted.go).
"""

from __future__ import annotations

from typing import Any

_BASELINE_CAPABILITIES = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}
_SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
_SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
}
_RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}
_VOLUME_NAME_KEYS = {"name"}
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HANDLERS = ("postStart", "preStop")


def _handler_hosts(handler: dict[str, Any] | None) -> list[str]:
    """The `host` of a probe's or lifecycle handler's httpGet / tcpSocket, when set."""
    handler = handler or {}
    return [h for action in ("httpGet", "tcpSocket") if (h := (handler.get(action) or {}).get("host"))]


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for field in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(field) or []]


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """Why Pod Security `restricted` would refuse this pod (empty: admitted). Each entry names the
    check and the container or field at fault, as the plugin's forbidden reasons do."""
    spec = pod.get("spec") or {}
    pod_context = spec.get("securityContext") or {}
    containers = _containers(spec)
    found: list[str] = []

    def context(container: dict[str, Any]) -> dict[str, Any]:
        return container.get("securityContext") or {}

    # --- baseline
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            found.append(f"host namespaces: {field}=true")
    for c in containers:
        sc = context(c)
        if sc.get("privileged"):
            found.append(f"privileged: container {c['name']}")
        added = set((sc.get("capabilities") or {}).get("add") or [])
        if added - _BASELINE_CAPABILITIES:
            found.append(
                f"non-default capabilities: container {c['name']} adds {sorted(added - _BASELINE_CAPABILITIES)}"
            )
        if any(p.get("hostPort") for p in c.get("ports") or []):
            found.append(f"hostPort: container {c['name']}")
        if sc.get("procMount") not in (None, "Default"):
            found.append(f"procMount: container {c['name']}")
        hosts = [h for probe in _PROBES for h in _handler_hosts(c.get(probe))]
        hosts += [h for handler in _HANDLERS for h in _handler_hosts((c.get("lifecycle") or {}).get(handler))]
        if hosts:
            found.append(f"probe or lifecycle host: container {c['name']} uses {hosts}")
    for volume in spec.get("volumes") or []:
        if "hostPath" in volume:
            found.append(f"hostPath volumes: {volume['name']}")
        kinds = set(volume) - _VOLUME_NAME_KEYS
        if kinds and not kinds <= _RESTRICTED_VOLUMES:
            found.append(f"restricted volume types: {volume['name']} is {sorted(kinds - _RESTRICTED_VOLUMES)}")
    for who, sc in [("pod", pod_context), *[(f"container {c['name']}", context(c)) for c in containers]]:
        if (sc.get("appArmorProfile") or {}).get("type") == "Unconfined":
            found.append(f"appArmorProfile: {who} is Unconfined")
        selinux = sc.get("seLinuxOptions") or {}
        if selinux.get("type", "") not in _SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
            found.append(f"seLinuxOptions: {who}")
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            found.append(f"seccompProfile: {who} is Unconfined")
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            found.append(f"hostProcess: {who} sets windowsOptions.hostProcess")
    for key, value in ((pod.get("metadata") or {}).get("annotations") or {}).items():
        if (
            key.startswith(_APPARMOR_ANNOTATION)
            and value
            and value != "runtime/default"
            and not value.startswith("localhost/")
        ):
            found.append(f"forbidden AppArmor profile: {key}={value!r}")
    for sysctl in pod_context.get("sysctls") or []:
        if sysctl.get("name") not in _SAFE_SYSCTLS:
            found.append(f"forbidden sysctls: {sysctl.get('name')}")

    # --- restricted
    for c in containers:
        sc = context(c)
        if sc.get("allowPrivilegeEscalation") is not False:
            found.append(f"allowPrivilegeEscalation != false: container {c['name']} must set it to false")
        capabilities = sc.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            found.append(f"unrestricted capabilities: container {c['name']} must drop ALL")
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            found.append(f"unrestricted capabilities: container {c['name']} adds more than NET_BIND_SERVICE")
    pod_non_root = pod_context.get("runAsNonRoot")
    if pod_non_root is False or any(context(c).get("runAsNonRoot") is False for c in containers):
        found.append("runAsNonRoot != true: set to false")
    elif pod_non_root is not True:
        unset = [c["name"] for c in containers if context(c).get("runAsNonRoot") is not True]
        if unset:
            found.append(f"runAsNonRoot != true: pod or containers {unset} must set it")
    if pod_context.get("runAsUser") == 0 or any(context(c).get("runAsUser") == 0 for c in containers):
        found.append("runAsUser=0")
    pod_seccomp = (pod_context.get("seccompProfile") or {}).get("type")
    if pod_seccomp not in ("RuntimeDefault", "Localhost"):
        unset = [
            c["name"]
            for c in containers
            if (context(c).get("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost")
        ]
        if unset:
            found.append(f"seccompProfile: pod or containers {unset} must set RuntimeDefault or Localhost")
    return found
