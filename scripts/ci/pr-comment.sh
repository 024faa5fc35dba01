#!/usr/bin/env bash
# Usage: scripts/ci/pr-comment.sh DIR   (GH_TOKEN, GITHUB_REPOSITORY, HEAD_SHA, HEAD_BRANCH, HEAD_REPO)
# Post the plan diff a finished `pull request` run left in DIR (pr-number, body.md) on its pull
# request. The artifact was written by that run's code, which may be a fork's: its number is a
# claim, not a fact. It is believed only when the pull request it names has, right now, the head
# commit, branch and repository of the run (HEAD_* from the workflow_run event, which GitHub writes,
# not the fork); otherwise nothing is posted. A pull request pushed again since has another head
# is skipped: its own newer run posts. A number naming another branch or repository fails the job.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

[[ $# -eq 1 ]] || die "usage: scripts/ci/pr-comment.sh DIR"
dir="$1"
for name in HEAD_SHA HEAD_BRANCH HEAD_REPO GITHUB_REPOSITORY; do
  [[ -n "${!name:-}" ]] || die "$name is not set"
done
need gh
pr="$(head -c 16 "$dir/pr-number" | tr -d '\n')"
# Untrusted input: a number and Markdown, nothing else.
[[ "$pr" =~ ^[0-9]+$ ]] || die "bad pull request number in the artifact"
head -c 60000 "$dir/body.md" > "$dir/body.cut.md"
read -r sha branch repo < <(gh api "repos/${GITHUB_REPOSITORY}/pulls/${pr}" \
  --jq '[.head.sha, .head.ref, (.head.repo.full_name // "-")] | join(" ")')
if [[ "$branch" != "$HEAD_BRANCH" || "$repo" != "$HEAD_REPO" ]]; then
  echo "::error::the artifact names pull request #${pr} (${repo}:${branch}), not the run's ${HEAD_REPO}:${HEAD_BRANCH}: not posting"
  exit 1
fi
if [[ "$sha" != "$HEAD_SHA" ]]; then
  echo "::notice::pull request #${pr} moved to ${sha} since the run for ${HEAD_SHA}: its newer run posts"
  exit 0
fi
exec "$(dirname "${BASH_SOURCE[0]}")/bot-comment.sh" "$pr" "<!-- tenancy-plan-diff -->" "$dir/body.cut.md"
