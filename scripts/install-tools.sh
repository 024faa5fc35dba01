#!/usr/bin/env bash
# Usage: scripts/install-tools.sh TOOL...   (kind, pulumi)
# Install the pinned tools CI needs and print the directory each lands in (for PATH):
# kind at KIND_VERSION (scripts/lib.sh) with `go install`, checked against Go's checksum database;
# the Pulumi CLI at the SDK pin of requirements.txt with Pulumi's installer.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -gt 0 ]] || die "usage: scripts/install-tools.sh kind|pulumi..."
for tool in "$@"; do
  case "$tool" in
    kind)
      need go
      go install "sigs.k8s.io/kind@$KIND_VERSION"
      echo "$(go env GOPATH)/bin"
      ;;
    pulumi)
      need curl
      version="$(pulumi_version)"
      [[ -n "$version" ]] || die "no pulumi== pin in requirements.txt"
      curl -fsSL https://get.pulumi.com | sh -s -- --version "$version" >&2
      echo "$HOME/.pulumi/bin"
      ;;
    *)
      die "cannot install $tool (kind, pulumi); install it yourself: $(install_hint "$tool")"
      ;;
  esac
done
