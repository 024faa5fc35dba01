#!/usr/bin/env bash
# Usage: scripts/pulumi.sh COMMAND [ARGS...]   (make preview / make up: STACK, default dev)
# Run a Pulumi command against STACK: check the CLI, log in to the stack's backend (dev: a file
# backend in .pulumi-state, secrets under a passphrase), select the stack (creating dev), run.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -gt 0 ]] || die "usage: scripts/pulumi.sh preview|up|destroy|refresh [ARGS...]"
command="$1"
shift
case "$command" in
  preview | up | destroy | refresh) ;;
  *) die "unknown command $command (preview, up, destroy, refresh)" ;;
esac
"$ROOT/scripts/check-tools.sh" pulumi
pulumi_env
cd "$ROOT"
pulumi login "$PULUMI_BACKEND_URL" >/dev/null
if [[ "$STACK" == "dev" ]]; then
  pulumi stack select --create --secrets-provider passphrase "$STACK"
else
  pulumi stack select "$STACK"
fi
# The policy pack runs on every preview and up, as in CI (docs/ci.md): nothing that breaks a
# tenant invariant is applied, here either.
extra=()
[[ "$command" == preview || "$command" == up ]] && extra=(--policy-pack policy_pack)
if [[ "$STACK" == dev && "$command" != refresh ]]; then
  need kubectl
  # The stack applies to the context Pulumi.dev.yaml names (tenancy:cluster.context), never the
  # current one; the checks here look at that same cluster.
  context="kind-$CLUSTER_NAME"
  kubectl config get-contexts "$context" >/dev/null 2>&1 || die "no kubeconfig context $context: create the cluster first (make cluster)"
  # On a fresh cluster the custom resources of the operators the stack installs (CloudNativePG,
  # MariaDB, Flux) have no CRDs yet, so their preview cannot be computed: the first up skips it.
  if [[ "$command" == up && " $* " != *" --skip-preview "* ]] && ! kubectl --context "$context" get crd clusters.postgresql.cnpg.io >/dev/null 2>&1; then
    echo "note: a fresh cluster (no CloudNativePG CRD yet): the first up skips the preview" >&2
    extra+=(--skip-preview)
  fi
fi
# The engine settings CI runs this command with (tools/ci/engine_settings.py: the Go collector's
# pace; previews without per-step checkpoints), so `make preview` costs what a pull request's
# preview costs. A variable already set in the environment keeps its value.
settings="$("$PYTHON" -m tools.ci.engine_settings "$command")"
while IFS= read -r setting; do
  if [[ -n "$setting" ]]; then export "${setting?}"; fi
done <<<"$settings"
pulumi "$command" --stack "$STACK" "${extra[@]}" "$@"
