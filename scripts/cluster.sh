#!/usr/bin/env bash
# Usage: scripts/cluster.sh [create|delete]   (make cluster / make cluster-delete)
# Create the kind cluster of kind/cluster.yaml (the dev stack's pools and Kubernetes version)
# unless it exists, and wait for its nodes; or delete it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

action="${1:-create}"
need docker kind kubectl
case "$action" in
  create)
    if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
      echo "kind cluster $CLUSTER_NAME exists"
    else
      kind create cluster --name "$CLUSTER_NAME" --config "$KIND_CONFIG" --wait 5m
    fi
    kubectl config use-context "kind-$CLUSTER_NAME"
    kubectl wait --for=condition=Ready nodes --all --timeout=300s
    ;;
  delete)
    kind delete cluster --name "$CLUSTER_NAME"
    ;;
  *)
    die "usage: scripts/cluster.sh [create|delete]"
    ;;
esac
