#!/usr/bin/env bash
# e2e step 6: reachability between tenant pods on the real CNI (kindnet enforces NetworkPolicy).
# From inside running tenant pods (the example apps' image has busybox wget): traffic inside a
# namespace is allowed; from one tenant to another, and from dev to prod, it is not.
# Rows: from-namespace  from-deployment  target  expect(open|closed); a target `pod:NS/DEPLOY`
# is that deployment's first pod IP on port 8080.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CHECKS="tenant-status-page-prod status http://status.tenant-status-page-prod.svc.cluster.local:8080/ open
tenant-acme-dev worker http://status.tenant-status-page-prod.svc.cluster.local:8080/ closed
tenant-acme-dev worker pod:tenant-acme-prod/worker closed
tenant-acme-prod worker pod:tenant-acme-dev/worker closed
tenant-status-page-prod status pod:tenant-acme-dev/worker closed"

need kubectl
pod_url() {
  local namespace="${1%%/*}" deployment="${1##*/}" ip
  ip="$(kubectl get pods -n "$namespace" -l "app.kubernetes.io/name=$deployment" -o jsonpath='{.items[0].status.podIP}')"
  [[ -n "$ip" ]] || die "no pod IP for $namespace/$deployment"
  echo "http://$ip:8080/"
}

failures=0
while read -r namespace deployment target expect; do
  [[ -z "$namespace" ]] && continue
  url="$target"
  [[ "$target" == pod:* ]] && url="$(pod_url "${target#pod:}")"
  if kubectl exec -n "$namespace" "deploy/$deployment" -- wget -q -T 5 -O /dev/null "$url" >/dev/null 2>&1; then
    got=open
  else
    got=closed
  fi
  if [[ "$got" == "$expect" ]]; then status=ok; else status=FAIL; failures=$((failures + 1)); fi
  echo "$status $namespace/$deployment -> $target: $got (want $expect)"
done <<<"$CHECKS"
[[ $failures -eq 0 ]] || die "$failures reachability checks failed"
