"""The object counts of the `small` quota tier, below both the stack settings and the quota budget.

The stack settings build their default tiers from these counts and the quota budget completes
quotas with them (quota_budget.PLATFORM_CAPS); keeping them here lets the settings model use them
without importing the budget, which reads the settings (no import cycle: tests/test_layout.py).
"""

from __future__ import annotations

# Object counts of the `small` tier for every namespaced kind a tenant role may create
# (components/platform/roles.py; tests/guardrails/test_quota_budget.py keeps the two in step).
# pods, services, secrets, configmaps and persistentvolumeclaims have their own quota names.
SMALL_OBJECT_COUNTS: dict[str, int] = {
    "pods": 20,
    "services": 20,
    "persistentvolumeclaims": 20,
    "secrets": 100,
    "configmaps": 100,
    "count/endpoints": 20,
    "count/serviceaccounts": 20,
    "count/deployments.apps": 20,
    "count/statefulsets.apps": 10,
    # A Deployment keeps up to 10 old ReplicaSets for rollback.
    "count/replicasets.apps": 200,
    "count/jobs.batch": 50,
    "count/cronjobs.batch": 10,
    "count/horizontalpodautoscalers.autoscaling": 20,
    "count/poddisruptionbudgets.policy": 20,
    "count/ingresses.networking.k8s.io": 20,
    "count/networkpolicies.networking.k8s.io": 20,
    "count/httproutes.gateway.networking.k8s.io": 20,
    "count/grpcroutes.gateway.networking.k8s.io": 20,
    "count/tlsroutes.gateway.networking.k8s.io": 20,
    "count/listenersets.gateway.networking.k8s.io": 10,
    "count/certificates.cert-manager.io": 20,
    "count/externalsecrets.external-secrets.io": 50,
    "count/helmreleases.helm.toolkit.fluxcd.io": 20,
    "count/helmrepositories.source.toolkit.fluxcd.io": 10,
    "count/ocirepositories.source.toolkit.fluxcd.io": 20,
}
