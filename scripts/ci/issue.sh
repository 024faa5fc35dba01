#!/usr/bin/env bash
# Usage: scripts/ci/issue.sh TITLE BODY_FILE   (GH_TOKEN, GITHUB_REPOSITORY from the workflow)
# Comment on the open issue titled TITLE, or open one: a daily report adds to one thread per kind
# (drift, failed check) instead of a new issue every morning.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

[[ $# -eq 2 ]] || die "usage: scripts/ci/issue.sh TITLE BODY_FILE"
title="$1"
body="$2"
[[ -f "$body" ]] || die "no body file $body"
[[ -n "${GITHUB_REPOSITORY:-}" ]] || die "GITHUB_REPOSITORY is not set"
need gh
number="$(gh issue list --repo "$GITHUB_REPOSITORY" --state open --search "in:title \"$title\"" --json number,title \
  --jq ".[] | select(.title == \"$title\") | .number" | head -n 1)"
if [[ -n "$number" ]]; then
  gh issue comment "$number" --repo "$GITHUB_REPOSITORY" --body-file "$body"
else
  gh issue create --repo "$GITHUB_REPOSITORY" --title "$title" --body-file "$body"
fi
