#!/usr/bin/env bash
# e2e step 3c: DNS works inside every virtual cluster. For each vcluster HelmRelease (chart
# `vcluster`), reach its API server through a port-forward with the kubeconfig the chart writes
# (Secret vc-<release>, key `config`, server https://localhost:8443), run a pod inside the virtual
# cluster that looks up the virtual cluster's own `kubernetes.default` Service, and require the
# answer. The pod meets the host namespace's restricted Pod Security (the syncer copies it there).
# Usage: scripts/e2e/vcluster-dns.sh [TIMEOUT]   (default 300s)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

timeout="${1:-300s}"
port="${VCLUSTER_PORT:-18443}"
image="${DNS_IMAGE:-busybox:1.36.1}"
need kubectl
releases="$(kubectl get helmreleases.helm.toolkit.fluxcd.io -A \
  -o jsonpath='{range .items[?(@.spec.chart.spec.chart=="vcluster")]}{.metadata.namespace} {.spec.releaseName}{"\n"}{end}')"
[[ -n "$releases" ]] || die "no vcluster HelmRelease: the dev stack renders one for operator-lab"
scratch="$(mktemp -d)"
forward=""
cleanup() {
  [[ -n "$forward" ]] && kill "$forward" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT
overrides='{"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":65534,"seccompProfile":{"type":"RuntimeDefault"}},"containers":[{"name":"dns","image":"'"$image"'","command":["nslookup","kubernetes.default.svc.cluster.local"],"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}'
while read -r namespace release; do
  [[ -n "$namespace" ]] || continue
  echo "virtual cluster $namespace/$release: DNS"
  kubeconfig="$scratch/$namespace-$release.yaml"
  kubectl get secret "vc-$release" -n "$namespace" -o jsonpath='{.data.config}' | base64 -d >"$kubeconfig"
  [[ -s "$kubeconfig" ]] || die "$namespace: no kubeconfig in Secret vc-$release"
  kubectl port-forward -n "$namespace" "svc/$release" "$port:443" >/dev/null 2>&1 &
  forward=$!
  vkubectl=(kubectl --kubeconfig "$kubeconfig" --server "https://localhost:$port")
  for _ in $(seq 1 30); do
    "${vkubectl[@]}" get --raw /readyz >/dev/null 2>&1 && break
    sleep 2
  done
  "${vkubectl[@]}" run dns-check --namespace default --image "$image" --restart Never --overrides "$overrides"
  if ! "${vkubectl[@]}" wait --for=jsonpath='{.status.phase}'=Succeeded pod/dns-check --namespace default --timeout="$timeout"; then
    "${vkubectl[@]}" logs dns-check --namespace default >&2 || true
    die "$namespace/$release: the lookup of kubernetes.default inside the virtual cluster failed"
  fi
  "${vkubectl[@]}" logs dns-check --namespace default
  "${vkubectl[@]}" delete pod dns-check --namespace default --wait=false
  kill "$forward" 2>/dev/null || true
  forward=""
done <<<"$releases"
