#!/usr/bin/env bash
# e2e step 7: a second preview of the converged dev stack must show no change (a no-op is a no-op).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/../pulumi.sh" preview --expect-no-changes --diff "$@"
