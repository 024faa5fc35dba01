"""The virtual cluster's CoreDNS, as the chart writes it but with a pod the host admits.

The vCluster chart (v0.20.0, chart/templates/coredns-configmap.yaml) ships CoreDNS as manifests the
syncer applies inside the virtual cluster at startup (pkg/coredns/coredns.go); its Deployment's pod
is then synced to the host namespace like any virtual pod, and judged by the host's rules. The
chart hard-codes `imagePullPolicy: IfNotPresent` (the host's workload rule requires `Always` of
every pod in a tenant namespace) and sets the pod's seccomp profile only with
`policies.podSecurityStandard` (Pod Security `restricted` requires it). Neither is a value, so the
platform gives the chart the whole manifest (`controlPlane.coredns.overwriteManifests`): the chart's
own, unchanged but for those two fields. `{{.IMAGE}}` stays for the syncer to fill in (the CoreDNS
image for the virtual Kubernetes version, under `defaultImageRegistry`, as without an overwrite).
Without this CoreDNS is refused on the host and DNS inside every virtual cluster is dead.
"""

from __future__ import annotations

from typing import Any

import yaml

# What the syncer replaces with the CoreDNS image (pkg/coredns/coredns.go VarImage).
IMAGE_PLACEHOLDER = "{{.IMAGE}}"

# The chart's Corefile for the values the platform sets (chart/templates/_coredns.tpl: not embedded,
# `networking.advanced.proxyKubelets.byHostname` at its default true, no host fallback, no chart
# NetworkPolicy).
COREFILE = """.:1053 {
    errors
    health
    ready
    rewrite name regex .*\\.nodes\\.vcluster\\.com kubernetes.default.svc.cluster.local
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    hosts /etc/NodeHosts {
        ttl 60
        reload 15s
        fallthrough
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    loadbalance
}

import /etc/coredns/custom/*.server"""

_KUBE_SYSTEM = "kube-system"
_DNS_LABELS = {"k8s-app": "kube-dns"}


def _container(run_as: int, resources: dict[str, Any]) -> dict[str, Any]:
    """The chart's CoreDNS container, pulled Always."""
    return {
        "name": "coredns",
        "image": IMAGE_PLACEHOLDER,
        # The one change to the container: the host requires Always (components/admission/rules/workloads.py).
        "imagePullPolicy": "Always",
        "resources": resources,
        "args": ["-conf", "/etc/coredns/Corefile"],
        "volumeMounts": [
            {"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True},
            {"name": "custom-config-volume", "mountPath": "/etc/coredns/custom", "readOnly": True},
        ],
        # As the chart: the syncer fills RUN_AS_USER/GROUP with its own ids, which the platform sets.
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": run_as,
            "runAsGroup": run_as,
            "allowPrivilegeEscalation": False,
            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
        "livenessProbe": {
            "httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"},
            "initialDelaySeconds": 60,
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "readinessProbe": {
            "httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"},
            "initialDelaySeconds": 0,
            "periodSeconds": 2,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
    }


def _pod_spec(run_as: int, resources: dict[str, Any]) -> dict[str, Any]:
    """The chart's CoreDNS pod, with the seccomp profile the host requires."""
    return {
        "priorityClassName": "",
        "serviceAccountName": "coredns",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": _DNS_LABELS},
            }
        ],
        # The one change to the pod: what the chart writes with `policies.podSecurityStandard`.
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [_container(run_as, resources)],
        "dnsPolicy": "Default",
        "volumes": [
            {
                "name": "config-volume",
                "configMap": {
                    "name": "coredns",
                    "items": [{"key": "Corefile", "path": "Corefile"}, {"key": "NodeHosts", "path": "NodeHosts"}],
                },
            },
            {"name": "custom-config-volume", "configMap": {"name": "coredns-custom", "optional": True}},
        ],
    }


def _deployment(run_as: int, resources: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "coredns",
            "namespace": _KUBE_SYSTEM,
            "labels": {**_DNS_LABELS, "kubernetes.io/name": "CoreDNS"},
        },
        "spec": {
            "replicas": 1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "selector": {"matchLabels": _DNS_LABELS},
            "template": {"metadata": {"labels": _DNS_LABELS}, "spec": _pod_spec(run_as, resources)},
        },
    }


def coredns_documents(*, run_as: int, resources: dict[str, Any]) -> list[dict[str, Any]]:
    """The chart's CoreDNS objects (non-embedded) with the two fields above changed."""
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:coredns"}
    bootstrapping = {"kubernetes.io/bootstrapping": "rbac-defaults"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "coredns", "namespace": _KUBE_SYSTEM}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"labels": bootstrapping, "name": "system:coredns"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["endpoints", "services", "pods", "namespaces"],
                    "verbs": ["list", "watch"],
                },
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
                "labels": bootstrapping,
                "name": "system:coredns",
            },
            "roleRef": role_ref,
            "subjects": [{"kind": "ServiceAccount", "name": "coredns", "namespace": _KUBE_SYSTEM}],
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "coredns", "namespace": _KUBE_SYSTEM},
            "data": {"Corefile": COREFILE, "NodeHosts": ""},
        },
        _deployment(run_as, resources),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "kube-dns",
                "namespace": _KUBE_SYSTEM,
                "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"},
                "labels": {**_DNS_LABELS, "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
            },
            "spec": {
                "type": "ClusterIP",
                "selector": _DNS_LABELS,
                "ports": [
                    {"name": "dns", "port": 53, "targetPort": 1053, "protocol": "UDP"},
                    {"name": "dns-tcp", "port": 53, "targetPort": 1053, "protocol": "TCP"},
                    {"name": "metrics", "port": 9153, "protocol": "TCP"},
                ],
            },
        },
    ]


def coredns_manifests(*, run_as: int, resources: dict[str, Any]) -> str:
    """The documents as the multi-document YAML `controlPlane.coredns.overwriteManifests` takes."""
    return yaml.safe_dump_all(coredns_documents(run_as=run_as, resources=resources), sort_keys=False)
