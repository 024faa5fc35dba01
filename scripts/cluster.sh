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
    # kind/cluster.yaml follows the dev stack's pools and version (tenancy kind-config).
    "$PYTHON" -m tools.generators.kind_config --write >/dev/null
    # kind's Docker network carries the API server address the dev stack opens to CloudNativePG
    # (tenancy:network.apiServer.cidrs): create it with that subnet, or check the one there.
    subnet="$("$PYTHON" -m tools.generators.kind_config --subnet)"
    if ! docker network inspect kind >/dev/null 2>&1; then
      docker network create kind --driver bridge --subnet "$subnet" \
        -o com.docker.network.bridge.enable_ip_masquerade=true -o com.docker.network.driver.mtu=1500 >/dev/null
    fi
    current="$(docker network inspect kind --format '{{range .IPAM.Config}}{{.Subnet}} {{end}}')"
    current="${current% }"
    [[ " $current " == *" $subnet "* ]] || die "Docker network kind has subnet(s) $current, not $subnet: set tenancy:network.apiServer.cidrs in Pulumi.dev.yaml to it, or remove the network (docker network rm kind) when no kind cluster uses it"
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
