#!/usr/bin/env bash
# e2e step 8: offboard a tenant the documented two-step way and prove its data outlives it.
# 1. `lifecycle: decommissioned` in a copy of the tenant files, `pulumi up`: apps and guard rails
#    go, data is released (unprotected, retained on delete). 2. The file removed, `pulumi up`: the
#    tenant leaves Pulumi's state. Its databases (CloudNativePG Clusters, MariaDB servers) and
#    their volume claims must still be in the cluster, unchanged.
# Usage: scripts/e2e/decommission.sh [TENANT]   (default acme)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

tenant="${1:-acme}"
need kubectl
[[ -f "$ROOT/tenants/$tenant.yaml" ]] || die "no tenant file tenants/$tenant.yaml"
workdir="$(mktemp -d)"
trap 'rm -rf "$workdir"' EXIT
cp "$ROOT"/tenants/*.yaml "$workdir/"
data_kinds=clusters.postgresql.cnpg.io,mariadbs.k8s.mariadb.com,persistentvolumeclaims
# On a local cluster the data lives in the tenant's namespaces, which are kept with it.
namespaces="$(kubectl get namespaces -l "tenancy.io/tenant=$tenant" -o jsonpath='{.items[*].metadata.name}')"
[[ -n "$namespaces" ]] || die "tenant $tenant has no namespaces"
data_of() {
  local namespace
  for namespace in $namespaces; do
    kubectl get "$data_kinds" -n "$namespace" -o name 2>/dev/null | sed "s|^|$namespace/|"
  done | sort
}
before="$(data_of)"
[[ -n "$before" ]] || die "tenant $tenant has no data in the cluster to retain"

printf '\nlifecycle: decommissioned\n' >>"$workdir/$tenant.yaml"
"$ROOT/scripts/e2e/up.sh" --config "tenancy:tenantsDir=$workdir"
rm "$workdir/$tenant.yaml"
"$ROOT/scripts/e2e/up.sh" --config "tenancy:tenantsDir=$workdir"

after="$(data_of)"
if [[ "$after" != "$before" ]]; then
  echo "before:" "$before" >&2
  echo "after:" "$after" >&2
  die "tenant $tenant's data did not survive its removal"
fi
echo "ok: $tenant removed from the stack; its data is retained:"
echo "$after"
