#!/usr/bin/env bash
# Shared by scripts/*.sh and scripts/e2e/*.sh: the repository root, the pinned tool versions,
# tool checks that say what to install, and the dev stack's local backend. Source it; never run it.
# shellcheck disable=SC2034  # the variables are for the scripts that source this file

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK="${STACK:-dev}"
CLUSTER_NAME="${CLUSTER_NAME:-tenancy}"
KIND_CONFIG="${KIND_CONFIG:-$ROOT/kind/cluster.yaml}"
# The project's virtualenv (make creates it): tools that read the stack's settings run in it.
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
# kind release whose node images kind/cluster.yaml pins (kindest/node v1.36.1).
KIND_VERSION="v0.32.0"

die() {
  echo "error: $*" >&2
  exit 1
}

# The Pulumi CLI version: the SDK pin of requirements.txt, so CLI and SDK move together.
pulumi_version() {
  sed -n 's/^pulumi==\([0-9.]*\).*/\1/p' "$ROOT/requirements.txt"
}

install_hint() {
  case "$1" in
    pulumi) echo "curl -fsSL https://get.pulumi.com | sh -s -- --version $(pulumi_version)" ;;
    kind) echo "go install sigs.k8s.io/kind@$KIND_VERSION (or a release binary of kind $KIND_VERSION)" ;;
    docker) echo "Docker Engine or Docker Desktop, running (https://docs.docker.com/engine/install/)" ;;
    kubectl) echo "kubectl within one minor of Kubernetes 1.36 (https://kubernetes.io/docs/tasks/tools/)" ;;
    *) echo "see docs/runbooks/kind.md" ;;
  esac
}

# need TOOL...: every missing tool is named with how to install it, then exit 1.
need() {
  local missing=0 tool
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "missing: $tool; install: $(install_hint "$tool")" >&2
      missing=1
    fi
  done
  if [[ $missing -ne 0 ]]; then
    exit 1
  fi
  return 0
}

# The dev stack keeps its state in a file backend inside the checkout and its secrets under a
# passphrase; other stacks must say where theirs live (docs/runbooks/gke.md, eks.md).
pulumi_env() {
  if [[ "$STACK" == "dev" ]]; then
    export PULUMI_BACKEND_URL="${PULUMI_BACKEND_URL:-file://$ROOT/.pulumi-state}"
    # A throwaway passphrase for a throwaway cluster; set your own to keep the state elsewhere.
    export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE-tenancy-dev}"
  elif [[ -z "${PULUMI_BACKEND_URL:-}" ]]; then
    die "stack $STACK: set PULUMI_BACKEND_URL to its state backend (docs/runbooks/)"
  fi
  # A file backend's directory must exist before `pulumi login`.
  if [[ "$PULUMI_BACKEND_URL" == file://* ]]; then
    mkdir -p "${PULUMI_BACKEND_URL#file://}"
  fi
  export PULUMI_SKIP_UPDATE_CHECK=true
}
