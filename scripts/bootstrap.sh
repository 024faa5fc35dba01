#!/usr/bin/env bash
# Usage: scripts/bootstrap.sh --stack STACK [--github-repo OWNER/REPO] [--skip-identities] [--skip-cluster] [--no-approval] [--dry-run]
# (make bootstrap STACK=prod ARGS="--github-repo acme/tenancy")
# The one bootstrap path (docs/bootstrap.md): the state backend of PULUMI_BACKEND_URL, the KMS key
# the committed `secretsprovider` names, `pulumi stack init` with that URL for the stack and every
# shard, the CI identities per environment, the system pool check, the preview access on the
# stack's own cluster and the GitHub environments. Every step looks before it
# creates, so running it again changes nothing or finishes a run that failed. The steps are
# tools/operations/bootstrap.py.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

python="${PYTHON:-$ROOT/.venv/bin/python}"
[[ -x "$python" ]] || die "no virtualenv at $ROOT/.venv: run make plan (or set PYTHON)"
[[ " $* " == *" --dry-run "* ]] || "$ROOT/scripts/check-tools.sh" pulumi
export PULUMI_SKIP_UPDATE_CHECK=true
cd "$ROOT"
exec "$python" -m tools.operations.bootstrap "$@"
