#!/usr/bin/env bash
# e2e step 1: the kind cluster of kind/cluster.yaml (same as `make cluster`).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/../cluster.sh" create
