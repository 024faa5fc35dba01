#!/usr/bin/env bash
# After a failed e2e step: what the cluster looks like (nodes, pods, recent events, Flux objects).
# Never fails itself: it only reports.
set -uo pipefail
kubectl get nodes -o wide
kubectl get pods -A -o wide
kubectl get events -A --sort-by=.lastTimestamp | tail -n 200
kubectl get helmreleases.helm.toolkit.fluxcd.io,kustomizations.kustomize.toolkit.fluxcd.io -A
exit 0
