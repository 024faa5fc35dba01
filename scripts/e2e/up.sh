#!/usr/bin/env bash
# e2e step 2: `pulumi up` of the dev stack on the kind cluster, file backend, passphrase secrets,
# no prompt. Extra arguments go to pulumi (for example --config tenancy:tenantsDir=DIR).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/../pulumi.sh" up --yes --skip-preview "$@"
