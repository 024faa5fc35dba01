"""The data plane's binaries: the kubelet and agnhost from the real run's Kubernetes module, and the
NetworkPolicy enforcer, kube-network-policies, from its own pinned module (realrun/netpol/go.mod)."""

from __future__ import annotations

from tools.realrun.binary import Binary, kubernetes_ldflags, kubernetes_version_pattern


def binaries() -> list[Binary]:
    """Built after the control plane's binaries; the kubelet and agnhost share its module and cache."""
    kube = kubernetes_ldflags()
    return [
        Binary(
            "kubelet", "kubernetes", "k8s.io/kubernetes/cmd/kubelet", kube, version_pattern=kubernetes_version_pattern()
        ),
        # The probes' only image: `netexec` serves each probed port and dials on request (/dial).
        # Static (no cgo): it runs alone in its image (images.py).
        Binary("agnhost", "kubernetes", "k8s.io/kubernetes/test/images/agnhost", kube, env=(("CGO_ENABLED", "0"),)),
        # v0.8.0 unmodified: its verdicts are made by its own code; what the kernel here lacks (the
        # nftables `queue` expression) the run supplies with iptables NFQUEUE rules (enforcer.py).
        Binary("kube-network-policies", "netpol", "sigs.k8s.io/kube-network-policies/cmd"),
    ]
