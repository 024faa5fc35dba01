#!/usr/bin/env bash
# e2e step 3: every tenant namespace converges. Deployments Available and databases Ready
# (CloudNativePG Clusters, MariaDB servers) are required; Flux objects are listed here, and those
# from public sources are required by the next step (scripts/e2e/wait-flux.sh): the examples'
# other charts and Git repositories point at private sources that do not exist publicly.
# Usage: scripts/e2e/wait-tenants.sh [TIMEOUT]   (default 600s)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

timeout="${1:-600s}"
need kubectl
namespaces="$(kubectl get namespaces -l tenancy.io/tenant -o jsonpath='{.items[*].metadata.name}')"
[[ -n "$namespaces" ]] || die "no tenant namespaces (label tenancy.io/tenant): did pulumi up run?"
for namespace in $namespaces; do
  for kind in deployments clusters.postgresql.cnpg.io mariadbs.k8s.mariadb.com; do
    condition=Ready
    [[ "$kind" == "deployments" ]] && condition=Available
    if [[ -n "$(kubectl get "$kind" -n "$namespace" -o name 2>/dev/null)" ]]; then
      echo "waiting: $namespace $kind $condition"
      kubectl wait --for="condition=$condition" "$kind" --all -n "$namespace" --timeout="$timeout"
    fi
  done
done
kubectl get helmreleases.helm.toolkit.fluxcd.io,kustomizations.kustomize.toolkit.fluxcd.io -A 2>/dev/null || true
