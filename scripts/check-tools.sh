#!/usr/bin/env bash
# Usage: scripts/check-tools.sh TOOL...
# Exit 1 naming every missing tool and how to install it; warn when the Pulumi CLI is not the
# version the project pins (requirements.txt).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -gt 0 ]] || die "usage: scripts/check-tools.sh TOOL..."
need "$@"
for tool in "$@"; do
  if [[ "$tool" == "pulumi" ]]; then
    have="$(pulumi version 2>/dev/null | tr -d 'v\r')"
    if [[ "$have" != "$(pulumi_version)" ]]; then
      echo "warning: pulumi $have; the project pins $(pulumi_version): $(install_hint pulumi)" >&2
    fi
  fi
  if [[ "$tool" == "docker" ]] && ! docker info >/dev/null 2>&1; then
    die "docker is installed but not running (or this user may not use it)"
  fi
done
