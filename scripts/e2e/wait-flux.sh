#!/usr/bin/env bash
# e2e step 3b: every Flux object the program renders from a public source becomes Ready: the
# sources, then the HelmReleases and Kustomizations that use them (tenancy flux-public
# chooses them; the examples' private and made-up sources are left out). A HelmRelease whose chart
# refuses the rendered values never becomes Ready, and this step fails on it, showing why.
# Usage: scripts/e2e/wait-flux.sh [TIMEOUT]   (default 600s)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

timeout="${1:-600s}"
python="${PYTHON:-$ROOT/.venv/bin/python}"
need kubectl
resources="$(cd "$ROOT" && "$python" -c 'from tools.ci.flux_public import KUBECTL_RESOURCES; print(KUBECTL_RESOURCES)')"
objects="$(kubectl get "$resources" -A -o json)"
wanted="$(cd "$ROOT" && printf '%s' "$objects" | "$python" -m tools.ci.flux_public)"
[[ -n "$wanted" ]] || die "no Flux object with a public source: the dev stack renders the virtual clusters' chart repository (charts.loft.sh); did pulumi up run?"
while read -r resource namespace name; do
  echo "waiting: $namespace $resource/$name Ready"
  if ! kubectl wait --for=condition=Ready "$resource/$name" -n "$namespace" --timeout="$timeout"; then
    kubectl get "$resource/$name" -n "$namespace" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' >&2 || true
    die "$namespace $resource/$name is not Ready"
  fi
done <<<"$wanted"
