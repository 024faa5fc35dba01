#!/usr/bin/env bash
# Usage: scripts/ci/bot-comment.sh PR MARKER BODY_FILE   (GH_TOKEN, GITHUB_REPOSITORY from the workflow)
# Edit this workflow's own comment on pull request PR whose body starts with MARKER, or add one.
# Only a comment the bot itself wrote is edited: anyone may post a comment starting with the marker,
# and editing theirs would let a pull request rewrite text shown under another person's name.
# The bot is the account GITHUB_TOKEN acts as (github-actions[bot], GitHub docs "Automatic token
# authentication"); override with COMMENT_BOT for another token.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

[[ $# -eq 3 ]] || die "usage: scripts/ci/bot-comment.sh PR MARKER BODY_FILE"
pr="$1"
marker="$2"
body="$3"
[[ "$pr" =~ ^[0-9]+$ ]] || die "bad pull request number: $pr"
[[ -f "$body" ]] || die "no body file $body"
[[ -n "${GITHUB_REPOSITORY:-}" ]] || die "GITHUB_REPOSITORY is not set"
need gh
bot="${COMMENT_BOT:-github-actions[bot]}"
id="$(gh api "repos/${GITHUB_REPOSITORY}/issues/${pr}/comments" --paginate \
  --jq ".[] | select(.user.login == \"${bot}\" and .user.type == \"Bot\" and (.body | startswith(\"${marker}\"))) | .id" \
  | head -n 1)"
if [[ -n "$id" ]]; then
  gh api -X PATCH "repos/${GITHUB_REPOSITORY}/issues/comments/${id}" -F "body=@${body}" > /dev/null
else
  gh api "repos/${GITHUB_REPOSITORY}/issues/${pr}/comments" -F "body=@${body}" > /dev/null
fi
