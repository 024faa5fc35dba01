#!/usr/bin/env bash
# e2e step 6: reachability between tenant pods on the real CNI (kindnet enforces NetworkPolicy).
# A probe pod (the admitted case `pod-own-pool`, in tenant-acme-dev) and the example apps' pods
# (their image has busybox wget) try each other on port 8080: inside a namespace traffic flows;
# from one tenant to another, and between dev and prod, it does not.
# Rows: from-namespace  from(pod/NAME|deploy/NAME)  target  expect(open|closed); a target
# `pod:NS/APP` is the first pod IP of app APP (label app.kubernetes.io/name) in NS.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

PROBE="$ROOT/scripts/e2e/cases/pod-own-pool.yaml"
CHECKS="tenant-acme-dev pod/e2e-pod pod:tenant-acme-dev/worker open
tenant-acme-dev deploy/worker pod:tenant-acme-dev/e2e-probe open
tenant-acme-dev pod/e2e-pod http://status.tenant-status-page-prod.svc.cluster.local:8080/ closed
tenant-acme-dev pod/e2e-pod pod:tenant-acme-prod/worker closed
tenant-acme-prod deploy/worker pod:tenant-acme-dev/worker closed
tenant-status-page-prod deploy/status pod:tenant-acme-dev/worker closed"

need kubectl
pod_url() {
  local namespace="${1%%/*}" app="${1##*/}" ip
  ip="$(kubectl get pods -n "$namespace" -l "app.kubernetes.io/name=$app" -o jsonpath='{.items[0].status.podIP}')"
  [[ -n "$ip" ]] || die "no pod IP for app $app in $namespace"
  echo "http://$ip:8080/"
}

# The probe: a hardened pod on acme's pool, labelled so pod_url finds it.
kubectl create -f "$PROBE"
trap 'kubectl delete -f "$PROBE" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl label -n tenant-acme-dev pod/e2e-pod app.kubernetes.io/name=e2e-probe
kubectl wait --for=condition=Ready -n tenant-acme-dev pod/e2e-pod --timeout=180s

failures=0
while read -r namespace from target expect; do
  [[ -z "$namespace" ]] && continue
  url="$target"
  [[ "$target" == pod:* ]] && url="$(pod_url "${target#pod:}")"
  if kubectl exec -n "$namespace" "$from" -- wget -q -T 5 -O /dev/null "$url" >/dev/null 2>&1; then
    got=open
  else
    got=closed
  fi
  if [[ "$got" == "$expect" ]]; then status=ok; else status=FAIL; failures=$((failures + 1)); fi
  echo "$status $namespace/$from -> $target: $got (want $expect)"
done <<<"$CHECKS"
[[ $failures -eq 0 ]] || die "$failures reachability checks failed"
